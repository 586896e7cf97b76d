/* test_model_def.c — the public model definition's validation and adaptation (model_def.c),
 * and the derivative checks of `twofold model check` (model_check.c).
 *
 * A plugin's mistakes must be refused at load time with a message naming the field, so every
 * rule is broken once here on an otherwise valid definition and the message is checked; the
 * adapter must put each kind's table where the engine looks for it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "devs.h"
#include "model_check.h"
#include "model_def.h"

static const tf_param params[] = {{"a", 1.0, 0.0, 2.0, "a", false},
                                  {"b", 0.5, -1.0, 1.0, "b", false}};
static const char *const names2[] = {"x", "y"};

static void rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = sin(x[1]) * p[0];
  dx[1] = x[0] * x[0] * p[1];
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
static void stiff(double t, const double *x, const double *p, double *dx) {
  (void)t, (void)p;
  dx[0] = x[1];
  dx[1] = -tanh(x[1] / 1e-3);
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
static void slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)t, (void)p;
  dx[0] = x[1], dx[1] = -x[0] - side;
}
static void map1(const double *x, const double *p, double *out) {
  out[0] = p[0] * x[0] * (1 - x[0]);
}
static void map1_jac(const double *x, const double *p, double *j) {
  j[0] = p[0] * (1 - 2 * x[0]);
}

static const tf_flow_ops flow = {.rhs = rhs, .jacobian = jac};
static const tf_filippov_ops filippov = {.switching = sw, .slip = slip, .smooth = &flow};
static const tf_map_ops map = {.map = map1};

static tf_model_def valid(void) {
  return (tf_model_def){.abi = TWOFOLD_MODEL_ABI,
                        .name = "unit-model",
                        .kind = TF_MODEL_FLOW,
                        .dim = 2,
                        .state_names = names2,
                        .nparams = 2,
                        .params = params,
                        .flow = &flow};
}

/* Loads d and expects failure with `needle` in the message (NULL: expects success). */
static const tf_kernel *expect(const tf_model_def *d, const char *needle, int line) {
  const tf_kernel *k = NULL;
  tf_error err = {{0}};
  const int rc = tf_kernel_from_def(d, "library 'unit.so'", &k, &err);
  if (!needle) {
    CHECK(rc == 0 && k, "line %d: valid definition refused: %s", line, err.msg);
    return k;
  }
  CHECK(rc != 0 && !k && strstr(err.msg, needle) && strstr(err.msg, "library 'unit.so'"),
        "line %d: expected an error with \"%s\", got rc %d \"%s\"", line, needle, rc, err.msg);
  return NULL;
}
#define EXPECT(d, needle) expect(&(d), needle, __LINE__)

static void validation(void) {
  tf_model_def d = valid();
  EXPECT(d, NULL);
  d = valid(), d.abi = 7;
  EXPECT(d, "field abi is 7, expected 1");
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
  EXPECT(d, "kind = 9 is not one of");
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
  static const tf_flow_ops no_rhs = {.jacobian = jac};
  d = valid(), d.flow = &no_rhs;
  EXPECT(d, "flow.rhs is NULL (required)");
  static const double nan_initial[] = {0.0, NAN};
  d = valid(), d.initial = nan_initial;
  EXPECT(d, "initial[1] = nan is not finite");

  static const tf_filippov_ops no_slip = {.switching = sw};
  d = valid(), d.kind = TF_MODEL_FILIPPOV, d.flow = NULL, d.filippov = &no_slip;
  EXPECT(d, "filippov.slip is NULL (required)");
  static const tf_two_contact_ops tc = {.rhs = rhs, .field_dual = NULL, .contact_index = {0, 1, 1}};
  d = valid(), d.kind = TF_MODEL_TWO_CONTACT, d.flow = NULL, d.two_contact = &tc;
  EXPECT(d, "two_contact.field_dual is NULL");
  static const tf_devs_ops devs_bad = {.map = map1, .map_jacobian = map1_jac, .n = 0, .q = 0};
  static const char *const one[] = {"x"};
  d = valid(), d.kind = TF_MODEL_DEVS, d.flow = NULL, d.devs = &devs_bad, d.dim = 1,
  d.state_names = one;
  EXPECT(d, "devs.q is not the index of its own parameter");
  static const tf_devs_ops devs_nojac = {.map = map1};
  d.devs = &devs_nojac;
  EXPECT(d, "devs.map_jacobian");
  static const tf_switches_ops none = {.nswitches = 0}, five = {.nswitches = 5},
                               no_field = {.nswitches = 2};
  d = valid(), d.kind = TF_MODEL_SWITCHES, d.flow = NULL, d.switches = &none;
  EXPECT(d, "switches.nswitches = 0: expected 1 to 4");
  d.switches = &five;
  EXPECT(d, "switches.nswitches = 5: expected 1 to 4");
  d.switches = &no_field;
  EXPECT(d, "switches.switching is NULL (required)");
  d = valid(), d.kind = TF_MODEL_SWITCHES;
  EXPECT(d, "kind is TF_MODEL_SWITCHES but the table given is .flow");
}

