/* twofold/model.h — how a model written outside twofold describes itself (public, versioned).
 *
 * A model is one `tf_model_def`: what every kind shares (name, state, parameters, optional
 * derived parameters, physical initial conditions and observables) plus exactly one table of
 * operations for its kind.  Kinds differ in what the engine needs from them, so each gets a
 * small table of its own rather than one struct whose kind would be guessed from which
 * members are filled in.
 *
 * A plugin (a shared library given as `model.library`, or a C file given as `model.source`
 * that twofold compiles) lists its models with TWOFOLD_MODELS(...).  twofold reads the
 * exported ABI number before it touches any struct and refuses a library built against
 * another ABI.
 *
 * Growing by appending: tf_model_def and every table of operations begin with `size`, the
 * sizeof the struct the model was compiled with (write TF_MODEL_HEAD in the definition and
 * TF_OPS_SIZE(type) in each table).  New members are only ever appended, so a model compiled
 * against an older header of the same ABI keeps loading: the engine reads a member only where
 * the model's size covers it, and takes the rest as NULL or 0.  TWOFOLD_MODEL_ABI changes no
 * more.
 *
 * Conventions: the state has `dim` components; parameters reach every function as a dense
 * array `p` in the order of `params`; matrices are row-major.  They must be pure (no hidden
 * state): members run in any order, on any rank, and are repeated after a restart.
 *
 * Field callbacks (every function writing a vector field, a noise amplitude or a map's image)
 * return an int:
 *   0    the value is written;
 *   > 0  the state is outside the model's domain (e.g. a square root of a negative number):
 *        an integrator rejects its step and retries with a smaller one, as for a step that
 *        overflows; at a state the engine has already accepted (or for a map, which has no
 *        step to shrink) it ends the member as a failure;
 *   < 0  a fatal failure: the member ends with status `failed`, and the message the model's
 *        `failure(code)` gives for it (or "code N") is reported for that member.
 * An impact model's sticking field is one (tf_impact_ops.constrained_motion; its older
 * `constrained` returns the contact force and cannot refuse).  Jacobians, switching and
 * surface functions return their value as before: the engine evaluates them only where the
 * field was accepted. */
#ifndef TWOFOLD_MODEL_H
#define TWOFOLD_MODEL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The struct layout generation.  3 is the last incompatible one: since then members are
 * appended (with the size fields below telling the engine which a model has). */
#define TWOFOLD_MODEL_ABI 3

/* The first members of a tf_model_def and of a table of operations:
 *   const tf_model_def m = {TF_MODEL_HEAD, .name = ..., ...};
 *   static const tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs};  */
#define TF_MODEL_HEAD .size = sizeof(tf_model_def), .abi = TWOFOLD_MODEL_ABI
#define TF_OPS_SIZE(type) .size = sizeof(type)

#define TF_ERROR_MAX 2048

/* An error message, filled where the problem is understood (e.g. by prepare()).  `code` says
 * what kind of failure it is (the engine's tf_error_code); a model leaves it to the engine,
 * which names the config key a model's message is about.  It comes after msg, so that a model
 * compiled when tf_error was msg alone still writes its message in the same place. */
typedef struct tf_error {
  char msg[TF_ERROR_MAX];
  int code;
} tf_error;

/* For models: fill err and return -1, so that prepare() can `return tf_model_fail(...)`. */
static inline int tf_model_fail(tf_error *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return -1;
}

/* One parameter (or one physical initial condition). */
typedef struct tf_param {
  const char *name;
  double def;
  double min, max; /* inclusive bounds, checked on input */
  const char *doc;
  bool derived; /* a value of 0 means "derive it": prepare() fills it in */
} tf_param;

typedef enum tf_model_kind {
  TF_MODEL_FLOW = 1,        /* smooth ODE or SDE: dx = f dt + g dW */
  TF_MODEL_FILIPPOV = 2,    /* piecewise smooth: slip fields either side of Sigma = {h = 0} */
  TF_MODEL_CODIM2 = 3,      /* extended Filippov: Sigma = {H1 = H2 = 0}, e.g. 2-D dry friction */
  TF_MODEL_TWO_CONTACT = 4, /* a body with two frictional contacts */
  TF_MODEL_MAP = 5,         /* discrete map x -> F(x) */
  TF_MODEL_DEVS = 6,        /* dynamic ensemble of N elements following a 1-D map */
  TF_MODEL_IMPACT = 7,      /* free flight between impacts with reset maps (hybrid system) */
  TF_MODEL_SWITCHES = 8     /* Filippov with several switching functions (several contacts) */
} tf_model_kind;

