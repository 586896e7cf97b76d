/* test_model_def.c — the one checker of model definitions (model_def.c), the kinds' adapters
 * (kinds.c) and the derivative checks of `twofold model check` (model_check.c).
 *
 * A plugin's mistakes must be refused at load time with a message naming the field, so every
 * rule is broken once here on an otherwise valid definition and the message is checked.
 * Built-ins are definitions like any plugin's, so every one of them must pass the same
 * checker, and each kind's adapter must send it to its engine. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kinds.h"
#include "model_check.h"
#include "model_def.h"

static const tf_param params[] = {{"a", 1.0, 0.0, 2.0, "a", false},
                                  {"b", 0.5, -1.0, 1.0, "b", false}};
static const char *const names2[] = {"x", "y"};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = sin(x[1]) * p[0];
  dx[1] = x[0] * x[0] * p[1];
  return 0;
}
static void jac(double t, const double *x, const double *p, double *j) {
  (void)t;
  j[0] = 0, j[1] = cos(x[1]) * p[0], j[2] = 2 * x[0] * p[1], j[3] = 0;
}
static void jac_wrong(double t, const double *x, const double *p, double *j) {
  jac(t, x, p, j);
  j[2] *= 1.001; /* one entry off by 0.1 % */
}
/* A stiff smoothing: tanh(v / 1e-3) has third derivatives of order 1e9 at v = 0. */
static int stiff(double t, const double *x, const double *p, double *dx) {
  (void)t, (void)p;
  dx[0] = x[1];
  dx[1] = -tanh(x[1] / 1e-3);
  return 0;
}
static void stiff_jac(double t, const double *x, const double *p, double *j) {
  (void)t, (void)p;
  const double c = cosh(x[1] / 1e-3);
  j[0] = 0, j[1] = 1, j[2] = 0, j[3] = -1 / (1e-3 * c * c);
}
static double sw(const double *x, const double *p, double *g) {
  (void)p;
  if (g) g[0] = 2 * x[0], g[1] = 1;
  return x[0] * x[0] + x[1];
}
static int slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)t, (void)p;
  dx[0] = x[1], dx[1] = -x[0] - side;
  return 0;
}
static int map1(const double *x, const double *p, double *out) {
  out[0] = p[0] * x[0] * (1 - x[0]);
  return 0;
}
static void map1_jac(const double *x, const double *p, double *j) {
  j[0] = p[0] * (1 - 2 * x[0]);
}

static const tf_flow_ops flow = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs, .jacobian = jac};
static const tf_filippov_ops filippov = {TF_OPS_SIZE(tf_filippov_ops), .switching = sw,
                                         .slip = slip, .smooth = &flow};
static const tf_map_ops map = {TF_OPS_SIZE(tf_map_ops), .map = map1};

static tf_model_def valid(void) {
  return (tf_model_def){TF_MODEL_HEAD,    .name = "unit-model",  .kind = TF_MODEL_FLOW,
                        .dim = 2,         .state_names = names2, .nparams = 2,
                        .params = params, .flow = &flow};
}

/* Loads d and expects failure with `needle` in the message (NULL: expects success). */
static const tf_kernel *expect(const tf_model_def *d, const char *needle, int line) {
  tf_error err = {0};
  const int rc = tf_model_def_check(d, "library 'unit.so'", &err);
  if (!needle) {
    CHECK(rc == 0, "line %d: valid definition refused: %s", line, err.msg);
    return rc ? NULL : d;
  }
  CHECK(rc != 0 && strstr(err.msg, needle) && strstr(err.msg, "library 'unit.so'"),
        "line %d: expected an error with \"%s\", got rc %d \"%s\"", line, needle, rc, err.msg);
  return NULL;
}
#define EXPECT(d, needle) expect(&(d), needle, __LINE__)

