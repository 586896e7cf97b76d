/* test_config.c — unit tests for config.c: parsing, getters, overrides, strict keys, dumps.
 *
 * Error messages are the user interface of a config module, so most checks look at the text:
 * each class of error must name the file (or --set argument), the line and the key. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static int failures;
static int checks;

#define CHECK(cond) check_true((cond), #cond, __LINE__)
#define CHECK_MSG(msg, ...) check_contains((msg), __LINE__, __VA_ARGS__, (const char *)NULL)

static void check_true(bool ok, const char *what, int line) {
  checks++;
  if (ok) return;
  failures++;
  fprintf(stderr, "FAIL line %d: %s\n", line, what);
}

/* Every needle must occur in msg. */
static void check_contains(const char *msg, int line, ...) {
  va_list ap;
  va_start(ap, line);
  for (const char *needle; (needle = va_arg(ap, const char *));) {
    checks++;
    if (msg && strstr(msg, needle)) continue;
    failures++;
    fprintf(stderr, "FAIL line %d: expected \"%s\" in message \"%s\"\n", line, needle,
            msg ? msg : "(null)");
  }
  va_end(ap);
}

static void check_not_contains(const char *msg, const char *needle, int line) {
  checks++;
  if (msg && !strstr(msg, needle)) return;
  failures++;
  fprintf(stderr, "FAIL line %d: did not expect \"%s\" in \"%s\"\n", line, needle, msg);
}

static tf_config *parse(const char *text, tf_error *err) {
  err->msg[0] = '\0';
  return tf_config_parse_string(text, "t.yaml", err);
}

/* A config that must parse; aborts the test run if it does not, since later checks need it. */
static tf_config *parse_ok(const char *text, int line) {
  tf_error err;
  tf_config *cfg = parse(text, &err);
  if (!cfg) {
    fprintf(stderr, "FATAL line %d: parse failed: %s\n", line, err.msg);
    exit(1);
  }
  return cfg;
}
#define PARSE_OK(text) parse_ok((text), __LINE__)

/* Parsing must fail; returns the message in err. */
static void parse_fails(const char *text, tf_error *err, int line) {
  tf_config *cfg = parse(text, err);
  check_true(cfg == NULL, "parse should fail", line);
  tf_config_free(cfg);
}
#define PARSE_FAILS(text, err) parse_fails((text), (err), __LINE__)

static void write_temp(const char *text, char *path, size_t n) {
  snprintf(path, n, "/tmp/test_config_XXXXXX");
  const int fd = mkstemp(path);
  if (fd < 0) {
    perror("mkstemp");
    exit(1);
  }
  const size_t len = strlen(text);
  if (write(fd, text, len) != (ssize_t)len) {
    perror("write");
    exit(1);
  }
  close(fd);
}

/* ---- loading ----------------------------------------------------------------------------- */

static void test_load_file(void) {
  char path[64];
  write_temp("model:\n  name: lorenz\n  params:\n    sigma: 10\n", path, sizeof path);
  tf_error err;
  tf_config *cfg = tf_config_load(path, &err);
  CHECK(cfg != NULL);
  if (cfg) {
    CHECK(strcmp(tf_config_source(cfg), path) == 0);
    double sigma = 0;
    CHECK(tf_config_get_double(cfg, "model.params.sigma", NULL, 0, INFINITY, &sigma, &err) == 0);
    CHECK(sigma == 10);
    CHECK(tf_config_get_double(cfg, "model.params.rho", NULL, 0, INFINITY, &sigma, &err) == -1);
    CHECK_MSG(err.msg, path, ":3: missing required key 'model.params.rho'");
    const char *name;
    CHECK(tf_config_get_string(cfg, "model.name", NULL, (const char *[]){"lorenz", NULL}, &name,
                               &err) == 0);
    CHECK(strcmp(name, "lorenz") == 0);
    tf_config_free(cfg);
  }
  unlink(path);

  cfg = tf_config_load("/tmp/test_config_does_not_exist.yaml", &err);
  CHECK(cfg == NULL);
  CHECK_MSG(err.msg,
            "cannot open '/tmp/test_config_does_not_exist.yaml': No such file or directory");

  write_temp("a: 1\nb: [1, 2\nc: 3\n", path, sizeof path);
  cfg = tf_config_load(path, &err);
  CHECK(cfg == NULL);
  CHECK_MSG(err.msg, path, ": YAML syntax error: ");
  unlink(path);

  write_temp("", path, sizeof path);
  cfg = tf_config_load(path, &err);
  CHECK(cfg == NULL);
  CHECK_MSG(err.msg, path, "empty");
  unlink(path);

  static const char with_nul[] = "a: 1\nb: x\0y\n";
  const int fd = mkstemp(strcpy(path, "/tmp/test_config_XXXXXX"));
  CHECK(fd >= 0 && write(fd, with_nul, sizeof with_nul - 1) == (ssize_t)(sizeof with_nul - 1));
  close(fd);
  cfg = tf_config_load(path, &err);
  CHECK(cfg == NULL);
  CHECK_MSG(err.msg, path, ":2:5: YAML syntax error: NUL byte");
  unlink(path);

  cfg = tf_config_load("/tmp", &err);
  CHECK(cfg == NULL);
  CHECK_MSG(err.msg, "cannot open '/tmp': ");
}

static void test_syntax_errors(void) {
  tf_error err;
  PARSE_FAILS("a: 1\nb: c: d\n", &err);
  CHECK_MSG(err.msg, "t.yaml:2:5: YAML syntax error: mapping values are not allowed");
  PARSE_FAILS("a: 1\n  b: 2\n", &err);
  CHECK_MSG(err.msg, "t.yaml:2:", "YAML syntax error");
  PARSE_FAILS("a: 'unterminated\n", &err);
  CHECK_MSG(err.msg, "t.yaml:", "YAML syntax error");
  PARSE_FAILS("a: 1\nb: \"\xff\"\n", &err); /* encoding errors are placed too */
  CHECK_MSG(err.msg, "t.yaml:2:5: YAML syntax error: invalid");
}