/* A field: 0, > 0 outside the domain (retry smaller), < 0 fatal (see the top of this file). */
typedef int tf_field_fn(double t, const double *x, const double *p, double *dxdt);
typedef void tf_matrix_fn(double t, const double *x, const double *p, double *jac);

/* A field for `lanes` members side by side (integrator.lanes), structure of arrays: component
 * i of lane l is x[i * lanes + l] (dxdt likewise), lane l is at time t[l] and code[l] gets
 * what rhs would return for it.  Every lane's value must be rhs's bit for bit: the same
 * operations in the same order (the engine compiles with -ffp-contract=off; a model compiled
 * elsewhere must not contract either), so results never depend on which members share lanes.
 * A lane the engine does not use holds any finite or non-finite values; its result is ignored. */
typedef void tf_lane_field_fn(int lanes, const double *t, const double *x, const double *p,
                              double *dxdt, int *code);
/* The most lanes a lane field is called with (integrator.lanes: 4, 8 or 16). */
#define TF_LANES_MAX 16

/* A lanes field whose lanes each have their own parameters (a scan's points side by side):
 * as tf_lane_field_fn, with parameter j of lane l at p[j * lanes + l] (structure of arrays,
 * like the state). */
typedef void tf_lane_params_field_fn(int lanes, const double *t, const double *x, const double *p,
                                     double *dxdt, int *code);

/* TF_MODEL_FLOW. */
typedef struct tf_flow_ops {
  size_t size;                 /* TF_OPS_SIZE(tf_flow_ops) */
  tf_field_fn *rhs;            /* required: f(t, x) */
  tf_matrix_fn *jacobian;      /* optional: df/dx (dim x dim); finite differences if NULL */
  tf_field_fn *diffusion;      /* optional diagonal noise g_i(t, x) of dx_i = f_i dt + g_i dW_i */
  tf_field_fn *diffusion_dx;   /* optional dg_i/dx_i, for Milstein */
  tf_lane_field_fn *rhs_lanes; /* optional: rhs for several members side by side (below) */
  /* optional: jacobian for several members side by side, bit for bit jacobian lane by lane (the
   * rules of tf_lane_field_fn), entry (i, j) of lane l at jac[(i * dim + j) * lanes + l] */
  void (*jacobian_lanes)(int lanes, const double *t, const double *x, const double *p, double *jac);
} tf_flow_ops;

/* TF_MODEL_FILIPPOV.  Off Sigma the state follows slip(x, side) with side = sign h(x); slip is
 * also evaluated on Sigma as the limit from that side, and past it (side h(x) < 0) in the stages
 * of a step that crosses Sigma before the crossing is located: there a continuation as smooth as
 * the field (no kink on Sigma) saves rejected steps.  On Sigma the admissible fields are
 * stick(x, lambda), affine in lambda in [-1, 1] (NULL: Filippov's convex combination of the
 * two slip limits). */
