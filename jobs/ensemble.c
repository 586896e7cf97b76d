/* ensemble.c — job `ensemble`: many members of one flow, final states to HDF5.
 *
 * Config: model, initial, integrator (see flow.h), ensemble.members/seed/chunk, output.
 * Output: /members/final_state and /members/initial_state (members x dim),
 * /members/t_final, /members/steps,
 * /members/done, /members/status, and /summary with the mean, standard deviation, min and
 * max of the final state over the members that finished ok (computed in member order on
 * rank 0, so the numbers do not depend on the rank count). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensemble.h"
#include "flow.h"
#include "h5io.h"
#include "job.h"
#include "results.h"

typedef struct ensemble_job {
  tf_flow flow;
  tf_ensemble_spec spec;
  tf_column cols[4];
  char state_names[512];
} ensemble_job;

static int setup(tf_run *run, tf_error *err) {
  ensemble_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  if (tf_flow_from_config(&job->flow, run->cfg, err)) return -1;
  const long long d_members = 1000, d_chunk = 0;
  long long members, chunk;
  if (tf_config_get_int(run->cfg, "ensemble.members", &d_members, 1, 1000000000LL, &members, err) ||
      tf_config_get_int(run->cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err))
    return -1;
  job->cols[0] = (tf_column){"final_state", TF_COLUMN_F64, job->flow.kernel->dim,
                             "state at t_final (members x dim)"};
  job->cols[1] = (tf_column){"initial_state", TF_COLUMN_F64, job->flow.kernel->dim,
                             "state at initial.time, perturbation included (members x dim)"};
  job->cols[2] = (tf_column){"t_final", TF_COLUMN_F64, 1, "time reached"};
  job->cols[3] = (tf_column){"steps", TF_COLUMN_I64, 1, "integrator steps taken"};
  tf_join_state_names(job->flow.kernel, job->state_names, sizeof job->state_names);
  job->spec.members = (uint64_t)members;
  job->spec.chunk = (uint64_t)chunk;
  job->spec.ncols = 4;
  job->spec.cols = job->cols;
  return 0;
}

static int run_member(void *ctx, uint64_t member, void *const *row) {
  ensemble_job *job = ctx;
  tf_flow_initial_state(&job->flow, member, row[1]);
  const tf_flow_result r = tf_flow_run_member(&job->flow, member, row[0], NULL, NULL, 0);
  *(double *)row[2] = r.t_final;
  *(int64_t *)row[3] = r.steps;
  return r.status;
}

/* Statistics of final states over ok members, read back in member order. */
typedef struct final_stats {
  double mean[64], std[64], min[64], max[64];
  long long n_ok;
} final_stats;

static int compute_stats(hid_t file, uint64_t members, size_t dim, final_stats *st) {
  hid_t xs = H5Dopen2(file, "members/final_state", H5P_DEFAULT);
  hid_t ss = H5Dopen2(file, "members/status", H5P_DEFAULT);
  hid_t status_type = tf_h5_status_type();
  const uint64_t block = 65536;
  double *x = malloc(block * dim * sizeof *x);
  uint8_t *status = malloc(block);
  double *sum = calloc(dim, sizeof *sum), *sum2 = calloc(dim, sizeof *sum2);
  int rc = xs < 0 || ss < 0 || !x || !status || !sum || !sum2;
  for (size_t i = 0; i < dim; i++) st->min[i] = INFINITY, st->max[i] = -INFINITY;
  st->n_ok = 0;
  /* Welford's update keeps the variance accurate for large ensembles. */
  for (uint64_t start = 0; start < members && !rc; start += block) {
    const uint64_t n = members - start < block ? members - start : block;
    rc = tf_h5_read_rows(xs, H5T_NATIVE_DOUBLE, dim, start, n, x) ||
         tf_h5_read_rows(ss, status_type, 1, start, n, status);
    for (uint64_t m = 0; m < n && !rc; m++) {
      if (status[m] != TF_MEMBER_OK) continue;
      st->n_ok++;
      for (size_t i = 0; i < dim; i++) {
        const double v = x[m * dim + i], delta = v - sum[i];
        sum[i] += delta / (double)st->n_ok;
        sum2[i] += delta * (v - sum[i]);
        st->min[i] = fmin(st->min[i], v);
        st->max[i] = fmax(st->max[i], v);
      }
    }
  }
  for (size_t i = 0; i < dim; i++) {
    st->mean[i] = st->n_ok ? sum[i] : NAN;
    st->std[i] = st->n_ok > 1 ? sqrt(sum2[i] / (double)(st->n_ok - 1)) : NAN;
  }
  free(x), free(status), free(sum), free(sum2);
  if (xs >= 0) H5Dclose(xs);
  if (ss >= 0) H5Dclose(ss);
  H5Tclose(status_type);
  return rc;
}

