/* test_failures.c — which statuses are failures, the verdict on a run at the limits of
 * run.max_failed_fraction, and the per-status list with the first ids, against values worked
 * out by hand. */
#include <string.h>

#include "check.h"
#include "failures.h"

static void test_which_fail(void) {
  /* the engine could not reach the end the model defines: failed */
  const int failed[] = {TF_MEMBER_NONFINITE, TF_MEMBER_MAX_STEPS, TF_MEMBER_STEP_UNDERFLOW,
                        TF_MEMBER_ZENO,      TF_MEMBER_FAILED,    TF_MEMBER_CRASHED,
                        TF_MEMBER_TIMEOUT};
  /* the end time, or the model's own end: not failed; pending: not done */
  const int not_failed[] = {TF_MEMBER_PENDING, TF_MEMBER_OK, TF_MEMBER_CODIM2, TF_MEMBER_ILL_POSED};
  for (size_t i = 0; i < sizeof failed / sizeof *failed; i++)
    CHECK(tf_member_status_failed(failed[i]), "%s is a failure", tf_member_status_name(failed[i]));
  for (size_t i = 0; i < sizeof not_failed / sizeof *not_failed; i++)
    CHECK(!tf_member_status_failed(not_failed[i]), "%s is no failure",
          tf_member_status_name(not_failed[i]));
  CHECK(sizeof failed / sizeof *failed + sizeof not_failed / sizeof *not_failed ==
            TF_MEMBER_STATUS_COUNT,
        "every status decided");
}

static void test_verdict(void) {
  CHECK(!tf_failures_fail_run(0, 200, 0.0), "nothing failed: never");
  CHECK(tf_failures_fail_run(200, 200, 1.0), "all failed: even at fraction 1");
  CHECK(!tf_failures_fail_run(199, 200, 1.0), "199 of 200 at the default 1: no");
  CHECK(tf_failures_fail_run(1, 200, 0.0), "fraction 0: any failure");
  CHECK(!tf_failures_fail_run(100, 200, 0.5), "exactly half at 0.5: not more than it");
  CHECK(tf_failures_fail_run(101, 200, 0.5), "101 of 200 at 0.5: more");
  CHECK(tf_failures_fail_run(1, 1, 1.0), "the one member failed");
}

static void test_describe(void) {
  tf_failures f = {.have_ids = true};
  const int status[] = {1, 2, 2, 7, 2, 3, 2, 8, 2, 2, 2, 1};
  for (size_t i = 0; i < sizeof status / sizeof *status; i++)
    tf_failures_add(&f, 10 + i, status[i]);
  CHECK(tf_failures_done(&f) == 12, "12 done, got %lld", tf_failures_done(&f));
  CHECK(tf_failures_failed(&f) == 8, "7 nonfinite + 1 max_steps, got %lld", tf_failures_failed(&f));
  char text[256];
  tf_failures_describe(&f, text, sizeof text);
  const char *want = "nonfinite 7 (first: 11, 12, 14, 16, 18, ...), max_steps 1 (members: 15)";
  CHECK(!strcmp(text, want), "'%s', want '%s'", text, want);
  f.have_ids = false;
  tf_failures_describe(&f, text, sizeof text);
  CHECK(!strcmp(text, "nonfinite 7, max_steps 1"), "without ids: '%s'", text);
  char small[20];
  f.have_ids = true;
  tf_failures_describe(&f, small, sizeof small);
  CHECK(strlen(small) == sizeof small - 1, "cut to the buffer: '%s'", small);
}

int main(void) {
  test_which_fail();
  test_verdict();
  test_describe();
  return check_report("test_failures");
}
