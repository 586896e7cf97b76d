/* kernel.h — what a model is.
 *
 * A kernel is one file in kernels/: a const table of function pointers plus a parameter
 * table with defaults, bounds and docs.  It knows nothing of MPI, HDF5 or configs.  The
 * engine derives everything else (integration, ensembles, output) from this table, so
 * adding a model never touches src/.  The build generates the registry from the files in
 * kernels/ (a kernel file kernels/foo_bar.c defines `const tf_kernel tf_kernel_foo_bar`).
 *
 * Parameters are passed as a dense double array in the order of the parameter table. */
#ifndef TF_KERNEL_H
#define TF_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h" /* and twofold/model.h: tf_param */

typedef enum tf_kernel_kind {
  TF_KERNEL_FLOW,     /* smooth ODE / SDE: dx = f dt + g dW */
  TF_KERNEL_FILIPPOV, /* piecewise smooth: slip fields either side of a switching surface */
  TF_KERNEL_MAP,      /* discrete map x -> F(x) */
  TF_KERNEL_SWITCHES  /* Filippov with several switching functions: switches.h */
} tf_kernel_kind;

typedef struct tf_kernel {
  const char *name; /* registry name used in configs (model.name) */
  const char *doc;  /* one line */
  tf_kernel_kind kind;
  size_t dim;                     /* state dimension */
  const char *const *state_names; /* dim names, for output attributes */
  const double *initial;          /* default initial state (dim values); NULL = zeros */
  size_t nparams;
  const tf_param *params;

  /* Optional: validate across parameters and fill in derived ones (those with
   * tf_param.derived set and given as 0).  Errors say which condition fails. */
  int (*prepare)(double *p, tf_error *err);

  /* Drift f(t, x).  Required for flows. */
  void (*rhs)(double t, const double *x, const double *p, double *dxdt);

  /* Optional Jacobian df/dx, row-major dim x dim. */
  void (*jacobian)(double t, const double *x, const double *p, double *jac);

  /* Optional diagonal noise: dx_i = f_i dt + g_i(t, x) dW_i with independent Wiener
   * processes.  NULL means deterministic.  `diffusion_dx` gives dg_i/dx_i (for Milstein). */
  void (*diffusion)(double t, const double *x, const double *p, double *g);
  void (*diffusion_dx)(double t, const double *x, const double *p, double *dg);

  /* Filippov kernels.  Sigma = {h(x) = 0}.  Off Sigma the state follows slip(x, side) with
   * side = sign(h); slip is also evaluated on Sigma as the limit from that side.  On Sigma
   * the admissible fields are stick(x, lambda), affine in the multiplier lambda in [-1, 1]
   * (NULL: Filippov's convex combination of the two slip limits). */
  double (*switching)(const double *x, const double *p, double *grad /* dim, may be NULL */);
  void (*slip)(double t, const double *x, int side, const double *p, double *dx);
  void (*stick)(double t, const double *x, double lambda, const double *p, double *dx);
  /* Optional: d slip / dx on one side (dim x dim, row-major); without it the tangent
   * dynamics of slip modes use central differences. */
  void (*slip_jacobian)(double t, const double *x, int side, const double *p, double *jac);
  /* Optional: a second switching function that splits Sigma (the wheel's rolling speed g),
   * with its gradient like `switching`.  Where both vanish the friction law depends on the
   * direction of approach (h, g): an intersection of switching surfaces, a codimension-2 set
   * (the wheel's full stick).  The engine detects arrivals there as events and continues by
   * the extended Filippov analysis of src/intersection.h, using slip() at points displaced
   * from the intersection for the limit fields; it never crosses it by rounding. */
  double (*secondary_switching)(const double *x, const double *p, double *grad);
  /* Optional, with secondary_switching when stick depends on its sign: stick with that sign
   * given (+1 or -1) instead of read from x.  Sliding on one side of the second surface then
   * continues smoothly across it, so the step that finds the arrival at the intersection
   * sees no jump in the field (a jump there makes the step size collapse). */
  void (*stick_side)(double t, const double *x, double lambda, int secondary_side, const double *p,
                     double *dx);
  /* Optional: true if, with these parameters, the Filippov kernel is to be run as the
   * smooth flow `rhs` (a regularised version of itself, e.g. sign -> tanh(h / eps)). */
  bool (*smoothed)(const double *p);
  /* Optional: a point near which a two-fold is expected (the paper's, for instance). */
  int (*twofold_guess)(const double *p, double *x);

  /* Maps: x_{k+1} = map(x_k) and its Jacobian (row-major dim x dim). */
  void (*map)(const double *x, const double *p, double *out);
  void (*map_jacobian)(const double *x, const double *p, double *jac);
  /* Optional, for smoothing (smooth.h): the field with sign(h) replaced by a value lambda
   * anywhere in state space, including terms nonlinear in lambda such as Jeffrey's (2015)
   * nonlinear sticking rho lambda (1 - lambda^2) that the affine stick() cannot express.
   * Smoothing evaluates it at lambda = Lambda_eps(h(x)). */
  void (*regularised)(double t, const double *x, double lambda, const double *p, double *dx);
  /* Optional: its Jacobian at fixed lambda (dim x dim, row-major) and d/dlambda (dim), so
   * that stiff smoothed runs get an analytic Jacobian instead of a finite-difference one. */
  void (*regularised_jacobian)(double t, const double *x, double lambda, const double *p,
                               double *jac, double *dlambda);
  /* Codimension-2 kernels (extended Filippov systems, Antali 2017 ch. 2): kind FLOW, with
   * `rhs` the field off Sigma = {H1 = H2 = 0}, which must equal field2(x, dir(x)) where
   * dir(x) is the unit vector of (H1/|grad H1|, H2/|grad H2|) -- e.g. the direction of a 2-D
   * slip velocity under Coulomb friction.  sigma2 gives h = (H1, H2) and, if grad is not
   * NULL, their gradients (2 x dim, row-major; orthogonal on Sigma).  field2 is the field
   * with the slip direction given as dir = (cos phi, sin phi); on Sigma it is the limit field
   * F*(phi) (eq 2.18), which is all the engine needs (src/codim2.h). */
  void (*sigma2)(const double *x, const double *p, double *h, double *grad);
  void (*field2)(double t, const double *x, const double *dir, const double *p, double *dx);
  /* Optional physical initial conditions read as initial.<name> keys instead of
   * initial.state (e.g. a speed and a direction); initial_state maps them to the state. */
  size_t ninitial;
  const tf_param *initial_params;
  void (*initial_state)(const double *ip, const double *p, double *x);
  /* Optional named scalar observables of a state (e.g. "speed"), reported by jobs. */
  size_t noutputs;
  const char *const *output_names;
  void (*outputs)(const double *x, const double *p, double *out);
  /* DEVS kernels (kind TF_KERNEL_MAP, dim 1): a dynamic ensemble with variable structure,
   * N elements that each follow the 1-D element map with probability q per step and keep
   * their value otherwise (Feldstein & Kuzmin 1998).  Non-NULL marks the kernel as a DEVS:
   * the layout (devs.h) says where N, q, steps and transient are in the parameter table and
   * which 1-D map the elements follow.  Jobs hand such kernels to the DEVS engine. */
  const struct tf_devs_layout *devs;
  /* Bodies with two contact points (Antali 2017 ch. 3; e.g. the flowmeter ball): the
   * slipping-slipping field F_SS with the unit slip directions at the two contacts given,
   * dplus in the (u1+, u_a) plane and dminus in the (u1-, u_a) plane; contact_index holds the
   * state indices of u1+, u1- and u_a.  The engine (src/dual_contact.h) derives the
   * slipping-rolling, rolling-slipping and rolling-rolling cases from it. */
  void (*field_dual)(double t, const double *x, const double *dplus, const double *dminus,
                     const double *p, double *dx);
  int contact_index[3];
  /* Impact kernels (hybrid systems with reset maps; src/impact.h): kind FLOW, `rhs` the free
   * field, and 1 <= nimpacts <= 3 surfaces {h_i(x) = 0} bounding the admissible set
   * {h_i >= 0}.  A trajectory reaching h_i = 0 with h_i' < 0 jumps by the reset
   * x+ = R_i(x-) (Newton restitution v -> -r v in the common case, any map in general).  All
   * five are required.
   *   impact_surface: h_i(x), and its gradient (dim) if grad is not NULL;
   *   impact_reset: R_i(x) into xplus, and its Jacobian (dim x dim) if jac is not NULL
   *     (the saltation matrix of the reset for Lyapunov exponents is built from it);
   *   impact_stick: the state moved onto the constraint with zero normal velocity (a plastic
   *     impact), where a chattering sequence has accumulated;
   *   impact_constrained: the field of motion on the constraint (sticking) into dx; returns
   *     the contact force, positive while the constraint holds the state (sticking ends where
   *     it changes sign);
   *   impact_restitution: index of the restitution parameter in params (-1: none), so that
   *     errors can name it. */
  size_t nimpacts;
  double (*impact_surface)(int i, const double *x, const double *p, double *grad);
  void (*impact_reset)(int i, const double *x, const double *p, double *xplus, double *jac);
  void (*impact_stick)(int i, const double *x, const double *p, double *xs);
  double (*impact_constrained)(int i, double t, const double *x, const double *p, double *dx);
  /* Kind TF_KERNEL_SWITCHES: several switching functions, the field affine in their signs
   * (twofold/model.h tf_switches_ops; run by src/switches.h). */
  const tf_switches_ops *switches;
} tf_kernel;

