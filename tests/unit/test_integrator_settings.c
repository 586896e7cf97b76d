/* test_integrator_settings.c — the integrator: section's one table of keys against
 * docs/CONFIG.md (every key of the table has a row there, with the same default), the reader
 * against a config (defaults, values, the stepper type named by integrator.method), and its
 * messages (key, bounds, the registered types among the choices). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "integrator_settings.h"
#include "stepper_type.h"

static char *read_docs(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s", __FILE__); /* .../tests/unit/this.c */
  for (int up = 0; up < 3; up++) *strrchr(path, '/') = '\0';
  strcat(path, "/docs/CONFIG.md");
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  rewind(f);
  char *text = calloc((size_t)size + 1, 1);
  if (text && fread(text, 1, (size_t)size, f) != (size_t)size) text[0] = '\0';
  fclose(f);
  return text;
}

/* The row's default as the table would write it. */
static bool default_matches(const tf_integrator_key *k, const char *doc) {
  if (k->kind == TF_SETTING_STRING)
    return strcmp(doc, k->text) == 0 || (!k->text[0] && strcmp(doc, "\"\"") == 0);
  if (k->kind == TF_SETTING_BOOL) return strcmp(doc, k->def != 0 ? "true" : "false") == 0;
  if (isnan(k->def)) return false;
  char *end;
  const double v = strtod(doc, &end);
  return *end == '\0' && v == k->def;
}

/* Every row "| `key` | default |" of the docs for every key of the table. */
static void docs_agree(void) {
  char *docs = read_docs();
  CHECK(docs != NULL, "docs/CONFIG.md not found next to the tests");
  if (!docs) return;
  for (const tf_integrator_key *k = tf_integrator_keys; k->path; k++) {
    char head[128];
    snprintf(head, sizeof head, "| `%s` | ", k->path);
    int rows = 0;
    for (const char *p = strstr(docs, head); p; p = strstr(p + 1, head)) {
      const char *d = p + strlen(head), *end = strstr(d, " |");
      char doc[64] = "";
      if (end && end - d < (long)sizeof doc) memcpy(doc, d, (size_t)(end - d)), doc[end - d] = 0;
      const bool required = strcmp(doc, "required") == 0;
      if (doc[0] == '`' && strlen(doc) > 1)
        memmove(doc, doc + 1, strlen(doc)), doc[strlen(doc) - 1] = 0;
      CHECK(required ? isnan(k->def) : default_matches(k, doc),
            "docs/CONFIG.md gives %s the default '%s'", k->path, doc);
      rows++;
    }
    CHECK(rows > 0, "docs/CONFIG.md has no row for %s", k->path);
  }
  free(docs);
}

static tf_config *parse(const char *text) {
  tf_error err;
  tf_config *cfg = tf_config_parse_string(text, "t.yaml", &err);
  if (!cfg) {
    fprintf(stderr, "parse failed: %s\n", err.msg);
    exit(1);
  }
  return cfg;
}

static void reads(void) {
  tf_config *cfg = parse("integrator:\n  method: bs23\n  t_end: 4\n  rtol: 1e-6\n");
  tf_integrator_settings s;
  tf_error err;
  CHECK(tf_integrator_settings_read(cfg, 0.0, true, false, &s, &err) == 0, "%s", err.msg);
  CHECK(s.ode.type == tf_stepper_type_find("bs23") && strcmp(s.method, "bs23") == 0, "method");
  CHECK(s.t_end == 4.0 && s.ode.rtol == 1e-6 && s.ode.atol == 1e-10 && s.ode.h0 == 0.0 &&
            s.ode.max_steps == 1000000 && !s.ode.fixed_step,
        "values or defaults");
  tf_config_free(cfg);
  cfg = parse("integrator:\n  t_end: 1\n");
  CHECK(tf_integrator_settings_read(cfg, 0.0, true, true, &s, &err) == 0, "%s", err.msg);
  CHECK(strcmp(s.method, "auto") == 0 && s.ode.type == NULL, "the default method");
  tf_config_free(cfg);
}

