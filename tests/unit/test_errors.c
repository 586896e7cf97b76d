/* test_errors.c — an error's code is set where it is raised and survives the callers that add
 * what they know; the executable's exit status follows from the code alone (docs/CONFIG.md:
 * 1 runtime error, 2 bad usage, config or input, 3 interrupted, 4 members failed, 5 the model
 * cannot be set up, 6 the output cannot be written, 7 internal error), through the library
 * entry point as through `twofold run`. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli.h"
#include "config.h"
#include "error.h"
#include "exit_policy.h"
#include "h5io.h"
#include "integrator_settings.h"
#include "kernel.h"
#include "lock.h"
#include "lyapunov.h"
#include "model.h"
#include "model_def.h"
#include "param_grid.h"
#include "plugin.h"
#include "smooth.h"
#include "twofold/twofold.h"

static void test_raise_and_wrap(void) {
  tf_error err = {0};
  CHECK(tf_fail(&err, "plain %d", 1) == -1 && tf_error_code_of(&err) == TF_ERR_RUNTIME,
        "tf_fail: a runtime error");
  CHECK(tf_fail_code(&err, TF_ERR_CONFIG, "bad %s", "key") == -1 &&
            tf_error_code_of(&err) == TF_ERR_CONFIG && strcmp(err.msg, "bad key") == 0,
        "tf_fail_code: its code and message");
  char why[TF_ERROR_MAX];
  snprintf(why, sizeof why, "%s", err.msg);
  tf_fail_more(&err, "setting up: %s", why);
  CHECK(tf_error_code_of(&err) == TF_ERR_CONFIG && strcmp(err.msg, "setting up: bad key") == 0,
        "tf_fail_more keeps the code: %d '%s'", err.code, err.msg);
  err.code = 77; /* a buffer no tf_fail filled */
  CHECK(tf_error_code_of(&err) == TF_ERR_RUNTIME, "an unknown code reads as runtime");
  tf_error a = {0}, b = {0};
  tf_fail_code(&a, TF_ERR_IO, "x"), tf_fail_code(&b, TF_ERR_IO, "x");
  CHECK(tf_error_same(&a, &b), "same code and text: the same error");
  tf_fail_code(&b, TF_ERR_CONFIG, "x");
  CHECK(!tf_error_same(&a, &b), "another code: another error");
}

/* The config layer raises its own codes, and a reader that wraps them (param_grid.c names the
 * model's parameters) keeps them. */
static void test_config_codes(void) {
  tf_error err = {0};
  CHECK(!tf_config_load("/nonexistent/dir/none.yaml", &err) &&
            tf_error_code_of(&err) == TF_ERR_INPUT_FILE,
        "an unopenable config: %d '%s'", err.code, err.msg);
  tf_config *cfg = tf_config_parse_string("scan:\n  x:\n    param: nosuch\n", "t.yaml", &err);
  CHECK(cfg != NULL, "parse: %s", err.msg);
  if (!cfg) return;
  double value;
  CHECK(tf_config_get_double(cfg, "scan.step", NULL, 0, 1, &value, &err) &&
            tf_error_code_of(&err) == TF_ERR_CONFIG_MISSING_KEY,
        "a required key: %d '%s'", err.code, err.msg);
  double params[1] = {1.0};
  const tf_model model = {.kernel = tf_kernel_find("harmonic"), .params = params};
  tf_param_grid grid;
  memset(&grid, 0, sizeof grid);
  CHECK(model.kernel && tf_param_grid_from_config(&grid, cfg, "scan", &model, false, &err) &&
            tf_error_code_of(&err) == TF_ERR_CONFIG && strstr(err.msg, "key 'scan.x.param'") &&
            strstr(err.msg, "(the parameters of model 'harmonic')"),
        "the getter's error wrapped by the grid: %d '%s'", err.code, err.msg);
  tf_param_grid_destroy(&grid);
  tf_config_free(cfg);
}