static void validation(void) {
  tf_model_def d = valid();
  EXPECT(d, NULL);
  d = valid(), d.abi = 7;
  char abi[64];
  snprintf(abi, sizeof abi, "field abi is 7, expected %d", TWOFOLD_MODEL_ABI);
  EXPECT(d, abi);
  d = valid(), d.name = "lorenz";
  EXPECT(d, "clashes with the built-in model 'lorenz'");
  d = valid(), d.name = "a.b";
  EXPECT(d, "name is missing or not a valid name");
  d = valid(), d.kind = TF_MODEL_FILIPPOV;
  EXPECT(d, "kind is TF_MODEL_FILIPPOV but the table given is .flow");
  d = valid(), d.map = &map;
  EXPECT(d, "kind is TF_MODEL_FLOW but .map is also set");
  d = valid(), d.flow = NULL;
  EXPECT(d, "kind is TF_MODEL_FLOW but .flow (its table of operations) is NULL");
  d = valid(), d.kind = (tf_model_kind)9;
  EXPECT(d, "kind = 9 is not one of TF_MODEL_FLOW ... TF_MODEL_SWITCHES");
  d = valid(), d.dim = 0;
  EXPECT(d, "dim = 0: expected 1 to 16");
  d = valid(), d.dim = 17;
  EXPECT(d, "dim = 17: expected 1 to 16");
  d = valid(), d.state_names = NULL;
  EXPECT(d, "state_names is NULL");
  static const char *const dup[] = {"x", "x"};
  d = valid(), d.state_names = dup;
  EXPECT(d, "state_names[1]: duplicate name 'x'");
  static const char *const null_name[] = {"x", NULL};
  d = valid(), d.state_names = null_name;
  EXPECT(d, "state_names[1] is NULL");
  static const tf_param bad_default[] = {{"a", 3.0, 0.0, 2.0, "", false}};
  d = valid(), d.nparams = 1, d.params = bad_default;
  EXPECT(d, "params 'a': default 3 is outside its bounds [0, 2]");
  static const tf_param dup_params[] = {{"a", 1, 0, 2, "", false}, {"a", 1, 0, 2, "", false}};
  d = valid(), d.params = dup_params;
  EXPECT(d, "params[1]: duplicate name 'a'");
  static const tf_param bad_bounds[] = {{"a", 1, 2, 0, "", false}};
  d = valid(), d.nparams = 1, d.params = bad_bounds;
  EXPECT(d, "bounds [2, 0] are not an interval");
  d = valid(), d.params = NULL;
  EXPECT(d, "params is NULL but entries are declared");
  d = valid(), d.ninitial = 1, d.initial_params = params;
  EXPECT(d, "initial_params are declared but initial_state is NULL");
  d = valid(), d.noutputs = 1, d.output_names = names2;
  EXPECT(d, "output_names are declared but outputs is NULL");
  static const tf_flow_ops no_rhs = {TF_OPS_SIZE(tf_flow_ops), .jacobian = jac};
  d = valid(), d.flow = &no_rhs;
  EXPECT(d, "flow.rhs is NULL (required)");
  static const double nan_initial[] = {0.0, NAN};
  d = valid(), d.initial = nan_initial;
  EXPECT(d, "initial[1] = nan is not finite");

  d = valid(), d.kind = TF_MODEL_FILIPPOV, d.flow = NULL, d.filippov = &filippov;
  EXPECT(d, NULL);
  static const tf_filippov_ops no_slip = {TF_OPS_SIZE(tf_filippov_ops), .switching = sw};
  d = valid(), d.kind = TF_MODEL_FILIPPOV, d.flow = NULL, d.filippov = &no_slip;
  EXPECT(d, "filippov.slip is NULL (required)");
  static const tf_two_contact_ops tc = {TF_OPS_SIZE(tf_two_contact_ops), .rhs = rhs,
                                        .field_dual = NULL, .contact_index = {0, 1, 1}};
  d = valid(), d.kind = TF_MODEL_TWO_CONTACT, d.flow = NULL, d.two_contact = &tc;
  EXPECT(d, "two_contact.field_dual is NULL");
  static const tf_devs_ops devs_bad = {TF_OPS_SIZE(tf_devs_ops), .map = map1,
                                       .map_jacobian = map1_jac, .n = 0, .q = 0};
  static const char *const one[] = {"x"};
  d = valid(), d.kind = TF_MODEL_DEVS, d.flow = NULL, d.devs = &devs_bad, d.dim = 1,
  d.state_names = one;
  EXPECT(d, "devs.q is not the index of its own parameter");
  static const tf_devs_ops devs_nojac = {TF_OPS_SIZE(tf_devs_ops), .map = map1};
  d.devs = &devs_nojac;
  EXPECT(d, "devs.map_jacobian");
  static const tf_impact_ops no_reset = {TF_OPS_SIZE(tf_impact_ops), .rhs = rhs, .nimpacts = 1};
  d = valid(), d.kind = TF_MODEL_IMPACT, d.flow = NULL, d.impact = &no_reset;
  EXPECT(d, "impact.surface is NULL (required)");
  static const tf_impact_ops four = {TF_OPS_SIZE(tf_impact_ops), .rhs = rhs, .nimpacts = 4};
  d.impact = &four;
  EXPECT(d, "impact.nimpacts = 4: expected 1 to 3 surfaces");
  d = valid(), d.impact = &four;
  EXPECT(d, "kind is TF_MODEL_FLOW but .impact is also set");
  /* event functions said to be state components name components of the state (dim 2 here) */
  static tf_impact_ops seat2, rate2;
  seat2 = rate2 = *tf_kernel_find("pressure_valve")->impact;
  seat2.surface_component = (const int[]){2};
  d = valid(), d.kind = TF_MODEL_IMPACT, d.flow = NULL, d.impact = &seat2;
  EXPECT(d, "impact.surface_component[0] = 2: expected -1 or a component below 2");
  rate2.rate_component = (const int[]){1, -2};
  d.impact = &rate2;
  EXPECT(d, "impact.rate_component[1] = -2: expected -1 or a component below 2");
  rate2.rate_component = (const int[]){1, -1}, rate2.surface_component = (const int[]){0};
  EXPECT(d, NULL);
  static const tf_switches_ops none = {TF_OPS_SIZE(tf_switches_ops), .nswitches = 0},
                               five = {.nswitches = 5}, no_field = {.nswitches = 2};
  d = valid(), d.kind = TF_MODEL_SWITCHES, d.flow = NULL, d.switches = &none;
  EXPECT(d, "switches.nswitches = 0: expected 1 to 4");
  d.switches = &five;
  EXPECT(d, "switches.nswitches = 5: expected 1 to 4");
  d.switches = &no_field;
  EXPECT(d, "switches.switching is NULL (required)");
  d = valid(), d.kind = TF_MODEL_SWITCHES;
  EXPECT(d, "kind is TF_MODEL_SWITCHES but the table given is .flow");
}