static void test_document_shape(void) {
  tf_error err;
  PARSE_FAILS("- 1\n- 2\n", &err);
  CHECK_MSG(err.msg, "t.yaml:1: the config must be a mapping of keys, got a sequence");
  PARSE_FAILS("just text\n", &err);
  CHECK_MSG(err.msg, "t.yaml:1: the config must be a mapping", "got 'just text'");
  PARSE_FAILS("", &err);
  CHECK_MSG(err.msg, "t.yaml: the config is empty");
  PARSE_FAILS("# only a comment\n", &err);
  CHECK_MSG(err.msg, "t.yaml: the config is empty");
  PARSE_FAILS("---\n", &err);
  CHECK_MSG(err.msg, "t.yaml: the config is empty");
  PARSE_FAILS("a: 1\n---\nb: 2\n", &err);
  CHECK_MSG(err.msg, "t.yaml:2: only one YAML document is allowed");
  tf_config *cfg = PARSE_OK("{}\n");
  CHECK(tf_config_check_unused(cfg, &err) == 0);
  tf_config_free(cfg);
}

static void test_duplicates_and_unsupported(void) {
  tf_error err;
  PARSE_FAILS("a: 1\nb: 2\na: 3\n", &err);
  CHECK_MSG(err.msg, "t.yaml:3: duplicate key 'a' (already defined at line 1)");
  PARSE_FAILS("m:\n  x: 1\n  y:\n    z: 2\n  x: 3\n", &err);
  CHECK_MSG(err.msg, "t.yaml:5: duplicate key 'x' (already defined at line 2)");
  PARSE_FAILS("a: &anchor 1\nb: 2\n", &err);
  CHECK_MSG(err.msg, "t.yaml:1: anchors (&anchor) are not supported");
  PARSE_FAILS("a: 1\nb: *x\n", &err);
  CHECK_MSG(err.msg, "t.yaml:2: aliases (*x) are not supported");
  PARSE_FAILS("a: 1\nb: !!str 2\n", &err);
  CHECK_MSG(err.msg, "t.yaml:2: tags (", "are not supported");
  PARSE_FAILS("a:\n  - !custom 2\n", &err);
  CHECK_MSG(err.msg, "t.yaml:2: tags (!custom) are not supported");
  char deep[512] = "a: ";
  for (int i = 0; i < 150; i++) strcat(deep, "[");
  for (int i = 0; i < 150; i++) strcat(deep, "]");
  PARSE_FAILS(deep, &err);
  CHECK_MSG(err.msg, "t.yaml:1: nesting deeper than");
  PARSE_FAILS("? [1, 2]\n: 3\n", &err);
  CHECK_MSG(err.msg, "t.yaml:1: mapping keys must be scalars");
}

/* ---- getters ----------------------------------------------------------------------------- */