typedef struct tf_filippov_ops {
  size_t size; /* TF_OPS_SIZE(tf_filippov_ops) */
  double (*switching)(const double *x, const double *p, double *grad /* dim, or NULL */);
  int (*slip)(double t, const double *x, int side, const double *p, double *dx);
  int (*stick)(double t, const double *x, double lambda, const double *p, double *dx);
  /* Optional: d slip / dx on one side (dim x dim), for exact tangent dynamics. */
  void (*slip_jacobian)(double t, const double *x, int side, const double *p, double *jac);
  /* Optional second switching function g splitting Sigma; where h = g = 0 the engine applies
   * the extended Filippov analysis (never crosses by rounding).  stick_side is stick with the
   * sign of g given, when stick depends on it. */
  double (*secondary_switching)(const double *x, const double *p, double *grad);
  int (*stick_side)(double t, const double *x, double lambda, int secondary_side, const double *p,
                    double *dx);
  /* Optional smoothing: the field with sign(h) replaced by lambda anywhere (terms nonlinear in
   * lambda allowed), its Jacobian at fixed lambda and d/dlambda. */
  int (*regularised)(double t, const double *x, double lambda, const double *p, double *dx);
  void (*regularised_jacobian)(double t, const double *x, double lambda, const double *p,
                               double *jac, double *dlambda);
  /* Optional: true if with these parameters the model is run as the smooth flow `smooth`
   * (its own regularisation, e.g. sign -> tanh(h / eps)). */
  bool (*smoothed)(const double *p);
  const tf_flow_ops *smooth;
  /* Optional: a point near which a two-fold is expected. */
  int (*twofold_guess)(const double *p, double *x);
  /* Optional, for members side by side (integrator.lanes): slip for every lane, bit for bit
   * slip lane by lane (the rules of tf_lane_field_fn), parameters in structure of arrays
   * (tf_lane_params_field_fn) and lane l's side (+1 or -1) after them, at p[nparams * lanes + l];
   * a lane whose side is 0 is not needed (its dx and code may be left as they are or overwritten).
   * The lanes then take the member's steps in its slip modes with it (docs/BENCHMARKS.md). */
  tf_lane_params_field_fn *slip_lanes;
  /* Optional, for smoothed members side by side (model.smoothing's convex field under
   * integrator.lanes): switching(x, p, NULL) of every lane into h, both slip limits,
   * slip(t, x, +1, p) into up and slip(t, x, -1, p) into down, bit for bit lane by lane (the
   * rules of tf_lane_field_fn; p shared by the lanes), code[l] their joined refusal; with jup
   * and jdown not NULL also slip_jacobian of both sides, entry (i, j) of lane l at
   * [(i * dim + j) * lanes + l]. */
  void (*slip_sides_lanes)(int lanes, const double *t, const double *x, const double *p, double *h,
                           double *up, double *down, double *jup, double *jdown, int *code);
  /* Optional: true if with these parameters slip(x, side) past Sigma (side h(x) < 0) is a
   * continuation for the stages of a step that crosses Sigma, not the model's law there (the
   * wheel's model.params.continuation: 1).  model.smoothing's convex field combines both
   * sides' fields at every state, so it refuses such parameters. */
  bool (*continued)(const double *p);
} tf_filippov_ops;

/* TF_MODEL_CODIM2: rhs is the field off Sigma = {H1 = H2 = 0}; sigma2 gives h = (H1, H2) and,
 * if grad is not NULL, their gradients (2 x dim); field2 is the field with the slip direction
 * given as dir = (cos phi, sin phi), on Sigma the limit field F*(phi). */
typedef struct tf_codim2_ops {
  size_t size; /* TF_OPS_SIZE(tf_codim2_ops) */
  tf_field_fn *rhs;
  void (*sigma2)(const double *x, const double *p, double *h, double *grad);
  int (*field2)(double t, const double *x, const double *dir, const double *p, double *dx);
} tf_codim2_ops;

/* TF_MODEL_TWO_CONTACT: the slipping-slipping field with the unit slip directions at the two
 * contacts given (dplus in the (u1+, u_a) plane, dminus in the (u1-, u_a) plane);
 * contact_index holds the state indices of u1+, u1- and u_a.  rhs is the field off both
 * contact sets. */
typedef struct tf_two_contact_ops {
  size_t size; /* TF_OPS_SIZE(tf_two_contact_ops) */
  tf_field_fn *rhs;
  int (*field_dual)(double t, const double *x, const double *dplus, const double *dminus,
                    const double *p, double *dx);
  int contact_index[3];
} tf_two_contact_ops;

/* TF_MODEL_MAP. */
typedef struct tf_map_ops {
  size_t size;                                               /* TF_OPS_SIZE(tf_map_ops) */
  int (*map)(const double *x, const double *p, double *out); /* a field callback: any nonzero
                                                                 return ends the member */
  void (*map_jacobian)(const double *x, const double *p, double *jac); /* optional */
} tf_map_ops;

/* Elements the DEVS engine has vectorised tiles for (AVX-512, AVX2 and portable, chosen at
 * run time, all giving the same bits as the map through its pointer would). */
typedef enum tf_devs_tile {
  TF_DEVS_TILE_NONE = 0,    /* the map through its pointer */
  TF_DEVS_TILE_LOGISTIC = 1 /* x -> mu x (1 - x), mu = p[tile_param], written exactly so */
} tf_devs_tile;

/* TF_MODEL_DEVS (dim 1): N elements that each follow the 1-D map with probability q per step
 * and keep their value otherwise.  The indices say where N, q, steps and transient are in the
 * parameter table. */
