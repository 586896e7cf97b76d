/* test_equations.c — the expression language (parse, precedence, derivatives, C text) and
 * model.equations' checks, against values worked out by hand.
 *
 * With arguments `--generate CONFIG` it prints the C source generated from CONFIG's
 * model.equations instead: tests/scripts/equations.py compiles that and compares its
 * derivatives with sympy's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "equations.h"
#include "expr.h"

static const char *const names[] = {"x", "y", "k", "t"};
static const char *const c_names[] = {"x[0]", "x[1]", "p[0]", "t"};

static tf_expr *parse(tf_expr_pool *pool, const char *text) {
  tf_error err;
  tf_expr *e = tf_expr_parse(pool, text, names, 4, &err);
  CHECK(e != NULL, "'%s' should parse: %s", text, err.msg);
  return e;
}

static double value(const char *text, const double *vals) {
  tf_expr_pool *pool = tf_expr_pool_new();
  tf_expr *e = parse(pool, text);
  const double v = e ? tf_expr_eval(e, vals) : NAN;
  tf_expr_pool_free(pool);
  return v;
}

static void check_c(const char *text, int var, const char *want) {
  tf_expr_pool *pool = tf_expr_pool_new();
  tf_expr *e = parse(pool, text);
  if (e && var >= 0) e = tf_expr_diff(pool, e, var);
  char *buf = NULL;
  size_t len = 0, cap = 0;
  if (e) CHECK(tf_expr_emit(e, c_names, &buf, &len, &cap) == 0, "emit '%s'", text);
  CHECK(buf && !strcmp(buf, want), "'%s' (d/d%s) printed as '%s', want '%s'", text,
        var >= 0 ? names[var] : "-", buf ? buf : "(null)", want);
  free(buf);
  tf_expr_pool_free(pool);
}

static void check_error(const char *text, const char *want) {
  tf_expr_pool *pool = tf_expr_pool_new();
  tf_error err = {0};
  tf_expr *e = tf_expr_parse(pool, text, names, 4, &err);
  CHECK(e == NULL && strstr(err.msg, want), "'%s': message '%s' lacks '%s'", text, err.msg, want);
  tf_expr_pool_free(pool);
}

static void test_parse(void) {
  const double v[] = {1.5, -0.25, 2.0, 0.75};
  CHECK_CLOSE(value("1 + 2*3", v), 7.0, 0, "precedence");
  CHECK_CLOSE(value("-x^2", v), -2.25, 0, "unary minus below ^");
  CHECK_CLOSE(value("2^3^2", v), 512.0, 0, "^ right-associative");
  CHECK_CLOSE(value("2**-1", v), 0.5, 0, "** and a signed exponent");
  CHECK_CLOSE(value("x - y - k", v), 1.5 + 0.25 - 2.0, 0, "- left-associative");
  CHECK_CLOSE(value("x / y / k", v), 1.5 / -0.25 / 2.0, 0, "/ left-associative");
  CHECK_CLOSE(value(".5e1 + 1E-1", v), 5.1, 1e-15, "number forms");
  CHECK_CLOSE(value("atan2(y, x) + min(x, k) - max(x, k) + sign(y) + abs(y)", v),
              atan2(-0.25, 1.5) + 1.5 - 2.0 - 1.0 + 0.25, 1e-15, "functions");
  CHECK_CLOSE(value("pow(k, 0.5) * sqrt(k) + exp(log(t)) + tanh(0)", v), 2.0 + 0.75, 1e-15,
              "more functions");
}

/* Derivatives printed as C: simplification leaves what one would write by hand. */
static void test_derivatives(void) {
  check_c("3*x", 0, "3.0");
  check_c("x + y", 0, "1.0");
  check_c("y", 0, "0.0");
  check_c("x*1 + 0", -1, "x[0]");
  check_c("-k*x", 0, "(-p[0])");
  check_c("x^2", 0, "(2.0 * x[0])");
  check_c("x^3", -1, "(x[0] * x[0] * x[0])");
  check_c("sin(x*y)", 0, "(cos((x[0] * x[1])) * x[1])");
  check_c("abs(x - k)", 0, "tf_eq_sign((x[0] - p[0]))");
  check_c("sign(x)", 0, "0.0");
  check_c("min(x, y)", 0, "(x[0] <= x[1] ? 1.0 : 0.0)");
  check_c("max(x, y)", 1, "(x[1] <= x[0] ? 0.0 : 1.0)");
  check_c("2 - 3", -1, "(-1.0)");
  check_c("0.1", -1, "0.10000000000000001");

  /* values of derivatives against the calculus done by hand */
  const double v[] = {0.7, 1.3, 2.0, 0.4};
  struct {
    const char *f;
    int var;
    double want;
  } cases[] = {
      {"x^y", 1, pow(0.7, 1.3) * log(0.7)},
      {"x^y", 0, 1.3 * pow(0.7, 0.3)},
      {"atan2(y, x)", 0, -1.3 / (0.49 + 1.69)},
      {"tan(x)", 0, 1 / (cos(0.7) * cos(0.7))},
      {"asin(x) + acos(x)", 0, 0.0},
      {"atan(y)", 1, 1 / (1 + 1.69)},
      {"sqrt(x*y)", 0, 0.5 * 1.3 / sqrt(0.91)},
      {"log(x)/y", 1, -log(0.7) / 1.69},
      {"cosh(x) - sinh(x)", 0, sinh(0.7) - cosh(0.7)},
      {"tanh(k*x)", 0, 2.0 * (1 - tanh(1.4) * tanh(1.4))},
      {"exp(-t*x)", 0, -0.4 * exp(-0.28)},
      {"pow(x, 3)", 0, 3 * 0.49},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tf_expr_pool *pool = tf_expr_pool_new();
    tf_expr *e = parse(pool, cases[i].f);
    if (e)
      CHECK_CLOSE(tf_expr_eval(tf_expr_diff(pool, e, cases[i].var), v), cases[i].want, 1e-14,
                  cases[i].f);
    tf_expr_pool_free(pool);
  }
}

