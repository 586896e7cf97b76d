/* test_switch_equations.c — the symbolic affinity rule of model.equations with `switching` a
 * mapping of sign names: affine fields written in unusual ways are accepted, every way of
 * being nonlinear in a sign is refused with the state, the sign and the column where the
 * offending part starts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "equations.h"

/* A model x' = v, v' = field with two switching functions s1 = v - 1, s2 = x; field written
 * on line 6 of m.yaml. */
static void check_field(const char *field, const char *want) {
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "model:\n  equations:\n    state: [x, v]\n    parameters: {k: 2}\n"
           "    switching: {s1: v - 1, s2: x}\n    field: {x: v, v: \"%s\"}\n",
           field);
  tf_error err = {0};
  tf_config *cfg = tf_config_parse_string(yaml, "m.yaml", &err);
  CHECK(cfg != NULL, "config parses: %s", err.msg);
  if (!cfg) return;
  char *source = NULL;
  const char *name;
  const int rc = tf_equations_source(cfg, &source, &name, &err);
  if (want)
    CHECK(rc != 0 && strstr(err.msg, want), "'%s': message '%s' lacks '%s'", field,
          rc ? err.msg : "(none)", want);
  else
    CHECK(rc == 0 && source && strstr(source, "TF_MODEL_SWITCHES") &&
              strstr(source, ".nswitches = 2"),
          "'%s' is affine in s1, s2: %s", field, err.msg);
  free(source);
  tf_config_free(cfg);
}

int main(void) {
  /* affine, though not written as f0 + s1 b1 + s2 b2 */
  const char *affine[] = {
      "-k*x - s1 + 0.5*s2",          "(s1 + s2)*x/2",
      "-(s1 - 2*s2)/k + x^2",        "s1*exp(-abs(v))*sign(k) + s2*sin(x)",
      "(1 + x)*(s1*k - v*s2)",       "s1/(2 + x^2) - s2*min(x, v)",
      "pow(s1, 1) + s2^1 + s1*0*s2", "s1 - s1 + s2",
  };
  for (size_t i = 0; i < sizeof affine / sizeof *affine; i++) check_field(affine[i], NULL);

  const char *at = "m.yaml:6: key 'model.equations.field.v': ";
  struct {
    const char *field, *want;
  } nonaffine[] = {
      {"s1*s2",
       "column 1: the field of 'v' is not affine in the signs: its derivative with "
       "respect to 's1' depends on 's2' ("},
      {"x + (s1 + 1)*(s2 - 1)",
       "column 6: the field of 'v' is not affine in the signs: its "
       "derivative with respect to 's1' depends on 's2'"},
      {"k*x + s1^2",
       "column 7: the field of 'v' is not affine in the signs: its derivative with "
       "respect to 's1' depends on 's1' itself"},
      {"x - s1/s2",
       "column 5: the field of 'v' is not affine in the signs: its derivative with "
       "respect to 's1' depends on 's2'"},
      {"v + x*sqrt(1 + s2)",
       "column 7: the field of 'v' is not affine in the signs: its "
       "derivative with respect to 's2' depends on 's2' itself"},
      {"abs(s1) + s2",
       "column 1: the field of 'v' is not affine in the signs: its derivative "
       "with respect to 's1' depends on 's1' itself"},
      {"s1 + min(s1, s2)",
       "column 6: the field of 'v' is not affine in the signs: its "
       "derivative with respect to 's1' depends on 's1' itself"},
      {"s1 + pow(2, s2)",
       "column 6: the field of 'v' is not affine in the signs: its "
       "derivative with respect to 's2' depends on 's2' itself"},
      {"x^s1 + s2",
       "column 1: the field of 'v' is not affine in the signs: its derivative "
       "with respect to 's1' depends on 's1' itself"},
      {"s2 + x*sign(v - s1)",
       "column 8: the field of 'v' is not affine in the signs: sign() of "
       "an expression of 's1' is a step in it"},
  };
  for (size_t i = 0; i < sizeof nonaffine / sizeof *nonaffine; i++) {
    char want[512];
    snprintf(want, sizeof want, "%s%s", at, nonaffine[i].want);
    check_field(nonaffine[i].field, want);
  }
  /* sign(x) is s2 off x = 0, so s1*sign(x) is the product s1*s2 in disguise, and on x = 0 it
   * is 0 where s2 is the sticking multiplier: refused like every sign() of the state */
  char want[512];
  snprintf(want, sizeof want, "%scolumn 17: sign(x) jumps where x changes sign", at);
  check_field("s1*exp(-abs(v))*sign(x) + s2*sin(x)", want);
  check_field("s1*exp(-abs(v))*sign(x) + s2*sin(x)", "write instead the sign 's2'");
  return check_report("test_switch_equations");
}
