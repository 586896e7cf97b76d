/* test_out_of_memory.c — running out of memory while reading a config or compiling
 * model.equations is an ordinary error, never an abort.  Each operation below is run once
 * undisturbed, then again for N = 0, 1, 2, ... with its Nth fallible call failing, until N
 * passes its last one.  Every run must fail with an "out of memory" message (or, once nothing
 * failed, give exactly what the undisturbed run gave), and free all it allocated.
 *
 * The allocator is replaced for this executable only, by the linker (-Wl,--wrap, in
 * tests/CMakeLists.txt): the engine's calls to malloc, calloc, realloc, strdup and strndup,
 * and the libyaml calls that allocate inside the shared library (which the linker cannot
 * reach into), failing the way libyaml reports it. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "check.h"
#include "config.h"
#include "equations.h"

/* ---- the failing allocator ------------------------------------------------------------------ */

static long calls;        /* fallible calls so far */
static long fail_at = -1; /* the call that fails; -1: none */
static bool failed;       /* that call was made */
static long live;         /* blocks from the wrapped allocators not yet freed */

static bool fail_now(void) {
  if (calls++ != fail_at) return false;
  failed = true;
  return true;
}

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void __real_free(void *p);
int __real_yaml_parser_initialize(yaml_parser_t *parser);
int __real_yaml_parser_parse(yaml_parser_t *parser, yaml_event_t *event);
int __real_yaml_emitter_initialize(yaml_emitter_t *emitter);
int __real_yaml_emitter_emit(yaml_emitter_t *emitter, yaml_event_t *event);
int __real_yaml_scalar_event_initialize(yaml_event_t *event, const yaml_char_t *anchor,
                                        const yaml_char_t *tag, const yaml_char_t *value,
                                        int length, int plain_implicit, int quoted_implicit,
                                        yaml_scalar_style_t style);

static void *counted(void *p) {
  live += p != NULL;
  return p;
}

void *__wrap_malloc(size_t size) {
  return fail_now() ? NULL : counted(__real_malloc(size));
}

void *__wrap_calloc(size_t n, size_t size) {
  return fail_now() ? NULL : counted(__real_calloc(n, size));
}

void *__wrap_realloc(void *p, size_t size) {
  if (fail_now()) return NULL;
  return p ? __real_realloc(p, size) : counted(__real_realloc(p, size));
}

char *__wrap_strdup(const char *s) {
  return fail_now() ? NULL : counted(__real_strdup(s));
}

char *__wrap_strndup(const char *s, size_t n) {
  return fail_now() ? NULL : counted(__real_strndup(s, n));
}

void __wrap_free(void *p) {
  live -= p != NULL;
  __real_free(p);
}

/* libyaml out of memory: the call returns 0 with the object's error set to
 * YAML_MEMORY_ERROR, as libyaml does. */
int __wrap_yaml_parser_initialize(yaml_parser_t *parser) {
  if (!fail_now()) return __real_yaml_parser_initialize(parser);
  memset(parser, 0, sizeof *parser);
  parser->error = YAML_MEMORY_ERROR;
  return 0;
}

int __wrap_yaml_parser_parse(yaml_parser_t *parser, yaml_event_t *event) {
  if (!fail_now()) return __real_yaml_parser_parse(parser, event);
  memset(event, 0, sizeof *event);
  parser->error = YAML_MEMORY_ERROR;
  return 0;
}

int __wrap_yaml_emitter_initialize(yaml_emitter_t *emitter) {
  if (!fail_now()) return __real_yaml_emitter_initialize(emitter);
  memset(emitter, 0, sizeof *emitter);
  emitter->error = YAML_MEMORY_ERROR;
  return 0;
}

/* libyaml frees an event it could not queue */
int __wrap_yaml_emitter_emit(yaml_emitter_t *emitter, yaml_event_t *event) {
  if (!fail_now()) return __real_yaml_emitter_emit(emitter, event);
  yaml_event_delete(event);
  emitter->error = YAML_MEMORY_ERROR;
  return 0;
}

int __wrap_yaml_scalar_event_initialize(yaml_event_t *event, const yaml_char_t *anchor,
                                        const yaml_char_t *tag, const yaml_char_t *value,
                                        int length, int plain_implicit, int quoted_implicit,
                                        yaml_scalar_style_t style) {
  return !fail_now() && __real_yaml_scalar_event_initialize(event, anchor, tag, value, length,
                                                            plain_implicit, quoted_implicit, style);
}

/* ---- the operations ------------------------------------------------------------------------- */

/* Each returns its results as one malloc'd text, or NULL with err filled. */
typedef char *(*operation)(tf_error *err);

/* a + b (both freed), or NULL if either is NULL; the test's own allocation never fails */
static char *join(char *a, char *b) {
  char *both = a && b ? counted(__real_malloc(strlen(a) + strlen(b) + 1)) : NULL;
  if (both) strcat(strcpy(both, a), b);
  free(a);
  free(b);
  return both;
}

static char *no_text(tf_error *err, const char *what) {
  snprintf(err->msg, sizeof err->msg, "%s returned NULL (documented: out of memory)", what);
  return NULL;
}

/* The generated C of the config's model.equations, after its dump_path. */
static char *equations_of(tf_config *cfg, tf_error *err) {
  char *source = NULL;
  const char *name;
  if (tf_equations_source(cfg, &source, &name, err)) return NULL;
  char *section = tf_config_dump_path(cfg, "model.equations");
  if (section) return join(section, source);
  free(source);
  return no_text(err, "tf_config_dump_path");
}