static void test_exit_status(void) {
  tf_error err = {0};
  static const struct {
    tf_error_code code;
    int status;
  } failed[] = {{TF_ERR_RUNTIME, 1},    {TF_ERR_IO, 6},
                {TF_ERR_CONFIG, 2},     {TF_ERR_CONFIG_MISSING_KEY, 2},
                {TF_ERR_INPUT_FILE, 2}, {TF_ERR_MODEL, 5},
                {TF_ERR_INTERNAL, 7}};
  for (size_t i = 0; i < sizeof failed / sizeof *failed; i++) {
    tf_fail_code(&err, failed[i].code, "x");
    CHECK(tf_exit_status(-1, &err, TF_RUN_COMPLETE) == failed[i].status, "code %d exits %d",
          failed[i].code, failed[i].status);
  }
  CHECK(tf_exit_status(0, &err, TF_RUN_COMPLETE) == 0, "complete: 0, whatever err holds");
  CHECK(tf_exit_status(0, &err, TF_RUN_INTERRUPTED) == 3, "interrupted: 3");
  CHECK(tf_exit_status(0, &err, TF_RUN_MEMBERS_FAILED) == 4, "members failed: 4");
  CHECK(TWOFOLD_ERROR == 1 && TWOFOLD_USAGE == 2 && TWOFOLD_INTERRUPTED == 3 &&
            TWOFOLD_MEMBERS_FAILED == 4 && TWOFOLD_MODEL == 5 && TWOFOLD_IO == 6 &&
            TWOFOLD_INTERNAL == 7,
        "the library's statuses are the exit statuses");
}

/* A model that refuses its parameters (jeffrey-oscillator's prepare: beta = 0 needs eps > 0),
 * a definition the checker refuses and a library that does not load are model setup failures,
 * not bad config; the config's own refusals stay config errors. */
static void test_model_codes(const char *dir) {
  tf_error err = {0};
  tf_config *cfg = tf_config_parse_string(
      "model:\n  name: jeffrey-oscillator\n  params: {beta: 0, eps: 0}\n", "m.yaml", &err);
  CHECK(cfg != NULL, "parse: %s", err.msg);
  tf_model model;
  memset(&model, 0, sizeof model);
  CHECK(cfg && tf_model_from_config(&model, cfg, MPI_COMM_SELF, TF_KINDS_ALL, "test", &err) &&
            tf_error_code_of(&err) == TF_ERR_MODEL && strstr(err.msg, "m.yaml:3") &&
            strstr(err.msg, "beta = 0 needs eps > 0"),
        "prepare refuses: a model error, located: %d '%s'", err.code, err.msg);
  tf_model_destroy(&model);
  tf_config_free(cfg);
  cfg = tf_config_parse_string("model:\n  name: harmonic\n  params: {omega: -1}\n", "c.yaml", &err);
  memset(&model, 0, sizeof model);
  CHECK(cfg && tf_model_from_config(&model, cfg, MPI_COMM_SELF, TF_KINDS_ALL, "test", &err) &&
            tf_error_code_of(&err) == TF_ERR_CONFIG && strstr(err.msg, "omega"),
        "a parameter outside its bounds is the config's fault: %d '%s'", err.code, err.msg);
  tf_model_destroy(&model);
  tf_config_free(cfg);

  tf_model_def broken = *tf_kernel_find("harmonic");
  broken.dim = TF_MAX_DIM + 1;
  CHECK(tf_model_def_check(&broken, "test", &err) && tf_error_code_of(&err) == TF_ERR_MODEL,
        "a definition the checker refuses: %d '%s'", err.code, err.msg);

  char lib[4200];
  snprintf(lib, sizeof lib, "%s/garbage.so", dir);
  FILE *f = fopen(lib, "w");
  if (f) fputs("not a shared object\n", f), fclose(f);
  const tf_kernel *k = NULL;
  CHECK(tf_plugin_open_library(lib, NULL, &k, &err) && tf_error_code_of(&err) == TF_ERR_MODEL &&
            strstr(err.msg, "cannot be loaded"),
        "a library that does not load: %d '%s'", err.code, err.msg);
  CHECK(tf_plugin_open_library(lib, NULL, &k, &err) && tf_error_code_of(&err) == TF_ERR_MODEL,
        "asked again (the remembered failure keeps its code): %d '%s'", err.code, err.msg);
  unlink(lib);
}