static void test_errors(void) {
  check_error("x + * y", "column 5: unexpected '*'");
  check_error("x + kk", "column 5: unknown name 'kk' (known: x, y, k, t)");
  check_error("foo(x)", "column 1: unknown function 'foo'");
  check_error("sin(x, y)", "column 1: sin takes 1 argument, got 2");
  check_error("(x + y", "column 1: missing ')'");
  check_error("x)", "column 2: unmatched ')'");
  check_error("1.2.3", "column 4: unexpected '.'");
  check_error("2x", "column 2: unexpected 'x' after a number");
  check_error("1e", "column 2: expected digits in the exponent");
  check_error("   ", "column 4: empty expression");
  check_error("sin", "column 1: function 'sin' needs arguments");
  check_error("x +", "column 4: expression ends where a value was expected");
  check_error("1e999", "column 1: number '1e999' is not a finite double");
}

static void test_format(void) {
  const double values[] = {1, -2, 0.1, 1e-300, 6.02214076e23, 1.0 / 3, -0.0, 5e-324};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    char text[64];
    CHECK(tf_expr_format_double(values[i], text, sizeof text) == 0, "format %g", values[i]);
    const char *digits = text + (text[0] == '(' ? 2 : 0);
    CHECK(strtod(digits, NULL) == fabs(values[i]), "%s reads back as %.17g", text, values[i]);
    CHECK(strpbrk(text, ".e") != NULL, "%s is a double literal", text);
  }
  char text[64];
  CHECK(tf_expr_format_double(INFINITY, text, sizeof text) < 0, "infinity has no literal");
}