static int write_summary(tf_run *run, hid_t file, ensemble_job *job, const tf_ensemble_outcome *out,
                         tf_error *err) {
  const size_t dim = job->flow.kernel->dim;
  final_stats st;
  int rc = 0;
  if (dim > 64) return tf_fail(err, "summary supports at most 64 state components");
  if (run->rank == 0) rc = compute_stats(file, job->spec.members, dim, &st);
  MPI_Bcast(&rc, 1, MPI_INT, 0, run->comm);
  if (rc) return tf_fail(err, "cannot read back results from '%s'", run->output_path);
  MPI_Bcast(&st, sizeof st, MPI_BYTE, 0, run->comm);
  hid_t g = tf_h5_group(file, "summary");
  rc = tf_h5_write_small(g, "final_state_mean", H5T_NATIVE_DOUBLE, dim, st.mean,
                         "mean final state over ok members") |
       tf_h5_write_small(g, "final_state_std", H5T_NATIVE_DOUBLE, dim, st.std,
                         "sample standard deviation of the final state over ok members") |
       tf_h5_write_small(g, "final_state_min", H5T_NATIVE_DOUBLE, dim, st.min, NULL) |
       tf_h5_write_small(g, "final_state_max", H5T_NATIVE_DOUBLE, dim, st.max, NULL) |
       tf_h5_write_small(g, "status_counts", H5T_NATIVE_LLONG, TF_MEMBER_STATUS_COUNT,
                         out->status_counts, "members per status, in the order of the enum");
  H5Gclose(g);
  if (rc) return tf_fail(err, "cannot write /summary to '%s'", run->output_path);
  tf_json_numbers(run->summary, "final_state_mean", st.mean, dim);
  tf_json_numbers(run->summary, "final_state_std", st.std, dim);
  return 0;
}

static int execute(tf_run *run, tf_error *err) {
  ensemble_job *job = run->job_data;
  static const char *const fingerprint_paths[] = {
      "job", "model", "initial", "integrator", "ensemble.members", "ensemble.seed", NULL};
  bool resumed;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  tf_h5_attr_string(file, "model", job->flow.kernel->name);
  tf_h5_attr_string(file, "state_names", job->state_names);
  job->spec.run = run_member;
  job->spec.ctx = job;
  tf_ensemble_outcome out;
  int rc = tf_ensemble_execute(run, file, &job->spec, resumed, &out, err);
  const bool complete = rc == 0 && !out.interrupted;
  tf_json_string(run->summary, "model", job->flow.kernel->name);
  tf_json_string(run->summary, "integrator", tf_method_name(job->flow.method));
  tf_json_integer(run->summary, "members", (long long)job->spec.members);
  tf_json_integer(run->summary, "done", (long long)out.done);
  tf_json_integer(run->summary, "computed", (long long)out.computed);
  tf_json_integer(run->summary, "resumed_from", (long long)out.resumed);
  tf_json_integer(run->summary, "failed",
                  (long long)(out.done - (uint64_t)out.status_counts[TF_MEMBER_OK]));
  const char *names[TF_MEMBER_STATUS_COUNT - 1];
  for (int s = 1; s < TF_MEMBER_STATUS_COUNT; s++) names[s - 1] = tf_member_status_name(s);
  tf_json_counts(run->summary, "status_counts", names, out.status_counts + 1,
                 TF_MEMBER_STATUS_COUNT - 1);
  tf_json_number(run->summary, "members_per_second",
                 out.seconds > 0 ? (double)out.computed / out.seconds : 0.0);
  if (complete && write_summary(run, file, job, &out, err)) rc = -1;
  tf_error close_err;
  if (tf_results_close(run, file, complete, &close_err) && rc == 0) {
    *err = close_err;
    rc = -1;
  }
  if (rc == 0 && out.interrupted) run->exit_code = TF_EXIT_INTERRUPTED;
  return rc;
}

static void destroy(tf_run *run) {
  ensemble_job *job = run->job_data;
  if (!job) return;
  tf_flow_destroy(&job->flow);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_ensemble = {
    .name = "ensemble",
    .doc = "many members of one model from perturbed initial states; final states and statistics",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
};