/* Refusals of the user's input raised with the runtime code before (tf_exit_status 1; `twofold
 * run` said 2 only where the job's setup raised them): each now says TF_ERR_CONFIG, so exit
 * status 2 wherever it is met, and names the file, line and key. */
typedef struct refusal {
  const char *what, *yaml, *model, *key;
  int (*call)(tf_config *cfg, const tf_kernel *k, tf_error *err);
} refusal;

static int smoothing(tf_config *cfg, const tf_kernel *k, tf_error *err) {
  tf_smoothing s;
  return tf_smoothing_from_config(cfg, k, &s, err);
}
static int exit_weights(tf_config *cfg, const tf_kernel *k, tf_error *err) {
  (void)k;
  tf_exit_policy pol;
  const int rc = tf_exit_policy_from_config(&pol, cfg, err);
  tf_exit_policy_destroy(&pol);
  return rc;
}
static int map_interval(tf_config *cfg, const tf_kernel *k, tf_error *err) {
  tf_lyapunov_options o;
  return tf_lyapunov_options_from_config(cfg, k, &o, err);
}
static int t_end(tf_config *cfg, const tf_kernel *k, tf_error *err) {
  (void)k;
  tf_integrator_settings s;
  return tf_integrator_settings_read(cfg, 1.0, true, true, &s, err);
}
static int component(tf_config *cfg, const tf_kernel *k, tf_error *err) {
  return tf_kernel_component_of_key(k, cfg, "initial.sample.q", "q", err) < 0 ? -1 : 0;
}

static void test_input_codes(void) {
  static const refusal cases[] = {
      {"smoothing of width 0 (geometry/smooth.c)",
       "model:\n  name: jeffrey-oscillator\n  smoothing: {law: tanh, epsilon: 0}\n",
       "jeffrey-oscillator", "r.yaml:3: key 'model.smoothing.epsilon'", smoothing},
      {"a negative exit weight (geometry/exit_policy.c)",
       "exit:\n  policy: weighted\n  weights: [1, -1]\n", "harmonic",
       "r.yaml:3: key 'exit.weights'", exit_weights},
      {"a map's Lyapunov interval below one iteration (engine/lyapunov.c; exit 1 before, when "
       "the spectrum started)",
       "lyapunov:\n  duration: 100\n  interval: 0.3\n", "henon",
       "r.yaml:3: key 'lyapunov.interval'", map_interval},
      {"t_end before initial.time (step/integrator_settings.c)", "integrator:\n  t_end: 0.5\n",
       "harmonic", "r.yaml:2: key 'integrator.t_end'", t_end},
      {"an unknown state component (model/kernel.c)", "initial:\n  sample:\n    q: {normal: 1}\n",
       "harmonic", "r.yaml:3: key 'initial.sample.q'", component},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    tf_error err = {0};
    tf_config *cfg = tf_config_parse_string(cases[i].yaml, "r.yaml", &err);
    const tf_kernel *k = tf_kernel_find(cases[i].model);
    CHECK(cfg && k && cases[i].call(cfg, k, &err) && tf_error_code_of(&err) == TF_ERR_CONFIG &&
              tf_exit_status(-1, &err, TF_RUN_COMPLETE) == TF_EXIT_USAGE &&
              strstr(err.msg, cases[i].key),
          "%s: code %d, '%s' (want %s)", cases[i].what, err.code, err.msg, cases[i].key);
    tf_config_free(cfg);
  }
}