/* model.equations' checks: file, line, key (and column inside an expression). */
static void check_config(const char *yaml, const char *want) {
  tf_error err = {0};
  tf_config *cfg = tf_config_parse_string(yaml, "m.yaml", &err);
  CHECK(cfg != NULL, "config parses: %s", err.msg);
  if (!cfg) return;
  char *source = NULL;
  const char *name;
  const int rc = tf_equations_source(cfg, &source, &name, &err);
  if (want)
    CHECK(rc != 0 && strstr(err.msg, want), "message '%s' lacks '%s'", rc ? err.msg : "(none)",
          want);
  else
    CHECK(rc == 0 && source && strstr(source, "TWOFOLD_MODELS"), "generates: %s", err.msg);
  free(source);
  tf_config_free(cfg);
}

static void test_config(void) {
  const char *head = "model:\n  equations:\n    state: [x, v]\n";
  char yaml[1024];
#define CASE(body, want)                           \
  snprintf(yaml, sizeof yaml, "%s%s", head, body); \
  check_config(yaml, want)
  CASE("    parameters: {k: 1}\n    field: {x: v, v: -k*x}\n", NULL);
  CASE("    parameters: {k: 1}\n    field:\n      x: v\n      v: -k*x + kk\n",
       "m.yaml:7: key 'model.equations.field.v': column 8: unknown name 'kk'");
  CASE("    parameters: {k: 1}\n    field: {x: v}\n",
       "m.yaml:5: key 'model.equations.field': state 'v' has no equation here");
  CASE("    field: {x: v, v: x, z: 1}\n",
       "key 'model.equations.field.z': 'z' is not a state (states: x, v)");
  CASE("    parameters: {x: 1}\n    field: {x: v, v: x}\n",
       "m.yaml:4: key 'model.equations.parameters.x': parameter name 'x' is used twice");
  CASE("    parameters: {sin: 1}\n    field: {x: v, v: x}\n",
       "parameter name 'sin' is the name of a function");
  CASE("    parameters: {t: 1}\n    field: {x: v, v: x}\n", "parameter name 't' is reserved");
  CASE("    parameters:\n      mu: {default: 11, min: 0, max: 10}\n    field: {x: v, v: x}\n",
       "m.yaml:5: key 'model.equations.parameters.mu.default': expected a number in [0, ");
  CASE("    switching: v - 1\n    slip: {plus: {x: v, v: -1}}\n",
       "missing required key 'model.equations.slip.minus'");
  CASE("    switching: v - t\n    slip: {plus: {x: v, v: -1}, minus: {x: v, v: 1}}\n",
       "the switching function cannot depend on t");
  CASE("    switching: v\n    field: {x: v, v: x}\n", "gives its fields as slip.plus");
  CASE("    field: {x: v, v: x}\n    noise: {w: 1}\n", "'w' is not a state");
  CASE("    initial: [1]\n    field: {x: v, v: x}\n", "expected 2 numbers, got 1");
#undef CASE
  check_config("model:\n  equations:\n    state: [x, x]\n    field: {x: x}\n",
               "m.yaml:3: key 'model.equations.state': state name 'x' is used twice");
}

/* sign() of the state inside a Filippov model hides a switching surface: refused, naming
 * line, key, column and what to write; abs, min, max (continuous) and sign() of parameters
 * stay allowed; a flow's sign() of the state reads, with a warning pointing to 'switching'. */
static void check_warning(const char *yaml, const char *want) {
  tf_error err = {0};
  tf_config *cfg = tf_config_parse_string(yaml, "m.yaml", &err);
  char text[2048] = "";
  const int n = cfg ? tf_equations_warnings(cfg, text, sizeof text) : -1;
  if (want)
    CHECK(n == 1 && strstr(text, want), "warning '%s' lacks '%s'", text, want);
  else
    CHECK(n == 0 && !text[0], "no warning expected, got '%s'", text);
  tf_config_free(cfg);
}