static void test_get_double(void) {
  tf_config *cfg = PARSE_OK(
      "n:\n"
      "  one: 1\n"
      "  neg: -2.5\n"
      "  tiny: 1e-9\n"
      "  half: .5\n"
      "  big: 1.0e+3\n"
      "  plus: +3\n"
      "  abc: abc\n"
      "  big_range: 1.5\n"
      "  inf: .inf\n"
      "  ninf: -.Inf\n"
      "  nan: .NaN\n"
      "  hex: 0x10\n"
      "  huge: 1e999\n"
      "  map: {a: 1}\n"
      "  seq: [1, 2]\n"
      "  empty:\n"
      "  word_inf: inf\n");
  tf_error err;
  double v = 0;
  const double inf = INFINITY;
  CHECK(tf_config_get_double(cfg, "n.one", NULL, -inf, inf, &v, &err) == 0 && v == 1);
  CHECK(tf_config_get_double(cfg, "n.neg", NULL, -inf, inf, &v, &err) == 0 && v == -2.5);
  CHECK(tf_config_get_double(cfg, "n.tiny", NULL, -inf, inf, &v, &err) == 0 && v == 1e-9);
  CHECK(tf_config_get_double(cfg, "n.half", NULL, -inf, inf, &v, &err) == 0 && v == 0.5);
  CHECK(tf_config_get_double(cfg, "n.big", NULL, -inf, inf, &v, &err) == 0 && v == 1000);
  CHECK(tf_config_get_double(cfg, "n.plus", NULL, -inf, inf, &v, &err) == 0 && v == 3);

  CHECK(tf_config_get_double(cfg, "n.abc", NULL, -inf, inf, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:8: key 'n.abc': expected a number, got 'abc'");
  CHECK(tf_config_get_double(cfg, "n.big_range", NULL, 0, 1, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:9: key 'n.big_range': expected a number in [0, 1], got 1.5");
  CHECK(tf_config_get_double(cfg, "n.big_range", NULL, 2, inf, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:9: key 'n.big_range': expected a number >= 2, got 1.5");
  CHECK(tf_config_get_double(cfg, "n.big_range", NULL, -inf, 0.25, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:9: key 'n.big_range': expected a number <= 0.25, got 1.5");

  CHECK(tf_config_get_double(cfg, "n.inf", NULL, 0, inf, &v, &err) == 0 && isinf(v) && v > 0);
  CHECK(tf_config_get_double(cfg, "n.inf", NULL, 0, 1e300, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:10: key 'n.inf': expected a finite number in [0, 1e+300], got .inf");
  CHECK(tf_config_get_double(cfg, "n.ninf", NULL, -inf, 0, &v, &err) == 0 && isinf(v) && v < 0);
  CHECK(tf_config_get_double(cfg, "n.ninf", NULL, 0, inf, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:11: key 'n.ninf': expected a finite number >= 0, got -.Inf");
  CHECK(tf_config_get_double(cfg, "n.nan", NULL, -inf, inf, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:12: key 'n.nan': expected a finite number, got .NaN");
  CHECK(tf_config_get_double(cfg, "n.hex", NULL, -inf, inf, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:13: key 'n.hex': expected a number, got '0x10'");
  CHECK(tf_config_get_double(cfg, "n.huge", NULL, 0, 1, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:14: key 'n.huge': 1e999 is beyond the range of double precision");
  CHECK(tf_config_get_double(cfg, "n.huge", NULL, -inf, inf, &v, &err) == -1);
  CHECK(tf_config_get_double(cfg, "n.map", NULL, -inf, inf, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:15: key 'n.map': expected a number, got a mapping");
  CHECK(tf_config_get_double(cfg, "n.seq", NULL, -inf, inf, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:16: key 'n.seq': expected a number, got a sequence");
  CHECK(tf_config_get_double(cfg, "n.empty", NULL, -inf, inf, &v, &err) == -1);
  CHECK_MSG(err.msg, "key 'n.empty': expected a number, got an empty value");
  CHECK(tf_config_get_double(cfg, "n.word_inf", NULL, -inf, inf, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:18: key 'n.word_inf': expected a number, got 'inf'");

  CHECK(tf_config_get_double(cfg, "n.one.deeper", NULL, -inf, inf, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:2: key 'n.one': expected a mapping holding 'deeper', got '1'");
  CHECK(tf_config_get_double(cfg, "n..x", NULL, -inf, inf, &v, &err) == -1);
  CHECK_MSG(err.msg, "invalid key path 'n..x'");
  tf_config_free(cfg);
}

static void test_get_int(void) {
  tf_config *cfg = PARSE_OK(
      "i:\n"
      "  plain: 1000\n"
      "  sci: 1e6\n"
      "  neg: -5\n"
      "  frac: 3.5\n"
      "  word: abc\n"
      "  level: 12\n"
      "  overflow: 99999999999999999999\n"
      "  sci_overflow: 1e19\n"
      "  max: 9223372036854775807\n"
      "  seq: [1]\n");
  tf_error err;
  long long v = 0;
  CHECK(tf_config_get_int(cfg, "i.plain", NULL, LLONG_MIN, LLONG_MAX, &v, &err) == 0 && v == 1000);
  CHECK(tf_config_get_int(cfg, "i.sci", NULL, LLONG_MIN, LLONG_MAX, &v, &err) == 0 && v == 1000000);
  CHECK(tf_config_get_int(cfg, "i.neg", NULL, LLONG_MIN, LLONG_MAX, &v, &err) == 0 && v == -5);
  CHECK(tf_config_get_int(cfg, "i.max", NULL, LLONG_MIN, LLONG_MAX, &v, &err) == 0 &&
        v == LLONG_MAX);
  CHECK(tf_config_get_int(cfg, "i.frac", NULL, LLONG_MIN, LLONG_MAX, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:5: key 'i.frac': expected an integer, got '3.5'");
  CHECK(tf_config_get_int(cfg, "i.word", NULL, LLONG_MIN, LLONG_MAX, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:6: key 'i.word': expected an integer, got 'abc'");
  CHECK(tf_config_get_int(cfg, "i.level", NULL, 0, 9, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:7: key 'i.level': expected an integer in [0, 9], got 12");
  CHECK(tf_config_get_int(cfg, "i.level", NULL, 20, LLONG_MAX, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:7: key 'i.level': expected an integer >= 20, got 12");
  CHECK(tf_config_get_int(cfg, "i.level", NULL, LLONG_MIN, 10, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:7: key 'i.level': expected an integer <= 10, got 12");
  CHECK(tf_config_get_int(cfg, "i.overflow", NULL, LLONG_MIN, LLONG_MAX, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:8: key 'i.overflow': expected an integer that fits in 64 bits");
  CHECK(tf_config_get_int(cfg, "i.sci_overflow", NULL, 0, LLONG_MAX, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:9: key 'i.sci_overflow': expected an integer >= 0, got 1e19");
  CHECK(tf_config_get_int(cfg, "i.seq", NULL, 0, LLONG_MAX, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:11: key 'i.seq': expected an integer, got a sequence");
  const long long def = 42;
  CHECK(tf_config_get_int(cfg, "i.absent", &def, 0, 100, &v, &err) == 0 && v == 42);
  CHECK(tf_config_get_int(cfg, "i.required", NULL, 0, 100, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:1: missing required key 'i.required'");
  tf_config_free(cfg);
}

static void test_get_bool(void) {
  tf_config *cfg = PARSE_OK(
      "b:\n  a: true\n  b: False\n  c: YES\n  d: no\n  e: on\n  f: OFF\n  g: maybe\n  h: 1\n");
  tf_error err;
  bool v = false;
  const char *keys[] = {"b.a", "b.b", "b.c", "b.d", "b.e", "b.f"};
  const bool want[] = {true, false, true, false, true, false};
  for (int i = 0; i < 6; i++) {
    v = !want[i];
    CHECK(tf_config_get_bool(cfg, keys[i], NULL, &v, &err) == 0 && v == want[i]);
  }
  CHECK(tf_config_get_bool(cfg, "b.g", NULL, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:8: key 'b.g': expected true or false, got 'maybe'");
  CHECK(tf_config_get_bool(cfg, "b.h", NULL, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:9: key 'b.h': expected true or false, got '1'");
  const bool def = true;
  CHECK(tf_config_get_bool(cfg, "b.new", &def, &v, &err) == 0 && v);
  CHECK(tf_config_get_bool(cfg, "other.x", NULL, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml: missing required key 'other.x'");
  tf_config_free(cfg);
}

static void test_get_string(void) {
  tf_config *cfg = PARSE_OK(
      "s:\n"
      "  name: lorenz\n"
      "  quoted: \"123\"\n"
      "  method: dorpi5\n"
      "  other: zzzzzz\n"
      "  empty:\n"
      "  blank: ''\n"
      "  map:\n"
      "    k: v\n");
  tf_error err;
  const char *v = NULL;
  static const char *const methods[] = {"auto", "dopri5", "euler-maruyama", "milstein", NULL};
  CHECK(tf_config_get_string(cfg, "s.name", NULL, NULL, &v, &err) == 0 && !strcmp(v, "lorenz"));
  CHECK(tf_config_get_string(cfg, "s.quoted", NULL, NULL, &v, &err) == 0 && !strcmp(v, "123"));
  CHECK(tf_config_get_string(cfg, "s.blank", NULL, NULL, &v, &err) == 0 && !strcmp(v, ""));
  CHECK(tf_config_get_string(cfg, "s.method", NULL, methods, &v, &err) == -1);
  CHECK_MSG(err.msg,
            "t.yaml:4: key 's.method': expected one of auto, dopri5, euler-maruyama, milstein, "
            "got 'dorpi5' (did you mean 'dopri5'?)");
  CHECK(tf_config_get_string(cfg, "s.other", NULL, methods, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:5: key 's.other': expected one of auto,");
  check_not_contains(err.msg, "did you mean", __LINE__);
  CHECK(tf_config_get_string(cfg, "s.empty", NULL, NULL, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:6: key 's.empty': expected a string, got an empty value");
  CHECK(tf_config_get_string(cfg, "s.map", NULL, NULL, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:8: key 's.map': expected a string, got a mapping");
  CHECK(tf_config_get_string(cfg, "s.def", "auto", methods, &v, &err) == 0 && !strcmp(v, "auto"));
  CHECK(tf_config_get_string(cfg, "s.def_empty", "", NULL, &v, &err) == 0 && !strcmp(v, ""));
  tf_config_free(cfg);
}

static void test_get_double_array(void) {
  tf_config *cfg = PARSE_OK(
      "a:\n"
      "  three: [1, 2.5, -3]\n"
      "  block:\n"
      "    - 1\n"
      "    - x\n"
      "  single: 7\n"
      "  none: []\n"
      "  map: {k: 1}\n"
      "  nan: [1, .nan]\n"
      "  nested: [[1]]\n");
  tf_error err;
  double out[4] = {0};
  size_t n = 0;
  CHECK(tf_config_get_double_array(cfg, "a.three", NULL, 0, 3, out, 4, &n, &err) == 0 && n == 3 &&
        out[0] == 1 && out[1] == 2.5 && out[2] == -3);
  CHECK(tf_config_get_double_array(cfg, "a.three", NULL, 0, 0, out, 4, &n, &err) == 0 && n == 3);
  CHECK(tf_config_get_double_array(cfg, "a.three", NULL, 0, 2, out, 4, &n, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:2: key 'a.three': expected 2 numbers, got 3");
  CHECK(tf_config_get_double_array(cfg, "a.three", NULL, 0, 0, out, 2, &n, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:2: key 'a.three': expected 1 to 2 numbers, got 3");
  CHECK(tf_config_get_double_array(cfg, "a.block", NULL, 0, 0, out, 4, &n, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:5: key 'a.block': element 2: expected a finite number, got 'x'");
  CHECK(tf_config_get_double_array(cfg, "a.single", NULL, 0, 1, out, 4, &n, &err) == 0 && n == 1 &&
        out[0] == 7);
  CHECK(tf_config_get_double_array(cfg, "a.single", NULL, 0, 3, out, 4, &n, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:6: key 'a.single': expected a sequence of numbers, got '7'");
  CHECK(tf_config_get_double_array(cfg, "a.none", NULL, 0, 0, out, 4, &n, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:7: key 'a.none': expected 1 to 4 numbers, got 0");
  CHECK(tf_config_get_double_array(cfg, "a.map", NULL, 0, 0, out, 4, &n, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:8: key 'a.map': expected a sequence of numbers, got a mapping");
  CHECK(tf_config_get_double_array(cfg, "a.nan", NULL, 0, 0, out, 4, &n, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:9: key 'a.nan': element 2: expected a finite number, got '.nan'");
  CHECK(tf_config_get_double_array(cfg, "a.nested", NULL, 0, 0, out, 4, &n, &err) == -1);
  CHECK_MSG(err.msg, "key 'a.nested': element 1: expected a finite number, got a sequence");
  CHECK(tf_config_get_double_array(cfg, "a.required", NULL, 0, 0, out, 4, &n, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:1: missing required key 'a.required'");
  const double def[] = {0.1, 1.0 / 3.0, -2};
  CHECK(tf_config_get_double_array(cfg, "b.state", def, 3, 3, out, 4, &n, &err) == 0 && n == 3 &&
        out[0] == 0.1 && out[1] == 1.0 / 3.0 && out[2] == -2);
  char *dump = tf_config_dump_path(cfg, "b");
  CHECK_MSG(dump, "state: [0.1, 0.3333333333333333", ", -2]");
  free(dump);
  tf_config_free(cfg);
}

/* ---- defaults, dumps and round trips ----------------------------------------------------- */

static void test_defaults(void) {
  tf_config *cfg = PARSE_OK("integrator:\n  t_end: 10\n");
  tf_error err;
  double v;
  const double rtol = 1e-8, third = 1.0 / 3.0;
  CHECK(tf_config_get_double(cfg, "integrator.t_end", NULL, -INFINITY, INFINITY, &v, &err) == 0);
  CHECK(tf_config_get_double(cfg, "integrator.rtol", &rtol, 0, 1, &v, &err) == 0 && v == 1e-8);
  CHECK(tf_config_get_double(cfg, "deep.new.section.x", &third, 0, 1, &v, &err) == 0 && v == third);
  CHECK(!tf_config_has(cfg, "integrator.atol"));
  CHECK(tf_config_has(cfg, "integrator.rtol"));
  CHECK(tf_config_has(cfg, "deep.new"));
  const double bad_default = 5;
  CHECK(tf_config_get_double(cfg, "integrator.h", &bad_default, 0, 1, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml (default): key 'integrator.h': expected a number in [0, 1], got 5");
  char where[256];
  CHECK(!strcmp(tf_config_where(cfg, "integrator.rtol", where, sizeof where), "t.yaml (default)"));
  CHECK(tf_config_check_unused(cfg, &err) == 0);

  char *dump = tf_config_dump(cfg);
  CHECK_MSG(dump, "integrator:\n  t_end: 10\n  rtol: 1e-08\n", "deep:\n  new:\n    section:\n");
  tf_config *again = PARSE_OK(dump);
  CHECK(tf_config_get_double(again, "deep.new.section.x", NULL, 0, 1, &v, &err) == 0 && v == third);
  CHECK(tf_config_get_double(again, "integrator.rtol", NULL, 0, 1, &v, &err) == 0 && v == rtol);
  tf_config_free(again);
  free(dump);
  tf_config_free(cfg);
}

/* Dumping, re-parsing and dumping again must give the same text, and values read back equal. */
static void test_round_trip(void) {
  const char *text =
      "# a comment that disappears\n"
      "name: lorenz\n"
      "quoted_number: '123'\n"
      "quoted_bool: \"true\"\n"
      "empty_string: ''\n"
      "tilde_string: '~'\n"
      "null_value:\n"
      "colon: 'a: b'\n"
      "hash: 'x # y'\n"
      "leading_space: '  padded'\n"
      "unicode: \"\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xce\xbb\"\n"
      "multi: |\n"
      "  line one\n"
      "  line two\n"
      "escapes: \"tab\\there\"\n"
      "strip: |-\n"
      "  no final newline\n"
      "  here\n"
      "awkward: \"\\n starts with a newline \\nand trailing space \"\n"
      "'key with spaces': 1\n"
      "'': empty key\n"
      "list: [1, 2.5, -3e-7]\n"
      "strings: [a, 'b, c', '']\n"
      "nested:\n"
      "  - {a: 1, b: [x, y]}\n"
      "  - plain\n"
      "  - []\n"
      "  - {}\n"
      "very:\n"
      "  deep:\n"
      "    map: {k: v}\n";
  tf_config *cfg = PARSE_OK(text);
  char *first = tf_config_dump(cfg);
  CHECK(first != NULL);
  tf_config *again = PARSE_OK(first);
  char *second = tf_config_dump(again);
  CHECK(second && !strcmp(first, second));
  if (second && strcmp(first, second))
    fprintf(stderr, "first dump:\n%s\nsecond dump:\n%s\n", first, second);

  tf_error err;
  const char *s;
  double v;
  CHECK(tf_config_get_string(again, "quoted_number", NULL, NULL, &s, &err) == 0 &&
        !strcmp(s, "123"));
  CHECK(tf_config_get_string(again, "empty_string", NULL, NULL, &s, &err) == 0 && !strcmp(s, ""));
  CHECK(tf_config_get_string(again, "tilde_string", NULL, NULL, &s, &err) == 0 && !strcmp(s, "~"));
  CHECK(tf_config_get_string(again, "null_value", NULL, NULL, &s, &err) == -1);
  CHECK(tf_config_get_string(again, "colon", NULL, NULL, &s, &err) == 0 && !strcmp(s, "a: b"));
  CHECK(tf_config_get_string(again, "hash", NULL, NULL, &s, &err) == 0 && !strcmp(s, "x # y"));
  CHECK(tf_config_get_string(again, "leading_space", NULL, NULL, &s, &err) == 0 &&
        !strcmp(s, "  padded"));
  CHECK(tf_config_get_string(again, "unicode", NULL, NULL, &s, &err) == 0 &&
        !strcmp(s, "\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xce\xbb"));
  CHECK(tf_config_get_string(again, "multi", NULL, NULL, &s, &err) == 0 &&
        !strcmp(s, "line one\nline two\n"));
  CHECK(tf_config_get_string(again, "escapes", NULL, NULL, &s, &err) == 0 &&
        !strcmp(s, "tab\there"));
  CHECK(tf_config_get_string(again, "strip", NULL, NULL, &s, &err) == 0 &&
        !strcmp(s, "no final newline\nhere"));
  CHECK(tf_config_get_string(again, "awkward", NULL, NULL, &s, &err) == 0 &&
        !strcmp(s, "\n starts with a newline \nand trailing space "));
  CHECK(tf_config_get_double(again, "key with spaces", NULL, 0, 1, &v, &err) == 0 && v == 1);
  CHECK(tf_config_has(again, "very.deep.map.k"));
  double list[3];
  size_t n;
  CHECK(tf_config_get_double_array(again, "list", NULL, 0, 3, list, 3, &n, &err) == 0 &&
        list[2] == -3e-7);
  CHECK_MSG(first, "list: [1, 2.5, -3e-7]", "name: lorenz\n");
  check_not_contains(first, "comment", __LINE__);

  char *sub = tf_config_dump_path(cfg, "very.deep");
  CHECK(sub && !strcmp(sub, "map:\n  k: v\n"));
  if (sub && strcmp(sub, "map:\n  k: v\n")) fprintf(stderr, "dump_path gave:\n%s", sub);
  free(sub);
  char *leaf = tf_config_dump_path(cfg, "name");
  CHECK_MSG(leaf, "lorenz");
  free(leaf);
  CHECK(tf_config_dump_path(cfg, "very.absent") == NULL);
  CHECK(tf_config_dump_path(cfg, "name.below") == NULL);

  free(first);
  free(second);
  tf_config_free(again);
  tf_config_free(cfg);
}

/* ---- overrides --------------------------------------------------------------------------- */

static void test_set(void) {
  tf_config *cfg = PARSE_OK(
      "model:\n"
      "  name: lorenz\n"
      "  params:\n"
      "    rho: 28\n"
      "integrator:\n"
      "  rtol: 1e-8\n");
  tf_error err;
  double v;
  long long i;
  const char *s;
  bool b;
  CHECK(tf_config_set(cfg, "model.params.rho=3", &err) == 0);
  CHECK(tf_config_get_double(cfg, "model.params.rho", NULL, 0, INFINITY, &v, &err) == 0 && v == 3);
  char where[256];
  CHECK(!strcmp(tf_config_where(cfg, "model.params.rho", where, sizeof where),
                "--set model.params.rho=3"));

  CHECK(tf_config_set(cfg, "integrator.rtol=abc", &err) == 0);
  CHECK(tf_config_get_double(cfg, "integrator.rtol", NULL, 0, 1, &v, &err) == -1);
  CHECK_MSG(err.msg,
            "--set integrator.rtol=abc: key 'integrator.rtol': expected a number, got 'abc'");

  CHECK(tf_config_set(cfg, "run.steps=1e6", &err) == 0);
  CHECK(tf_config_get_int(cfg, "run.steps", NULL, 1, LLONG_MAX, &i, &err) == 0 && i == 1000000);
  CHECK(tf_config_set(cfg, "run.flag=true", &err) == 0);
  CHECK(tf_config_get_bool(cfg, "run.flag", NULL, &b, &err) == 0 && b);
  CHECK(tf_config_set(cfg, "model.name=rossler", &err) == 0);
  CHECK(tf_config_get_string(cfg, "model.name", NULL, NULL, &s, &err) == 0 &&
        !strcmp(s, "rossler"));
  CHECK(tf_config_set(cfg, "initial.state=[1, 2, 3]", &err) == 0);
  double st[3];
  size_t n;
  CHECK(tf_config_get_double_array(cfg, "initial.state", NULL, 0, 3, st, 3, &n, &err) == 0 &&
        st[2] == 3);
  CHECK(tf_config_set(cfg, "a.b.c.d={x: 1, y: [2]}", &err) == 0);
  CHECK(tf_config_get_double(cfg, "a.b.c.d.x", NULL, 0, 1, &v, &err) == 0 && v == 1);
  CHECK(tf_config_set(cfg, "text='a: b'", &err) == 0);
  CHECK(tf_config_get_string(cfg, "text", NULL, NULL, &s, &err) == 0 && !strcmp(s, "a: b"));
  CHECK(tf_config_set(cfg, "eq=x=y", &err) == 0);
  CHECK(tf_config_get_string(cfg, "eq", NULL, NULL, &s, &err) == 0 && !strcmp(s, "x=y"));
  CHECK(tf_config_set(cfg, "blank=", &err) == 0);
  CHECK(tf_config_get_string(cfg, "blank", NULL, NULL, &s, &err) == -1);
  CHECK_MSG(err.msg, "--set blank=: key 'blank': expected a string, got an empty value");
  CHECK(tf_config_set(cfg, "model.params=7", &err) == 0); /* a mapping replaced by a scalar */
  CHECK(tf_config_get_double(cfg, "model.params.rho", NULL, 0, INFINITY, &v, &err) == -1);
  CHECK_MSG(err.msg, "--set model.params=7: key 'model.params': expected a mapping");

  CHECK(tf_config_set(cfg, "no_equals", &err) == -1);
  CHECK_MSG(err.msg, "--set no_equals: expected KEY=VALUE");
  CHECK(tf_config_set(cfg, "a..b=1", &err) == -1);
  CHECK_MSG(err.msg, "--set a..b=1: invalid key 'a..b'");
  CHECK(tf_config_set(cfg, "=1", &err) == -1);
  CHECK_MSG(err.msg, "--set =1: invalid key ''");
  CHECK(tf_config_set(cfg, "a b=1", &err) == -1);
  CHECK_MSG(err.msg, "invalid key 'a b'");
  CHECK(tf_config_set(cfg, "model.name.x=1", &err) == -1);
  CHECK_MSG(err.msg, "--set model.name.x=1: cannot set 'model.name.x': key 'model.name'",
            "--set model.name=rossler", "not a mapping");
  CHECK(tf_config_set(cfg, "initial.state.x=1", &err) == -1);
  CHECK_MSG(err.msg, "key 'initial.state'", "is a sequence, not a mapping");
  CHECK(tf_config_set(cfg, "x=[1, 2", &err) == -1);
  CHECK_MSG(err.msg, "--set x=[1, 2: YAML syntax error in the value");
  CHECK(tf_config_set(cfg, "x=a: 1", &err) == -1);
  CHECK_MSG(err.msg, "--set x=a: 1: the value must be a single YAML flow value");
  CHECK(tf_config_set(cfg, "x=- 1", &err) == -1);
  CHECK_MSG(err.msg, "the value must be a single YAML flow value");
  CHECK(tf_config_set(cfg, "x=&a 1", &err) == -1);
  CHECK_MSG(err.msg, "--set x=&a 1: anchors (&a) are not supported");
  CHECK(tf_config_set(cfg, "x={a: 1, a: 2}", &err) == -1);
  CHECK_MSG(err.msg, "--set x={a: 1, a: 2}: duplicate key 'a'");
  tf_config_free(cfg);

  /* An override that sets a key nobody reads is reported against the --set argument. */
  cfg = PARSE_OK("model:\n  name: x\n");
  CHECK(tf_config_set(cfg, "model.nmae=y", &err) == 0);
  CHECK(tf_config_get_string(cfg, "model.name", NULL, NULL, &s, &err) == 0);
  CHECK(tf_config_check_unused(cfg, &err) == -1);
  CHECK_MSG(err.msg, "--set model.nmae=y: unknown key 'model.nmae' (did you mean 'name'?)");
  char *dump = tf_config_dump(cfg);
  CHECK_MSG(dump, "model:\n  name: x\n  nmae: y\n");
  free(dump);
  tf_config_free(cfg);
}

/* ---- strict keys ------------------------------------------------------------------------- */

static void test_check_unused(void) {
  const char *text =
      "model:\n"           /* 1 */
      "  name: lorenz\n"   /* 2 */
      "  params:\n"        /* 3 */
      "    sigma: 10\n"    /* 4 */
      "    sigam: 11\n"    /* 5 */
      "integrator:\n"      /* 6 */
      "  method: dopri5\n" /* 7 */
      "  t_end: 1\n"       /* 8 */
      "  foo: 1\n"         /* 9 */
      "plots:\n"           /* 10 */
      "  style:\n"         /* 11 */
      "    color: red\n";  /* 12 */
  tf_config *cfg = PARSE_OK(text);
  tf_error err;
  const char *s;
  double v;
  CHECK(tf_config_check_unused(cfg, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:1: unknown key 'model' (this section is not used by the job)");
  CHECK(tf_config_get_string(cfg, "model.name", NULL, NULL, &s, &err) == 0);
  CHECK(tf_config_check_unused(cfg, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:3: unknown key 'model.params' (known here: name)");
  CHECK(tf_config_get_double(cfg, "model.params.sigma", NULL, 0, 100, &v, &err) == 0);
  CHECK(tf_config_check_unused(cfg, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:5: unknown key 'model.params.sigam' (did you mean 'sigma'?)");
  CHECK(tf_config_has(cfg, "model.params.sigam"));
  CHECK(tf_config_check_unused(cfg, &err) == -1); /* has() does not mark */
  tf_config_mark_used(cfg, "model.params.sigam");
  CHECK(tf_config_check_unused(cfg, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:6: unknown key 'integrator' (known here: model)");
  CHECK(tf_config_get_string(cfg, "integrator.method", NULL, NULL, &s, &err) == 0);
  CHECK(tf_config_get_double(cfg, "integrator.t_end", NULL, 0, 10, &v, &err) == 0);
  const double rtol = 1e-6;
  CHECK(tf_config_get_double(cfg, "integrator.rtol", &rtol, 0, 1, &v, &err) == 0);
  CHECK(tf_config_check_unused(cfg, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:9: unknown key 'integrator.foo' (known here: method, t_end, rtol)");
  tf_config_mark_used(cfg, "integrator.foo");
  CHECK(tf_config_check_unused(cfg, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:10: unknown key 'plots' (known here: model, integrator)");
  tf_config_mark_used(cfg, "plots");
  CHECK(tf_config_check_unused(cfg, &err) == 0);
  tf_config_free(cfg);

  /* Long keys allow more edits (a third of the length); the closest wins. */
  cfg = PARSE_OK("a:\n  flush_interval_seconds: 1\n  flsh_intervl_secnds: 2\n");
  CHECK(tf_config_get_double(cfg, "a.flush_interval_seconds", NULL, 0, 10, &v, &err) == 0);
  CHECK(tf_config_check_unused(cfg, &err) == -1);
  CHECK_MSG(err.msg,
            "t.yaml:3: unknown key 'a.flsh_intervl_secnds' (did you mean "
            "'flush_interval_seconds'?)");
  tf_config_free(cfg);

  cfg = PARSE_OK("a:\n  rtol: 1\n  atol: 1\n  rtl: 2\n");
  CHECK(tf_config_get_double(cfg, "a.rtol", NULL, 0, 10, &v, &err) == 0);
  CHECK(tf_config_get_double(cfg, "a.atol", NULL, 0, 10, &v, &err) == 0);
  CHECK(tf_config_check_unused(cfg, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:4: unknown key 'a.rtl' (did you mean 'rtol'?)");
  tf_config_free(cfg);

  /* An unused key whose value is a block below it is named by the key's line. */
  cfg = PARSE_OK("used: 1\nunused_list:\n  - 1\n  - 2\n");
  CHECK(tf_config_get_double(cfg, "used", NULL, 0, 10, &v, &err) == 0);
  CHECK(tf_config_check_unused(cfg, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:2: unknown key 'unused_list' (known here: used)");
  tf_config_free(cfg);
}

/* ---- where ------------------------------------------------------------------------------- */

static void test_where(void) {
  tf_config *cfg = PARSE_OK("model:\n  name: lorenz\n  params:\n    sigma: 10\n");
  char buf[256];
  CHECK(!strcmp(tf_config_where(cfg, "model.params.sigma", buf, sizeof buf), "t.yaml:4"));
  CHECK(!strcmp(tf_config_where(cfg, "model.params", buf, sizeof buf), "t.yaml:3"));
  CHECK(!strcmp(tf_config_where(cfg, "model.params.rho", buf, sizeof buf), "t.yaml:3"));
  CHECK(!strcmp(tf_config_where(cfg, "nothing.here", buf, sizeof buf), "t.yaml"));
  CHECK(!strcmp(tf_config_where(cfg, "model.name.deeper", buf, sizeof buf), "t.yaml:2"));
  char small[6];
  CHECK(!strcmp(tf_config_where(cfg, "model", small, sizeof small), "t.yam"));
  tf_config_free(cfg);
}

/* --resume compares configs by value: how a number or boolean is written does not matter,
 * a changed value, a missing key or an extra key does, and the first one is named. */
static void test_differs(void) {
  tf_config *a = PARSE_OK(
      "integrator:\n  t_end: 1.0\n  rtol: 1e-9\n  adaptive: true\ncodim2:\n  lag: 1e-9\n"
      "initial:\n  state: [1, 2.0]\n");
  tf_config *b = PARSE_OK(
      "initial:\n  state: [1.0, 2]\ncodim2:\n  lag: 0.000000001\n"
      "integrator:\n  adaptive: yes\n  rtol: 1.0e-9\n  t_end: 1\n");
  char key[128];
  CHECK(!tf_config_differs(a, b, "integrator", key, sizeof key));
  CHECK(!tf_config_differs(a, b, "codim2", key, sizeof key));
  CHECK(!tf_config_differs(a, b, "initial", key, sizeof key));
  tf_error err;
  CHECK(tf_config_set(b, "codim2.lag=2e-9", &err) == 0);
  CHECK(tf_config_differs(a, b, "codim2", key, sizeof key) && !strcmp(key, "codim2.lag"));
  CHECK(tf_config_set(b, "integrator.extra=1", &err) == 0);
  CHECK(tf_config_differs(a, b, "integrator", key, sizeof key) && !strcmp(key, "integrator.extra"));
  CHECK(tf_config_set(b, "initial.state=[1, 2, 3]", &err) == 0);
  CHECK(tf_config_differs(a, b, "initial", key, sizeof key) && !strcmp(key, "initial.state"));
  CHECK(tf_config_differs(a, b, "absent", key, sizeof key) == false);
  CHECK(tf_config_differs(a, b, "integrator.t_end", key, sizeof key) == false);
  tf_config *c = PARSE_OK("integrator:\n  t_end: .inf\n  rtol: 1e-9\n  adaptive: 1\n");
  CHECK(tf_config_differs(a, c, "integrator.t_end", key, sizeof key));
  CHECK(tf_config_differs(a, c, "integrator.adaptive", key, sizeof key)); /* 1 is no boolean */
  const char *names[4];
  CHECK(tf_config_used_keys(a, NULL, names, 4) == 0);
  double v;
  CHECK(tf_config_get_double(a, "codim2.lag", NULL, 0, 1, &v, &err) == 0);
  CHECK(tf_config_used_keys(a, NULL, names, 4) == 1 && !strcmp(names[0], "codim2"));
  CHECK(tf_config_get_double(a, "integrator.rtol", NULL, 0, 1, &v, &err) == 0);
  CHECK(tf_config_used_keys(a, "integrator", names, 4) == 1 && !strcmp(names[0], "rtol"));
  /* a key only the second config has and took as its default was added since the first was
   * written (a written config lists every key its run read): no difference; given, it is */
  tf_config *d = PARSE_OK("model:\n  params:\n    a: 1\n");
  const double zero = 0, one = 1;
  CHECK(tf_config_get_double(d, "model.params.added", &zero, 0, 1, &v, &err) == 0 && v == 0);
  tf_config *written = PARSE_OK("model:\n  params:\n    a: 1.0\n");
  CHECK(!tf_config_differs(written, d, "model", key, sizeof key));
  /* the other way round it is a key the file had and the current config lacks */
  CHECK(tf_config_differs(d, written, "model", key, sizeof key) &&
        !strcmp(key, "model.params.added"));
  tf_config *given = PARSE_OK("model:\n  params:\n    a: 1\n    added: 0\n");
  CHECK(tf_config_differs(written, given, "model", key, sizeof key) &&
        !strcmp(key, "model.params.added"));
  tf_config *set = PARSE_OK("model:\n  params:\n    a: 1\n");
  CHECK(tf_config_set(set, "model.params.added=0", &err) == 0);
  CHECK(tf_config_get_double(set, "model.params.added", &one, 0, 1, &v, &err) == 0 && v == 0);
  CHECK(tf_config_differs(written, set, "model", key, sizeof key) &&
        !strcmp(key, "model.params.added"));
  tf_config_free(d), tf_config_free(written), tf_config_free(given), tf_config_free(set);
  tf_config_free(a), tf_config_free(b), tf_config_free(c);
}

/* A decimal beyond double precision is not quietly infinite. */
static void test_overflow(void) {
  tf_config *cfg = PARSE_OK("integrator:\n  atol: 1e400\n  rtol: .inf\n");
  tf_error err;
  double v;
  CHECK(tf_config_get_double(cfg, "integrator.atol", NULL, 0, INFINITY, &v, &err) == -1);
  CHECK_MSG(err.msg, "t.yaml:2", "integrator.atol", "beyond the range of double precision");
  CHECK(tf_config_get_double(cfg, "integrator.rtol", NULL, 0, INFINITY, &v, &err) == 0 && isinf(v));
  tf_config_free(cfg);
}

int main(void) {
  test_differs();
  test_overflow();
  test_load_file();
  test_syntax_errors();
  test_document_shape();
  test_duplicates_and_unsupported();
  test_get_double();
  test_get_int();
  test_get_bool();
  test_get_string();
  test_get_double_array();
  test_defaults();
  test_round_trip();
  test_set();
  test_check_unused();
  test_where();
  tf_config_free(NULL);
  if (failures) {
    fprintf(stderr, "test_config: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("test_config: all %d checks passed\n", checks);
  return 0;
}