typedef struct tf_devs_ops {
  size_t size;                                               /* TF_OPS_SIZE(tf_devs_ops) */
  int (*map)(const double *x, const double *p, double *out); /* nonzero ends the member */
  void (*map_jacobian)(const double *x, const double *p, double *jac);
  int n, q, steps, transient;
  double initial_min, initial_max; /* elements start uniformly distributed on this interval */
  /* Optional: the engine's vectorised tile for this element, declared by a model whose map is
   * exactly that element (its parameter at index tile_param); TF_DEVS_TILE_NONE otherwise. */
  tf_devs_tile tile;
  int tile_param;
} tf_devs_ops;

/* TF_MODEL_IMPACT: free flight by rhs inside the admissible set {h_i(x) >= 0} bounded by
 * 1 to 3 impact surfaces; a trajectory reaching h_i = 0 with h_i' < 0 jumps by the reset
 * x+ = R_i(x-) (Newton restitution v -> -r v in the common case, any map in general). */
typedef struct tf_impact_ops {
  size_t size;            /* TF_OPS_SIZE(tf_impact_ops) */
  tf_field_fn *rhs;       /* required: the free-flight field */
  tf_matrix_fn *jacobian; /* optional: its Jacobian; finite differences if NULL */
  size_t nimpacts;        /* 1 to 3 */
  /* h_i(x), and its gradient (dim) if grad is not NULL. */
  double (*surface)(int i, const double *x, const double *p, double *grad);
  /* R_i(x) into xplus, and its Jacobian (dim x dim) if jac is not NULL (the saltation matrix
   * of the reset, for Lyapunov exponents, is built from it). */
  void (*reset)(int i, const double *x, const double *p, double *xplus, double *jac);
  /* The state moved onto surface i with zero normal velocity (a plastic impact), where a
   * chattering sequence has accumulated.  It must map onto the whole sticking set (h_i = 0
   * and zero normal velocity), fix exactly the coordinates across it, keep those along it, and
   * leave a state already there where it is (stick o stick = stick): its derivative is then the
   * projection that carries tangent vectors into sticking (Lyapunov exponents). */
  void (*stick)(int i, const double *x, const double *p, double *xs);
  /* The field of motion on surface i (sticking) into dx; returns the contact force, positive
   * while the constraint holds the state (sticking ends where it changes sign).  It cannot
   * refuse a state: a model that must, sets constrained_motion (below) instead. */
  double (*constrained)(int i, double t, const double *x, const double *p, double *dx);
  /* Optional: component i of rhs alone, bit for bit what rhs writes there.  An event
   * function that needs one rate (a Poincare section at the extrema of x_i) then costs that
   * component instead of the whole field.  NULL: rhs is evaluated whole. */
  double (*rate)(int i, double t, const double *x, const double *p);
  /* Optional, for members side by side (integrator.lanes), each bit for bit its scalar
   * function lane by lane (the rules of tf_lane_field_fn); state and parameters in structure
   * of arrays (tf_lane_params_field_fn).  rhs_lanes: rhs; surface_lanes: h_i of every lane
   * into h; rate_lanes: rate(i) of every lane into out.  With all three, the lanes take the
   * valve-like member's steps and screen its events themselves (docs/BENCHMARKS.md). */
  tf_lane_params_field_fn *rhs_lanes;
  void (*surface_lanes)(int i, int lanes, const double *x, const double *p, double *h);
  void (*rate_lanes)(int i, int lanes, const double *t, const double *x, const double *p,
                     double *out);
  /* The field of motion on surface i (sticking) into dx and the contact force into *force,
   * as constrained, returning a field callback's code (0, > 0 a smaller step, < 0 the member
   * fails with the model's failure(code)).  Set, it is used instead of constrained, which may
   * then be NULL; a model that must also load into a twofold older than this member sets
   * both. */
  int (*constrained_motion)(int i, double t, const double *x, const double *p, double *dx,
                            double *force);
  /* Optional: the event functions that are a state component itself, unchanged (no
   * arithmetic).  surface_component (nimpacts entries): h_i(x) is x[c] for c =
   * surface_component[i] (surface and surface_lanes return that component), or -1;
   * rate_component (dim entries): rate(i) is x[c] for c = rate_component[i] (rhs writes x_c as
   * x_i', and rate and rate_lanes return it), or -1.  NULL: none is.  The lanes' screening then
   * bounds such a function on each step's interpolant before it samples it (impact_lanes.c). */
  const int *surface_component;
  const int *rate_component;
} tf_impact_ops;
/* TF_MODEL_SWITCHES: m independent switching functions h_1 .. h_m (1 <= m <= 4), e.g. m
 * frictional contacts, each Sigma_i = {h_i = 0} a surface the field jumps across.  The field
 * takes one value s_i per switching function: s_i = sign h_i off Sigma_i and, on Sigma_i (the
 * contact sticking), any s_i in [-1, 1] -- Filippov's multiplier.  f must be affine in s
 * (f = f_0(x) + sum_i s_i b_i(x), no products s_i s_j): then the multipliers that keep the
 * state on the intersection of the surfaces it sticks to solve a small linear system, and the
 * motion there is unique wherever that system is (Jeffrey's canopy, which is unique for such
 * fields).  `twofold model check` tests the affinity. */