static void test_sign_of_state(void) {
  const char *head = "model:\n  equations:\n    state: [x, v]\n    parameters: {k: 1}\n";
  char yaml[1024];
#define CASE(body, want)                           \
  snprintf(yaml, sizeof yaml, "%s%s", head, body); \
  check_config(yaml, want)
  /* Filippov: slip fields */
  CASE(
      "    switching: v - 0.2\n    slip:\n      plus: {x: v, v: -x - 1}\n"
      "      minus:\n        x: v\n        v: -x + k*sign(x - 0.5)\n",
      "m.yaml:10: key 'model.equations.slip.minus.v': column 8: sign(x - 0.5) jumps");
  CASE(
      "    switching: v - 0.2\n    slip:\n      plus: {x: v, v: -x - 1}\n"
      "      minus:\n        x: v\n        v: -x + k*sign(x - 0.5)\n",
      "{s1: v - 0.2, s2: x - 0.5}");
  CASE(
      "    switching: v - 0.2\n    slip:\n      plus:\n        x: v\n"
      "        v: -x - sign(  v - 0.2 )\n      minus: {x: v, v: -x + 1}\n",
      "m.yaml:9: key 'model.equations.slip.plus.v': column 6: sign(v - 0.2) jumps where v - 0.2 "
      "changes sign");
  CASE(
      "    switching: v - 0.2\n    slip:\n      plus:\n        x: v\n"
      "        v: -x - sign(v - 0.2)\n      minus: {x: v, v: -x + 1}\n",
      "+1 in slip.plus (h > 0), -1 in slip.minus (h < 0)");
  CASE("    switching: sign(x)*v\n    slip: {plus: {x: v, v: -1}, minus: {x: v, v: 1}}\n",
       "m.yaml:5: key 'model.equations.switching': column 1: sign(x) jumps");
  /* continuous kinks and constant signs are fine */
  CASE(
      "    switching: v - 0.2\n    slip:\n      plus: {x: v, v: -x - exp(-abs(v - 0.2))}\n"
      "      minus: {x: v, v: '-x + min(x, 1) + max(v, 0) + sign(k - 2)'}\n",
      NULL);
  /* several switching functions: the field and the functions */
  CASE(
      "    switching: {s1: v - 0.2}\n    field:\n      x: v\n"
      "      v: -x - s1*exp(-abs(v - 0.2)) + 0.1*sign(v - 0.2)\n",
      "m.yaml:8: key 'model.equations.field.v': column 34: sign(v - 0.2) jumps");
  CASE(
      "    switching: {s1: v - 0.2}\n    field:\n      x: v\n"
      "      v: -x - s1*exp(-abs(v - 0.2)) + 0.1*sign(v - 0.2)\n",
      "write instead the sign 's1'");
  CASE("    switching: {s1: v - 0.2}\n    field: {x: v, v: -x - s1 + sign(x)}\n",
       "a switching function of its own, 's2: x' under 'switching'");
  CASE("    switching: {s1: v - 0.2, s2: sign(x) + v}\n    field: {x: v, v: -x - s1 - s2}\n",
       "key 'model.equations.switching.s2': column 1: sign(x) jumps");
  CASE("    switching: {s1: v - 0.2}\n    field: {x: v, v: -x - s1*exp(-abs(v - 0.2))}\n", NULL);
#undef CASE
  const char *flow = "model:\n  equations:\n    state: [x, v]\n    field:\n      x: v\n";
  snprintf(yaml, sizeof yaml, "%s      v: -x - 0.3*sign(v)\n", flow);
  check_config(yaml, NULL); /* a flow may mean it */
  check_warning(yaml,
                "m.yaml:6: key 'model.equations.field.v': column 10: sign(v) makes the "
                "field jump");
  check_warning(yaml, "'switching: v'");
  snprintf(yaml, sizeof yaml, "%s      v: -x - 0.3*abs(v) + sign(-1)\n", flow);
  check_warning(yaml, NULL);
}

static int generate(const char *path) {
  tf_error err;
  tf_config *cfg = tf_config_load(path, &err);
  char *source = NULL;
  const char *name;
  if (!cfg || tf_equations_source(cfg, &source, &name, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    tf_config_free(cfg);
    return 2;
  }
  fputs(source, stdout);
  free(source);
  tf_config_free(cfg);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--generate")) return generate(argv[2]);
  test_parse();
  test_derivatives();
  test_errors();
  test_format();
  test_config();
  test_sign_of_state();
  return check_report("test_equations");
}
