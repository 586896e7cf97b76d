/* trajectory.c — job `trajectory`: one member, sampled in time.
 *
 * Traces member ensemble.member (default 0) of the same problem an `ensemble` job would
 * run, so its last sample equals that member's final state in an ensemble file.
 * Output: /trajectory/t (samples) and /trajectory/state (samples x dim), sampled at
 * output.samples equally spaced times (dense output for DOPRI5, the nearest step for SDE
 * schemes).  Runs on rank 0; other ranks only join the collective file operations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "h5io.h"
#include "job.h"
#include "results.h"
#include "status.h"

typedef struct trajectory_job {
  tf_flow flow;
  long long member, samples;
  int compression;
  double *t, *x;
  long n_taken;
  char state_names[512];
} trajectory_job;

static int setup(tf_run *run, tf_error *err) {
  trajectory_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  const long long d_member = 0, d_samples = 1001;
  if (tf_flow_from_config(&job->flow, run->cfg, err) ||
      tf_config_get_int(run->cfg, "ensemble.member", &d_member, 0, LLONG_MAX, &job->member, err) ||
      tf_config_get_int(run->cfg, "output.samples", &d_samples, 2, 100000000LL, &job->samples,
                        err) ||
      tf_job_output_from_config(run, &job->compression, NULL, err))
    return -1;
  tf_join_state_names(job->flow.kernel, job->state_names, sizeof job->state_names);
  /* An ensemble config turned into a trajectory (--set job=trajectory) keeps its ensemble
   * size and chunking; they are meaningless here, not wrong. */
  tf_config_mark_used(run->cfg, "ensemble.members");
  tf_config_mark_used(run->cfg, "ensemble.chunk");
  tf_config_mark_used(run->cfg, "output.flush_interval");
  return 0;
}

static void record(void *ctx, double t, const double *x) {
  trajectory_job *job = ctx;
  if (job->n_taken >= job->samples) return;
  const size_t dim = job->flow.kernel->dim;
  job->t[job->n_taken] = t;
  memcpy(job->x + (size_t)job->n_taken * dim, x, dim * sizeof *x);
  job->n_taken++;
}

static int execute(tf_run *run, tf_error *err) {
  trajectory_job *job = run->job_data;
  const size_t dim = job->flow.kernel->dim;
  const uint64_t n = (uint64_t)job->samples;
  tf_flow_result res = {0};
  double *final = calloc(dim, sizeof *final);
  if (run->rank == 0) {
    job->t = malloc(n * sizeof *job->t);
    job->x = malloc(n * dim * sizeof *job->x);
    if (!job->t || !job->x || !final)
      return tf_fail(err, "out of memory for %llu samples", job->samples);
    res = tf_flow_run_member(&job->flow, (uint64_t)job->member, final, record, job, job->samples);
  }
  MPI_Bcast(&res, sizeof res, MPI_BYTE, 0, run->comm);
  MPI_Bcast(final, (int)dim, MPI_DOUBLE, 0, run->comm);
  MPI_Bcast(&job->n_taken, 1, MPI_LONG, 0, run->comm);

  static const char *const fingerprint_paths[] = {
      "job",           "model",          "initial", "integrator", "ensemble.member",
      "ensemble.seed", "output.samples", NULL};
  bool resumed;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) {
    free(final);
    return -1;
  }
  tf_h5_attr_string(file, "model", job->flow.kernel->name);
  tf_h5_attr_string(file, "state_names", job->state_names);
  hid_t g = tf_h5_group(file, "trajectory");
  if (resumed) { /* a trajectory is one piece of work: redo it */
    H5Ldelete(g, "t", H5P_DEFAULT);
    H5Ldelete(g, "state", H5P_DEFAULT);
  }
  const uint64_t rows = (uint64_t)job->n_taken;
  hid_t dt =
      tf_h5_create_table(g, "t", H5T_NATIVE_DOUBLE, rows, 1, job->compression, "sample times");
  hid_t dx = tf_h5_create_table(g, "state", H5T_NATIVE_DOUBLE, rows, dim, job->compression,
                                "state at the sample times (samples x dim)");
  uint64_t *ids = malloc((rows ? rows : 1) * sizeof *ids);
  for (uint64_t i = 0; i < rows; i++) ids[i] = i;
  const size_t mine = run->rank == 0 ? rows : 0;
  int rc = dt < 0 || dx < 0 || !ids ||
           tf_h5_write_rows(dt, H5T_NATIVE_DOUBLE, 1, mine, ids, job->t) ||
           tf_h5_write_rows(dx, H5T_NATIVE_DOUBLE, dim, mine, ids, job->x);
  tf_h5_attr_string(g, "status", tf_member_status_name(res.status));
  tf_h5_attr_int(g, "member", job->member);
  tf_h5_attr_int(g, "steps", res.steps);
  free(ids);
  if (dt >= 0) H5Dclose(dt);
  if (dx >= 0) H5Dclose(dx);
  H5Gclose(g);
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0, &close_err) && rc == 0)
    *err = close_err, rc = -1;
  else if (rc)
    tf_fail(err, "writing the trajectory to '%s' failed", run->output_path);
  tf_json_string(run->summary, "model", job->flow.kernel->name);
  tf_json_string(run->summary, "integrator", tf_method_name(job->flow.method));
  tf_json_integer(run->summary, "member", job->member);
  tf_json_string(run->summary, "member_status", tf_member_status_name(res.status));
  tf_json_integer(run->summary, "steps", res.steps);
  tf_json_integer(run->summary, "samples", (long long)rows);
  tf_json_number(run->summary, "t_final", res.t_final);
  tf_json_numbers(run->summary, "final_state", final, dim);
  free(final);
  return rc;
}

static void destroy(tf_run *run) {
  trajectory_job *job = run->job_data;
  if (!job) return;
  tf_flow_destroy(&job->flow);
  free(job->t), free(job->x);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_trajectory = {
    .name = "trajectory",
    .doc = "one member sampled in time (the same member an ensemble would run)",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
};
