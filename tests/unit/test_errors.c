/* test_errors.c — an error's code is set where it is raised and survives the callers that add
 * what they know; the executable's exit status follows from the code alone (docs/CONFIG.md:
 * 1 runtime error, 2 bad usage, config or input, 3 interrupted, 4 members failed), through the
 * library entry point as through `twofold run`. */
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
#include "model.h"
#include "param_grid.h"
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
  } failed[] = {{TF_ERR_RUNTIME, 1},
                {TF_ERR_IO, 1},
                {TF_ERR_CONFIG, 2},
                {TF_ERR_CONFIG_MISSING_KEY, 2},
                {TF_ERR_INPUT_FILE, 2}};
  for (size_t i = 0; i < sizeof failed / sizeof *failed; i++) {
    tf_fail_code(&err, failed[i].code, "x");
    CHECK(tf_exit_status(-1, &err, TF_RUN_COMPLETE) == failed[i].status, "code %d exits %d",
          failed[i].code, failed[i].status);
  }
  CHECK(tf_exit_status(0, &err, TF_RUN_COMPLETE) == 0, "complete: 0, whatever err holds");
  CHECK(tf_exit_status(0, &err, TF_RUN_INTERRUPTED) == 3, "interrupted: 3");
  CHECK(tf_exit_status(0, &err, TF_RUN_MEMBERS_FAILED) == 4, "members failed: 4");
  CHECK(TWOFOLD_ERROR == 1 && TWOFOLD_USAGE == 2 && TWOFOLD_INTERRUPTED == 3 &&
            TWOFOLD_MEMBERS_FAILED == 4,
        "the library's statuses are the exit statuses");
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
  unlink(output), unlink(config);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  test_raise_and_wrap();
  test_config_codes();
  test_exit_status();
  char dir[] = "/tmp/test_errors.XXXXXX";
  if (mkdtemp(dir)) {
    test_through_the_library(dir);
    rmdir(dir);
  }
  MPI_Finalize();
  return check_report("test_errors");
}