static void messages(void) {
  tf_integrator_settings s;
  tf_error err;
  tf_config *cfg = parse("integrator:\n  rtol: 2\n");
  CHECK(tf_integrator_settings_read(cfg, 0.0, false, false, &s, &err) != 0, "rtol 2 accepted");
  CHECK(
      strstr(err.msg, "t.yaml:2") && strstr(err.msg, "integrator.rtol") && strstr(err.msg, "1e-15"),
      "message: %s", err.msg);
  tf_config_free(cfg);
  cfg = parse("integrator:\n  method: rk4\n");
  CHECK(tf_integrator_settings_read(cfg, 0.0, false, false, &s, &err) != 0, "rk4 accepted");
  CHECK(strstr(err.msg, "integrator.method") && strstr(err.msg, "dopri5, dop853, bs23") &&
            !strstr(err.msg, "milstein"),
        "message: %s", err.msg);
  tf_config_free(cfg);
  cfg = parse("integrator:\n  method: milstein\n");
  CHECK(tf_integrator_settings_read(cfg, 0.0, false, true, &s, &err) == 0, "%s", err.msg);
  CHECK(s.ode.type == NULL, "a flow method names no stepper type");
  tf_config_free(cfg);
}

/* A flow's method-specific keys: values where given, the documented defaults otherwise, and
 * integrator.normals listed in the config as run only where it was given. */
static void flow_keys(void) {
  tf_integrator_settings s;
  tf_error err;
  tf_config *cfg = parse(
      "integrator:\n  t_end: 1\n  dt: 0.01\n  theta: 0.75\n  milstein: true\n"
      "  normals: fast\n  rosenbrock: ros3p\n");
  CHECK(tf_integrator_settings_read(cfg, 0.0, true, true, &s, &err) == 0 &&
            tf_integrator_drift_implicit_read(cfg, &s, &err) == 0 &&
            tf_integrator_normals_read(cfg, &s, &err) == 0 &&
            tf_integrator_auto_rosenbrock_read(cfg, &s, &err) == 0,
        "%s", err.msg);
  CHECK(s.dt == 0.01 && s.theta == 0.75 && s.milstein && s.fast_normals &&
            s.ode.type == tf_stepper_type_find("ros3p"),
        "values");
  tf_config_free(cfg);
  cfg = parse("integrator:\n  t_end: 1\n");
  CHECK(tf_integrator_settings_read(cfg, 0.0, true, true, &s, &err) == 0 &&
            tf_integrator_normals_read(cfg, &s, &err) == 0 &&
            tf_integrator_drift_implicit_read(cfg, &s, &err) == 0,
        "%s", err.msg);
  CHECK(s.dt == 1e-3 && s.theta == 1.0 && !s.milstein && !s.fast_normals, "defaults");
  char *as_run = tf_config_dump(cfg);
  CHECK(as_run && strstr(as_run, "theta") && !strstr(as_run, "normals"), "as run: %s", as_run);
  free(as_run);
  tf_config_free(cfg);
}

/* A flow on petsc-ts: the integrator.ts keys' values, defaults (listed as run), refusals named
 * by file, line and key, and PETSc's effective type and options written back. */