/* What a run does with its config before it starts: load, --set overrides (replacing a value,
 * creating mappings, an empty value), getters whose defaults are inserted (with missing
 * mappings above them), the directory of a merged file, the dump for the results file, and the
 * model's equations compiled to C. */
static int read_as_a_run(tf_config *cfg, tf_error *err) {
  const char *sets[] = {"integrator.rtol=1e-9", "model.equations.parameters.lam.default=3",
                        "lyapunov.options.extra={a: [1, 2.5], b: {c: x}}", "output.note="};
  for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
    if (tf_config_set(cfg, sets[i], err)) return -1;
  const double dt_max = 0.5, box[3] = {-1, 0, 1};
  const long long steps = 1000000;
  const bool compress = true;
  double x, lower[3], state[3];
  long long n;
  bool b;
  const char *s;
  size_t count;
  return tf_config_get_double(cfg, "integrator.atol", NULL, 0, 1, &x, err) ||
                 tf_config_get_double(cfg, "integrator.dt_max", &dt_max, 0, 1, &x, err) ||
                 tf_config_get_int(cfg, "run.limits.max_steps", &steps, 1, LLONG_MAX, &n, err) ||
                 tf_config_get_bool(cfg, "output.compress", &compress, &b, err) ||
                 tf_config_get_string(cfg, "sampling.method", "grid", NULL, &s, err) ||
                 tf_config_get_double_array(cfg, "initial.state", NULL, 0, 3, state, 3, &count,
                                            err) ||
                 tf_config_get_double_array(cfg, "sampling.box.lower", box, 3, 3, lower, 3, &count,
                                            err) ||
                 tf_config_set_dir(cfg, "/elsewhere/configs", err)
             ? -1
             : 0;
}

static char *relay_feedback(tf_error *err) {
  tf_config *cfg = tf_config_load(CONFIGS_DIR "/relay-feedback.yaml", err);
  char *text = NULL;
  if (cfg && !read_as_a_run(cfg, err)) {
    text = tf_config_dump(cfg);
    text = text ? join(text, equations_of(cfg, err)) : no_text(err, "tf_config_dump");
  }
  tf_config_free(cfg);
  return text;
}

static char *equations_text(const char *yaml, tf_error *err) {
  tf_config *cfg = tf_config_parse_string(yaml, "m.yaml", err);
  char *text = cfg ? equations_of(cfg, err) : NULL;
  tf_config_free(cfg);
  return text;
}

/* A flow with noise (dg/dx), large enough that its derivatives fill several blocks of the
 * expression pool. */
static char *noisy_flow(tf_error *err) {
  return equations_text(
      "model:\n  equations:\n    name: noisy\n    state: [x, v, w]\n"
      "    parameters: {k: 2, s: {default: 0.1, min: 0, doc: noise}}\n"
      "    field:\n"
      "      x: v*cos(w) - atan2(x, 1 + v^2)\n"
      "      v: -k*sin(x)*tanh(v*w) + max(x, v)^3/(1 + exp(-x*w)) - pow(abs(v), 1.5)\n"
      "      w: min(x*v, w)/sqrt(2 + x^2 + v^2) - log(1 + w^2)*asin(0.5*tanh(x))\n"
      "    noise: {v: s*sqrt(1 + x^2), w: s*cosh(w)/(1 + w^2)}\n",
      err);
}

/* A flow without noise: its field is printed for lanes too. */
static char *lanes_flow(tf_error *err) {
  return equations_text(
      "model:\n  equations:\n    state: [x, y, z]\n"
      "    parameters: {sigma: 10, rho: 28, beta: 2.6666666666666665}\n"
      "    field: {x: sigma*(y - x), y: x*(rho - z) - y, z: x*y - beta*z}\n",
      err);
}

/* Two switching functions: the affinity check differentiates the field in the signs. */
static char *switches(tf_error *err) {
  return equations_text(
      "model:\n  equations:\n    state: [x, v]\n    parameters: {k: 2}\n"
      "    switching: {s1: v - 1, s2: x}\n"
      "    field: {x: v, v: \"(1 + x)*(s1*k - v*s2) + s1/(2 + x^2)\"}\n",
      err);
}

/* ---- every allocation failing in turn ------------------------------------------------------ */

enum { MAX_CALLS = 100000 };

static void fail_each_call(const char *what, operation op) {
  tf_error err = {0};
  calls = 0;
  char *want = op(&err);
  const long total = calls;
  CHECK(want, "%s: fails undisturbed: %s", what, err.msg);
  long n = 0;
  for (bool hit = true; want && hit && n < MAX_CALLS; n++) {
    const long before = live;
    calls = 0, fail_at = n, failed = false;
    snprintf(err.msg, sizeof err.msg, "(no message)");
    char *got = op(&err);
    fail_at = -1;
    hit = failed;
    if (!hit)
      CHECK(got && !strcmp(got, want), "%s: differs from the undisturbed run", what);
    else
      CHECK(!got && strstr(err.msg, "out of memory"),
            "%s: call %ld failing gives %s with message '%s'", what, n,
            got ? "success" : "an error", got ? "" : err.msg);
    free(got);
    CHECK(live == before, "%s: call %ld failing leaves %ld blocks allocated", what, n,
          live - before);
  }
  CHECK(n == total + 1, "%s: %ld fallible calls undisturbed, %ld runs", what, total, n);
  printf("%s: each of %ld fallible calls failed in turn\n", what, total);
  free(want);
}

int main(void) {
  fail_each_call("relay-feedback.yaml", relay_feedback);
  fail_each_call("a noisy flow", noisy_flow);
  fail_each_call("a flow in lanes", lanes_flow);
  fail_each_call("two switching functions", switches);
  return check_report("test_out_of_memory");
}
