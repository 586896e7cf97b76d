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
#include "kernel.h"
#include "lock.h"
#include "model.h"
#include "model_def.h"
#include "param_grid.h"
#include "plugin.h"
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
  char dir[] = "/tmp/test_errors.XXXXXX";
  if (mkdtemp(dir)) {
    test_model_codes(dir);
    test_through_the_library(dir);
    rmdir(dir);
  }
  MPI_Finalize();
  return check_report("test_errors");
}