static void ts_keys(void) {
  tf_integrator_settings s = {0};
  tf_error err;
  tf_config *cfg = parse(
      "integrator:\n  ts:\n    type: bdf\n    options: -ts_bdf_order 3\n    jacobian: fd\n"
      "    batch: 4\n    jacobian_lag: 8\n");
  CHECK(tf_integrator_ts_read(cfg, &s, &err) == 0, "%s", err.msg);
  CHECK(strcmp(s.ts.type, "bdf") == 0 && strcmp(s.ts.options, "-ts_bdf_order 3") == 0 &&
            s.ts_jacobian == TF_TS_JACOBIAN_FD && s.ts_batch == 4 && s.ts.jacobian_lag == 8,
        "values");
  tf_config_free(cfg);
  cfg = parse("integrator:\n  method: petsc-ts\n");
  tf_config_mark_used(cfg, "integrator.method");
  CHECK(tf_integrator_ts_read(cfg, &s, &err) == 0, "%s", err.msg);
  CHECK(strcmp(s.ts.type, "rosw") == 0 && s.ts.options[0] == '\0' &&
            s.ts_jacobian == TF_TS_JACOBIAN_AUTO && s.ts_batch == 16 && s.ts.jacobian_lag == 0,
        "defaults");
  /* PETSc ran bdf with more options than the config gave: the config as run says so */
  CHECK(tf_integrator_ts_record(cfg, &s, "bdf", "-ts_adapt_type basic", &err) == 0, "%s", err.msg);
  char *as_run = tf_config_dump(cfg);
  CHECK(as_run && strstr(as_run, "type: bdf") && strstr(as_run, "-ts_adapt_type basic") &&
            strstr(as_run, "batch: 16") && strcmp(s.ts.type, "bdf") == 0 &&
            strcmp(s.ts.options, "-ts_adapt_type basic") == 0,
        "as run: %s", as_run);
  free(as_run);
  CHECK(tf_config_check_unused(cfg, &err) == 0, "written back but unread: %s", err.msg);
  tf_config_free(cfg);
  static const struct {
    const char *yaml, *line, *key, *says;
  } bad[] = {
      {"integrator:\n  ts:\n    jacobian: exact\n", "t.yaml:3", "integrator.ts.jacobian", "fd"},
      {"integrator:\n  ts:\n    batch: 0\n", "t.yaml:3", "integrator.ts.batch", "4096"},
      {"integrator:\n  ts:\n    jacobian_lag: 2.5\n", "t.yaml:3", "integrator.ts.jacobian_lag",
       "integer"},
      {"integrator:\n  ts:\n    type: "
       "rosw-with-a-name-longer-than-the-sixty-four-characters-it-may-have\n",
       "t.yaml:2", "integrator.ts", "too long"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cfg = parse(bad[i].yaml);
    CHECK(tf_integrator_ts_read(cfg, &s, &err) != 0 && strstr(err.msg, bad[i].line) &&
              strstr(err.msg, bad[i].key) && strstr(err.msg, bad[i].says),
          "%s: %s", bad[i].key, err.msg);
    tf_config_free(cfg);
  }
  /* a misspelt key beside them is refused once the reader has read its section */
  cfg = parse("integrator:\n  ts:\n    tpye: bdf\n");
  CHECK(tf_integrator_ts_read(cfg, &s, &err) == 0, "%s", err.msg);
  CHECK(tf_config_check_unused(cfg, &err) != 0 && strstr(err.msg, "t.yaml:3") &&
            strstr(err.msg, "integrator.ts.tpye") && strstr(err.msg, "type"),
        "misspelt key: %s", err.msg);
  tf_config_free(cfg);
}

/* A map's t_end: a whole number of iterations after the first. */
static void iterations(void) {
  long long last = 0;
  tf_error err;
  tf_config *cfg = parse("integrator:\n  t_end: 10\n");
  CHECK(tf_integrator_iterations_read(cfg, 3, &last, &err) == 0 && last == 10, "%s", err.msg);
  CHECK(tf_integrator_iterations_read(cfg, 10, &last, &err) != 0 && strstr(err.msg, "t.yaml:2") &&
            strstr(err.msg, "integrator.t_end"),
        "t_end at the first iteration: %s", err.msg);
  tf_config_free(cfg);
  cfg = parse("integrator:\n  t_end: 2.5\n");
  CHECK(tf_integrator_iterations_read(cfg, 0, &last, &err) != 0 &&
            strstr(err.msg, "expected an integer"),
        "t_end 2.5: %s", err.msg);
  tf_config_free(cfg);
}

int main(void) {
  docs_agree();
  reads();
  messages();
  flow_keys();
  ts_keys();
  iterations();
  return check_report("test_integrator_settings");
}