/* Built-ins pass the plugins' checker, and each goes to its kind's engine. */
static void builtins(void) {
  for (size_t i = 0; i < tf_kernel_count(); i++) {
    const tf_kernel *k = tf_kernel_at(i);
    tf_error err = {0};
    CHECK(tf_model_def_check(k, "built-in", &err) == 0, "built-in '%s' refused: %s", k->name,
          err.msg);
  }
  static const struct {
    const char *name;
    const char *route;
  } routes[] = {{"lorenz", "flow"},
                {"relay", "filippov"},
                {"ball-pool", "contact"},
                {"flowmeter", "contact"},
                {"henon", "map"},
                {"devs-logistic", "devs"},
                {"bouncing_ball", "impact"},
                {"pressure_valve", "impact"}};
  for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
    const tf_kernel *k = tf_kernel_find(routes[i].name);
    CHECK(k && strcmp(tf_model_route(k, NULL), routes[i].route) == 0, "route of '%s'",
          routes[i].name);
  }
  /* a Filippov model whose parameters make it its own smooth flow runs on the flow engines */
  const tf_kernel *k = tf_kernel_find("stick-slip");
  const int eps = k ? tf_kernel_param_index(k, "eps") : -1;
  CHECK(eps >= 0, "stick-slip has eps");
  if (eps < 0) return;
  double p[TF_MODEL_MAX_PARAMS];
  for (size_t i = 0; i < k->nparams; i++) p[i] = k->params[i].def;
  p[eps] = 0;
  CHECK(strcmp(tf_model_route(k, p), "filippov") == 0, "stick-slip, eps = 0: event-driven");
  p[eps] = 1e-3;
  CHECK(strcmp(tf_model_route(k, p), TF_ROUTE_SMOOTH_FLOW) == 0 &&
            tf_model_rhs(k) == k->filippov->smooth->rhs,
        "stick-slip, eps > 0: its smooth flow");
}

/* Runs the checks of kernel k at x into a buffer; returns the failures. */
static int run_check(const tf_kernel *k, const double *p, const double *x, char *buf, size_t n) {
  FILE *f = fmemopen(buf, n, "w");
  const int failed = tf_model_check(k, NULL, p, 0.0, x, f);
  fclose(f);
  return failed;
}