/* Files the user names: one that is missing, and a lock beside the output that is a link. */
static void test_file_codes(const char *dir) {
  char path[4200], lock[4300];
  tf_error err = {0};
  snprintf(path, sizeof path, "%s/none.h5", dir);
  CHECK(tf_h5_open_serial(path, &err) < 0 && tf_error_code_of(&err) == TF_ERR_CONFIG &&
            strstr(err.msg, path),
        "a missing results file (io/h5io.c): %d '%s'", err.code, err.msg);
  snprintf(path, sizeof path, "%s/out.h5", dir);
  snprintf(lock, sizeof lock, "%s.lock", path);
  CHECK(symlink("/nonexistent", lock) == 0, "link %s", lock);
  CHECK(tf_lock_take(path, &err) && tf_error_code_of(&err) == TF_ERR_CONFIG &&
            strstr(err.msg, "is a symbolic link"),
        "a lock that is a link (base/lock.c): %d '%s'", err.code, err.msg);
  unlink(lock);
}

/* A lock file the file system refuses is an I/O failure (/proc/self takes no new files, even
 * from root). */
static void test_io_codes(void) {
  tf_error err = {0};
  CHECK(tf_lock_take("/proc/self/none.h5", &err) && tf_error_code_of(&err) == TF_ERR_IO &&
            strstr(err.msg, "cannot create the lock file"),
        "an unwritable lock: %d '%s'", err.code, err.msg);
}

/* The whole path, through the library entry point: errors of each code end with their status. */
static void test_through_the_library(const char *dir) {
  char missing[4200], config[4200], output[4200], msg[TF_ERROR_MAX];
  snprintf(missing, sizeof missing, "%s/none.yaml", dir);
  CHECK(twofold_run_config(MPI_COMM_SELF, missing, NULL, NULL, msg, sizeof msg) == TWOFOLD_USAGE &&
            strstr(msg, "cannot open"),
        "no config file: usage (%s)", msg);
  snprintf(config, sizeof config, "%s/miss.yaml", dir);
  FILE *f = fopen(config, "w");
  CHECK(f != NULL, "write %s", config);
  if (!f) return;
  fprintf(f, "job: trajectory\nmodle:\n  name: harmonic\n");
  fclose(f);
  CHECK(twofold_run_config(MPI_COMM_SELF, config, NULL, NULL, msg, sizeof msg) == TWOFOLD_USAGE &&
            strstr(msg, "missing required key") && strstr(msg, "note:") &&
            strstr(msg, "unknown key 'modle'"),
        "a missing key: usage, the unread key pointed at (%s)", msg);
  snprintf(output, sizeof output, "%s/exists.h5", dir);
  f = fopen(output, "w");
  if (f) fclose(f);
  f = fopen(config, "w");
  if (!f) return;
  fprintf(f, "job: trajectory\nmodel:\n  name: harmonic\nintegrator:\n  t_end: 1\n");
  fclose(f);
  CHECK(twofold_run_config(MPI_COMM_SELF, config, output, NULL, msg, sizeof msg) == TWOFOLD_USAGE &&
            strstr(msg, "already exists"),
        "an existing output (refused by the results layer, marked as input): usage (%s)", msg);
  unlink(output);
  CHECK(twofold_run_config(MPI_COMM_SELF, config, "/proc/self/none.h5", NULL, msg, sizeof msg) ==
                TWOFOLD_IO &&
            strstr(msg, "cannot write '/proc/self/none.h5'"),
        "an output the file system refuses: I/O (%s)", msg);
  f = fopen(config, "w");
  if (!f) return;
  fprintf(f,
          "job: trajectory\nmodel:\n  name: jeffrey-oscillator\n  params: {beta: 0, eps: "
          "0}\nintegrator:\n  t_end: 1\n");
  fclose(f);
  CHECK(twofold_run_config(MPI_COMM_SELF, config, output, NULL, msg, sizeof msg) == TWOFOLD_MODEL &&
            strstr(msg, "beta = 0 needs eps > 0") && access(output, F_OK) != 0,
        "a model refusing its parameters: model, nothing written (%s)", msg);
  unlink(output), unlink(config);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  test_raise_and_wrap();
  test_config_codes();
  test_exit_status();
  test_io_codes();
  test_input_codes();
  char dir[] = "/tmp/test_errors.XXXXXX";
  if (mkdtemp(dir)) {
    test_file_codes(dir);
    test_model_codes(dir);
    test_through_the_library(dir);
    rmdir(dir);
  }
  MPI_Finalize();
  return check_report("test_errors");
}
