/* member_engine.c — see member_engine.h.  The routes' adapters are registered in routes.c. */
#include "member_engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "model.h"
#include "routes.h"
#include "sampling.h"
#include "status.h"

int tf_member_engine_create(tf_config *cfg, const tf_member_settings *s, tf_member_engine **out,
                            tf_error *err) {
  tf_member_engine *e = calloc(1, sizeof *e);
  *out = e;
  if (!e) return tf_fail(err, "out of memory");
  e->settings = *s;
  const tf_kernel *k;
  if (tf_model_kernel(cfg, s->comm, &k, err)) return -1;
  const tf_route_ops *route =
      k ? tf_flow_route(cfg, s->comm, k) : tf_route_find(TF_ROUTE_SMOOTH_FLOW);
  e->ops = route->member;
  if (route->refuse_members && route->refuse_members(cfg, k, err)) return -1;
  if (!e->ops)
    return tf_fail_code(err, TF_ERR_CONFIG, "model '%s' is not integrated member by member",
                        k->name);
  if (s->step && !e->ops->dense)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "route '%s' has no dense output for a step hook to read: %s", e->ops->name,
                        e->ops->no_dense);
  return e->ops->create(e, cfg, k, &e->settings, err);
}

void tf_member_engine_destroy(tf_member_engine *e) {
  if (!e) return;
  if (e->ops) e->ops->destroy(e);
  tf_sampling_destroy(e->sampling);
  free(e);
}

void tf_member_engine_run(tf_member_engine *e, uint64_t member, const tf_member_buffers *b,
                          tf_member_result *r) {
  memset(r, 0, sizeof *r);
  e->dense_valid = false;
  if (e->sampling) {
    static _Thread_local tf_error refused; /* r->failure points at static text */
    if (tf_sampling_set_params(e->sampling, member, b->parameters, &refused)) {
      r->status = TF_MEMBER_FAILED;
      r->failure = refused.msg;
      for (size_t i = 0; i < e->layout.dim; i++) {
        if (b->initial) b->initial[i] = NAN;
        if (b->final) b->final[i] = NAN;
      }
      for (size_t i = 0; b->parameters && i < e->layout.sampled_params; i++) b->parameters[i] = NAN;
      return;
    }
  }
  e->ops->run(e, member, b, r);
}

void tf_member_engine_run_many(tf_member_engine *e, size_t n, const uint64_t *members,
                               const tf_member_buffers *b, tf_member_result *r) {
  if (e->settings.step) { /* every member's steps seen, one member at a time */
    for (size_t i = 0; i < n; i++) tf_member_engine_run(e, members[i], &b[i], &r[i]);
    return;
  }
  memset(r, 0, n * sizeof *r);
  e->dense_valid = false;
  if (e->ops->run_many) {
    e->ops->run_many(e, n, members, b, r);
    return;
  }
  for (size_t i = 0; i < n; i++) e->ops->run(e, members[i], &b[i], &r[i]);
}

int tf_member_sampling(tf_member_engine *e, tf_config *cfg, const double *x0, double *params,
                       uint64_t seed, double spread, bool at_twofold, const char *params_fixed,
                       tf_error *err) {
  const tf_member_layout *l = &e->layout;
  const tf_sampling_base base = {.kernel = l->kernel,
                                 .x0 = x0,
                                 .params = params,
                                 .members = e->settings.members,
                                 .seed = seed,
                                 .spread = spread,
                                 .at_twofold = at_twofold};
  if (tf_sampling_from_config(cfg, &base, &e->sampling, err)) return -1;
  e->layout.sampled_params = tf_sampling_param_count(e->sampling);
  e->layout.sampled_names = tf_sampling_param_names(e->sampling);
  if (e->layout.sampled_params > 0 && params_fixed) {
    return tf_config_fail_key(cfg, "model.sample", err, "%s", params_fixed);
  }
  return 0;
}

int tf_member_engine_dense(const tf_member_engine *e, double t, double *x, double step[2]) {
  if (!e->dense_valid || !e->ops->dense || e->ops->dense(e, t, x, step)) return -1;
  return 0;
}

void tf_member_engine_report(const tf_member_engine *e, const tf_member_result *r,
                             const double *final, tf_json *j) {
  if (e->ops->report) e->ops->report(e, r, final, j);
}

int tf_member_read_trajectory_samples(tf_config *cfg, long *samples, tf_error *err) {
  const long long d_samples = 0;
  long long n = 0;
  if (tf_config_get_int(cfg, "output.trajectory_samples", &d_samples, 0, 1000000, &n, err))
    return -1;
  if (n == 1) {
    return tf_config_fail_key(cfg, "output.trajectory_samples", err,
                              "expected 0 (none) or >= 2, got 1");
  }
  *samples = (long)n;
  return 0;
}

int tf_member_member_keys(tf_member_settings *s, tf_config *cfg, tf_error *err) {
  return s->member_keys ? s->member_keys(cfg, s->ctx, s, err) : 0;
}

int tf_member_output_keys(const tf_member_settings *s, tf_config *cfg, tf_error *err) {
  return s->output_keys ? s->output_keys(cfg, s->ctx, err) : 0;
}

void tf_member_result_bcast(tf_member_result *r, int root, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  MPI_Bcast(r, (int)sizeof *r, MPI_BYTE, root, comm);
  if (rank == root) return;
  r->failure = NULL; /* a pointer is meaningless elsewhere */
  if (r->tag == TF_MEMBER_EXTRA_CONTACT)
    r->extra.contact.failure = r->extra.contact.c2.failure = r->extra.contact.dual.failure = NULL;
  if (r->tag == TF_MEMBER_EXTRA_IMPACT) r->extra.impact.counts.lyapunov = NULL;
  r->poincare.samples = r->poincare.modes = NULL;
}

double tf_member_sample_time(double t0, double t_end, long i, long n) {
  return i == n - 1 ? t_end : t0 + (t_end - t0) * (double)i / (double)(n - 1);
}