static void derivative_checks(void) {
  static char buf[1 << 16];
  const double p[2] = {1.5, 0.7}, x[2] = {0.3, -1.1};
  tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs, .jacobian = jac};
  tf_model_def k = valid();
  k.doc = "", k.flow = &ops;
  CHECK(run_check(&k, p, x, buf, sizeof buf) == 0, "a correct Jacobian passes:\n%s", buf);
  ops.jacobian = jac_wrong;
  CHECK(run_check(&k, p, x, buf, sizeof buf) == 1 && strstr(buf, "FAIL  jacobian") &&
            strstr(buf, "entry [1][0]"),
        "an entry 0.1 %% off fails and is named:\n%s", buf);
  ops.rhs = stiff, ops.jacobian = stiff_jac;
  const double x0[2] = {0.0, 0.0};
  CHECK(run_check(&k, p, x0, buf, sizeof buf) == 0,
        "a stiff (tanh(v/1e-3)) Jacobian at v = 0 passes:\n%s", buf);
  const double xnan[2] = {NAN, 0.0};
  ops.rhs = rhs, ops.jacobian = jac;
  CHECK(run_check(&k, p, xnan, buf, sizeof buf) >= 1 && strstr(buf, "FAIL  field"),
        "a non-finite field is a FAIL:\n%s", buf);
}

/* tf_model_def_adopt: tables read as far as their sizes cover, the rest NULL; a size of 0 or
 * beyond this header's refused, naming the table and what to write. */
static void adoption(void) {
  tf_flow_ops older = {.size = offsetof(tf_flow_ops, diffusion),
                       .rhs = rhs,
                       .diffusion = (tf_field_fn *)1 /* past the size: never read */};
  tf_model_def d = valid();
  d.size = offsetof(tf_model_def, failure), d.failure = (const char *(*)(int))1, d.flow = &older;
  const tf_model_def *got = NULL;
  tf_error err = {0};
  CHECK(tf_model_def_adopt(&d, "library 'unit.so'", &got, &err) == 0 && got &&
            got->failure == NULL && got->flow->rhs == rhs && got->flow->diffusion == NULL &&
            got->flow != &older && tf_model_def_check(got, "library 'unit.so'", &err) == 0,
        "an older definition is adopted with the members it lacks NULL: %s", err.msg);
  tf_model_def_release(got);
  struct {
    size_t def_size, ops_size;
    const char *needle;
  } bad[] = {{0, sizeof older, "size = 0: begin the definition with TF_MODEL_HEAD"},
             {sizeof d + 8, sizeof older, "more than this twofold's"},
             {sizeof d, 0, "tf_flow_ops.size = 0: set it with TF_OPS_SIZE(tf_flow_ops)"},
             {sizeof d, sizeof older + 8, "tf_flow_ops.size"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    d.size = bad[i].def_size, older.size = bad[i].ops_size;
    err.msg[0] = '\0';
    CHECK(tf_model_def_adopt(&d, "library 'unit.so'", &got, &err) != 0 &&
              strstr(err.msg, bad[i].needle) && strstr(err.msg, "library 'unit.so'"),
          "case %zu: expected \"%s\", got \"%s\"", i, bad[i].needle, err.msg);
  }
}

/* fast_math: the same model with other tables; checked, adopted with its own copy, and refused
 * where it is another model or has a fast variant itself */
static void fast_variant(void) {
  static const tf_flow_ops fast_flow = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs};
  tf_model_def fast = valid();
  fast.flow = &fast_flow;
  tf_model_def d = valid();
  d.fast_math = &fast;
  EXPECT(d, NULL);
  const tf_model_def *got = NULL;
  tf_error err = {0};
  CHECK(tf_model_def_adopt(&d, "library 'unit.so'", &got, &err) == 0 && got->fast_math &&
            got->fast_math != &fast && got->fast_math->flow->rhs == rhs &&
            got->fast_math->flow->jacobian == NULL && got->flow->jacobian == jac,
        "a fast variant is adopted with its own tables: %s", err.msg);
  tf_model_def_release(got);
  fast.dim = 1;
  EXPECT(d, "fast_math is not the same model");
  fast = valid(), fast.flow = &fast_flow, fast.name = "other";
  EXPECT(d, "fast_math is not the same model");
  fast = valid(), fast.flow = NULL;
  EXPECT(d, "unit-model, fast_math");
  fast = valid(), fast.fast_math = &fast;
  EXPECT(d, "fast_math.fast_math is set");
  /* the built-ins with one */
  for (size_t i = 0; i < tf_kernel_count(); i++) {
    const tf_kernel *k = tf_kernel_at(i);
    CHECK(!k->fast_math ||
              (k->fast_math->filippov != k->filippov && strcmp(k->fast_math->name, k->name) == 0),
          "built-in '%s': its fast variant has its own tables", k->name);
  }
  CHECK(tf_kernel_find("wheel")->fast_math && tf_kernel_find("jeffrey-oscillator")->fast_math,
        "the wheel and the Jeffrey oscillator have fast variants");
}

int main(void) {
  fast_variant();
  adoption();
  validation();
  builtins();
  derivative_checks();
  return check_report("test_model_def");
}