static void adaptation(void) {
  tf_model_def d = valid();
  const tf_kernel *k = EXPECT(d, NULL);
  CHECK(k && k->kind == TF_KERNEL_FLOW && k->rhs == rhs && k->jacobian == jac && !k->switching,
        "flow table into the flow kernel");
  d = valid(), d.kind = TF_MODEL_FILIPPOV, d.flow = NULL, d.filippov = &filippov;
  k = EXPECT(d, NULL);
  CHECK(k && k->kind == TF_KERNEL_FILIPPOV && k->switching == sw && k->slip == slip &&
            k->rhs == rhs && k->jacobian == jac,
        "Filippov table, its smooth flow as rhs/jacobian");
  static const tf_param dp[] = {{"N", 10, 1, 1e9, "", false},
                                {"q", 0.5, 0, 1, "", false},
                                {"r", 3.9, 0, 4, "", false},
                                {"steps", 100, 1, 1e9, "", false},
                                {"transient", 0, 0, 1e9, "", false}};
  static const tf_devs_ops devs = {.map = map1,
                                   .map_jacobian = map1_jac,
                                   .n = 0,
                                   .q = 1,
                                   .steps = 3,
                                   .transient = 4,
                                   .initial_min = 0.1,
                                   .initial_max = 0.9};
  static const char *const one[] = {"x"};
  d = valid(), d.kind = TF_MODEL_DEVS, d.flow = NULL, d.devs = &devs, d.dim = 1,
  d.state_names = one, d.nparams = 5, d.params = dp;
  k = EXPECT(d, NULL);
  CHECK(k && k->kind == TF_KERNEL_MAP && k->map == map1 && k->devs && !k->devs->element &&
            k->devs->q == 1 && k->devs->transient == 4 && k->devs->fast == TF_DEVS_GENERIC &&
            k->devs->initial_max == 0.9,
        "DEVS table into a map kernel with a generic layout on its own map");
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
  tf_kernel k = {.name = "t",
                 .doc = "",
                 .kind = TF_KERNEL_FLOW,
                 .dim = 2,
                 .state_names = names2,
                 .nparams = 2,
                 .params = params,
                 .rhs = rhs,
                 .jacobian = jac};
  CHECK(run_check(&k, p, x, buf, sizeof buf) == 0, "a correct Jacobian passes:\n%s", buf);
  k.jacobian = jac_wrong;
  CHECK(run_check(&k, p, x, buf, sizeof buf) == 1 && strstr(buf, "FAIL  jacobian") &&
            strstr(buf, "entry [1][0]"),
        "an entry 0.1 %% off fails and is named:\n%s", buf);
  k.rhs = stiff, k.jacobian = stiff_jac;
  const double x0[2] = {0.0, 0.0};
  CHECK(run_check(&k, p, x0, buf, sizeof buf) == 0,
        "a stiff (tanh(v/1e-3)) Jacobian at v = 0 passes:\n%s", buf);
  const double xnan[2] = {NAN, 0.0};
  k.rhs = rhs, k.jacobian = jac;
  CHECK(run_check(&k, p, xnan, buf, sizeof buf) >= 1 && strstr(buf, "FAIL  field"),
        "a non-finite field is a FAIL:\n%s", buf);
}

int main(void) {
  validation();
  adaptation();
  derivative_checks();
  return check_report("test_model_def");
}
