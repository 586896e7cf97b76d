/* test_member_counts.c — the counts an integration makes (tf_counts, counts.h) reach the member
 * result whole, and its output columns by name (member_columns.c), against numbers the
 * methods fix:
 *   DOPRI5 on fixed steps h = 1/8 to t = 1 (harmonic oscillator, flow route): 8 steps, none
 *     rejected, and 1 + 6 x 8 = 49 evaluations of the field (one at the start, then six per
 *     step: seven stages, the first the last one's, FSAL);
 *   DOPRI5 under error control from a given first step (so no estimate of one): six
 *     evaluations per attempt, accepted or rejected, plus the start's: 1 + 6 (steps +
 *     rejected), a first step of 1 (a third of the period) being rejected;
 *   a map iterated from n = 3 to n = 40 (map route): 37 steps, nothing else counted;
 *   the relay (Filippov route, event loop): the columns steps, rejected_steps and rhs_evals
 *     are the result's counts, and the evaluations at least six per attempt. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "member_columns.h"
#include "testlib.h"

/* Runs member 0 of yaml and writes the columns steps, rejected_steps and rhs_evals the route
 * has into col[0..2] (-1 where it has none). */
static int run(const char *yaml, tf_member_result *r, int64_t col[3]) {
  tf_member_engine *e = test_member_engine(yaml, "counts.yaml", NULL, NULL);
  if (!e) return -1;
  double final[4];
  tf_member_engine_run(e, 0, &(tf_member_buffers){.final = final}, r);
  const char *const names[] = {"steps", "rejected_steps", "rhs_evals", NULL};
  tf_member_columns c;
  CHECK(tf_member_columns_pick(&c, e, names) == 0, "columns picked");
  int64_t slot[3] = {-1, -1, -1};
  void *row[3];
  for (size_t i = 0; i < c.n; i++) row[i] = &slot[i];
  tf_member_columns_fill(&c, &e->layout, r, row);
  for (int i = 0; i < 3; i++) {
    const int at = tf_member_columns_find(&c, names[i]);
    col[i] = at < 0 ? -1 : slot[at];
  }
  tf_member_engine_destroy(e);
  return 0;
}

static void test_fixed_steps(void) {
  tf_member_result r;
  int64_t col[3];
  if (run("model: {name: harmonic, params: {omega: 2}}\ninitial: {state: [1, 0.5]}\n"
          "integrator: {method: dopri5, step: fixed, h0: 0.125, t_end: 1}\n",
          &r, col))
    return;
  CHECK(r.status == 1 && r.work.steps == 8 && r.work.rejected == 0 && r.work.rhs_evals == 49,
        "fixed steps: status %d, %ld steps, %ld rejected, %ld evaluations (8, 0, 49)", r.status,
        r.work.steps, r.work.rejected, r.work.rhs_evals);
  CHECK(col[0] == 8 && col[1] == 0 && col[2] == -1,
        "fixed steps: columns steps %lld, rejected_steps %lld, no rhs_evals (%lld)",
        (long long)col[0], (long long)col[1], (long long)col[2]);
}

static void test_error_control(void) {
  tf_member_result r;
  int64_t col[3];
  if (run("model: {name: harmonic, params: {omega: 2}}\ninitial: {state: [1, 0.5]}\n"
          "integrator: {method: dopri5, rtol: 1e-3, atol: 1e-6, h0: 1, t_end: 10}\n",
          &r, col))
    return;
  const long attempts = r.work.steps + r.work.rejected;
  printf("error control: %ld steps, %ld rejected, %ld evaluations\n", r.work.steps, r.work.rejected,
         r.work.rhs_evals);
  CHECK(r.status == 1 && r.work.rejected > 0 && r.work.rhs_evals == 1 + 6 * attempts,
        "error control: %ld evaluations for %ld attempts (1 + 6 per attempt with h0 given)",
        r.work.rhs_evals, attempts);
  CHECK(col[0] == r.work.steps && col[1] == r.work.rejected, "error control: the columns");
}

static void test_map(void) {
  tf_member_result r;
  int64_t col[3];
  if (run("model: {name: henon, params: {a: 1.4, b: 0.3}}\n"
          "initial: {state: [0.1, 0.1], time: 3}\nintegrator: {t_end: 40}\n",
          &r, col))
    return;
  CHECK(r.status == 1 && r.work.steps == 37 && r.work.rejected == 0 && r.work.rhs_evals == 0,
        "map: status %d, %ld steps (37), %ld rejected, %ld evaluations", r.status, r.work.steps,
        r.work.rejected, r.work.rhs_evals);
  CHECK(col[0] == 37 && col[1] == 0 && col[2] == -1, "map: columns %lld %lld %lld",
        (long long)col[0], (long long)col[1], (long long)col[2]);
}

static void test_relay(void) {
  tf_member_result r;
  int64_t col[3];
  if (run("model: {name: relay, params: {a: 1}}\ninitial: {state: [1, -3]}\n"
          "integrator: {t_end: 6.3}\n",
          &r, col))
    return;
  printf("relay: %ld steps, %ld rejected, %ld evaluations\n", r.work.steps, r.work.rejected,
         r.work.rhs_evals);
  CHECK(
      r.status == 1 && r.work.steps > 0 && r.work.rhs_evals >= 6 * (r.work.steps + r.work.rejected),
      "relay: %ld evaluations for %ld steps", r.work.rhs_evals, r.work.steps);
  CHECK(col[0] == r.work.steps && col[1] == r.work.rejected && col[2] == r.work.rhs_evals,
        "relay: the columns are the result's counts");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  test_fixed_steps();
  test_error_control();
  test_map();
  test_relay();
  MPI_Finalize();
  return check_report("test_member_counts");
}