/* The registry (generated). */
size_t tf_kernel_count(void);
const tf_kernel *tf_kernel_at(size_t i);
const tf_kernel *tf_kernel_find(const char *name);

/* Index of a state component by name, or -1. */
int tf_kernel_state_index(const tf_kernel *k, const char *name);

/* Index of a parameter by name, or -1. */
int tf_kernel_param_index(const tf_kernel *k, const char *name);

/* True for kernels with a codimension-2 discontinuity set (2-D slip: sigma2/field2) or two
 * contacts (field_dual).  Off Sigma their `rhs` is the slip field, so a job that integrates
 * `rhs` alone would run through rolling with the wrong dynamics: jobs run them through
 * contact_run.h (evolve2/dual_contact), never through flow.h's integrators. */
bool tf_kernel_is_codim2(const tf_kernel *k);

/* True for impact kernels (nimpacts > 0): their `rhs` is only the free flight, so jobs that
 * integrate `rhs` alone must run them through src/impact.h or refuse them. */
bool tf_kernel_has_impacts(const tf_kernel *k);

/* True if the kernel's noise is nonzero anywhere on the given state (checked at x). */
bool tf_kernel_is_noisy(const tf_kernel *k, const double *x, const double *p);

/* "x,y,z": the state names joined by commas (for output attributes). */
void tf_join_state_names(const tf_kernel *k, char *buf, size_t n);

#endif