#define TF_SWITCHES_MAX 4

typedef struct tf_switches_ops {
  size_t size;   /* TF_OPS_SIZE(tf_switches_ops) */
  int nswitches; /* m, 1 to TF_SWITCHES_MAX */
  /* h_i(x) for i in 0 .. m-1, and its gradient (dim) if grad is not NULL */
  double (*switching)(int i, const double *x, const double *p, double *grad);
  /* f(t, x, s) with s[0 .. m-1] */
  int (*field)(double t, const double *x, const double *s, const double *p, double *dx);
  /* Optional: d f / dx at fixed s (dim x dim), for exact tangent dynamics */
  void (*field_jacobian)(double t, const double *x, const double *s, const double *p, double *jac);
} tf_switches_ops;

typedef struct tf_model_def {
  size_t size;      /* sizeof(tf_model_def): TF_MODEL_HEAD sets it and abi */
  int abi;          /* TWOFOLD_MODEL_ABI */
  const char *name; /* as used in configs (model.name) */
  const char *doc;  /* one line */
  tf_model_kind kind;
  size_t dim;
  const char *const *state_names; /* dim names */
  const double *initial;          /* default initial state, or NULL for zeros */
  size_t nparams;
  const tf_param *params;
  /* Optional: check conditions across parameters and fill in derived ones. */
  int (*prepare)(double *p, tf_error *err);
  /* Optional physical initial conditions (initial.<name> keys) mapped to the state. */
  size_t ninitial;
  const tf_param *initial_params;
  void (*initial_state)(const double *ip, const double *p, double *x);
  /* Optional named scalar observables of a state. */
  size_t noutputs;
  const char *const *output_names;
  void (*outputs)(const double *x, const double *p, double *out);
  /* Exactly one of these, the one of `kind`. */
  const tf_flow_ops *flow;
  const tf_filippov_ops *filippov;
  const tf_codim2_ops *codim2;
  const tf_two_contact_ops *two_contact;
  const tf_map_ops *map;
  const tf_devs_ops *devs;
  const tf_impact_ops *impact;
  const tf_switches_ops *switches;
  /* Optional: the message for a negative code a field callback returned (NULL, or a NULL
   * answer: the engine reports "code N").  A pure function of the code, e.g. a switch over
   * the model's own codes returning string literals. */
  const char *(*failure)(int code);
  /* Optional: true if no function of the model depends on t (each ignores its t argument).
   * The Rosenbrock stepper then takes df/dt = 0 without the evaluation a step it spends to
   * find out (false, the default, is always safe). */
  bool autonomous;
  /* Optional: the same model with the transcendental functions of its fields from
   * twofold/fast_math.h instead of libm (model.field_math: fast; NULL: the key is refused).
   * The same name, kind, dimension and parameter table, its own tables of operations; every
   * field in it, scalar and lanes alike, uses the fast functions, so that a member's results
   * stay the same on every lane width (its own fast_math stays NULL). */
  const struct tf_model_def *fast_math;
  /* New members go here, at the end (and likewise at the end of each table). */
} tf_model_def;

/* What a plugin exports: its ABI number and a NULL-terminated list of its models. */
#define TWOFOLD_MODELS(...)                        \
  const int twofold_model_abi = TWOFOLD_MODEL_ABI; \
  const tf_model_def *const twofold_model_list[] = {__VA_ARGS__, NULL}

#ifdef __cplusplus
}
#endif

#endif
