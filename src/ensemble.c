/* ensemble.c — the dynamic chunk scheduler and the collective flush rounds (see ensemble.h). */
#include "ensemble.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkpoint.h"
#include "h5io.h"
#include "progress.h"
#include "results.h"

enum { COUNTER_NEXT_CHUNK = 0, COUNTER_COMPLETED = 1 };

/* Rows computed since the last flush, column by column, with their member ids. */
typedef struct row_buffer {
  size_t n, cap;
  uint64_t *ids;
  uint8_t *status;
  void **cols;
} row_buffer;

typedef struct scheduler {
  tf_run *run;
  const tf_ensemble_spec *spec;
  hid_t *dsets; /* ncols + done + status */
  hid_t status_type;
  uint64_t *pending;
  uint64_t npending, nchunks, chunk;
  MPI_Win win;
  int64_t *counters;
  row_buffer rows;
  tf_progress progress;
  bool paused; /* --pause-after: has waited for its signal */
} scheduler;

static size_t column_bytes(const tf_column *c) {
  return (size_t)c->width * 8;
}

static hid_t column_h5type(const tf_column *c) {
  return c->type == TF_COLUMN_F64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
}

static int buffer_reserve(row_buffer *b, const tf_ensemble_spec *spec, size_t need) {
  if (need <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  uint64_t *ids = realloc(b->ids, cap * sizeof *ids);
  if (!ids) return -1;
  b->ids = ids;
  uint8_t *status = realloc(b->status, cap);
  if (!status) return -1;
  b->status = status;
  for (size_t c = 0; c < spec->ncols; c++) {
    void *col = realloc(b->cols[c], cap * column_bytes(&spec->cols[c]));
    if (!col) return -1;
    b->cols[c] = col;
  }
  b->cap = cap;
  return 0;
}

static int open_datasets(scheduler *s, hid_t file, bool resume, tf_error *err) {
  const tf_ensemble_spec *spec = s->spec;
  hid_t group = tf_h5_group(file, "members");
  if (group < 0) return tf_fail(err, "cannot create group /members in '%s'", s->run->output_path);
  size_t i = 0;
  for (; i < spec->ncols; i++) {
    const tf_column *c = &spec->cols[i];
    s->dsets[i] = resume ? tf_h5_open_table(group, c->name)
                         : tf_h5_create_table(group, c->name, column_h5type(c), spec->members,
                                              c->width, spec->compression, c->doc);
    if (s->dsets[i] < 0) break;
  }
  if (i == spec->ncols) {
    s->dsets[i] = resume ? tf_h5_open_table(group, "done")
                         : tf_h5_create_table(group, "done", H5T_NATIVE_UINT8, spec->members, 1,
                                              spec->compression, "1 if the member is finished");
    if (s->dsets[i] >= 0) i++;
  }
  if (i == spec->ncols + 1) {
    s->dsets[i] = resume ? tf_h5_open_table(group, "status")
                         : tf_h5_create_table(group, "status", s->status_type, spec->members, 1,
                                              spec->compression, "why the member stopped");
    if (s->dsets[i] >= 0) i++;
  }
  H5Gclose(group);
  if (i != spec->ncols + 2)
    return tf_fail(err, "'%s': cannot %s dataset /members/%s", s->run->output_path,
                   resume ? "open" : "create",
                   i < spec->ncols    ? spec->cols[i].name
                   : i == spec->ncols ? "done"
                                      : "status");
  if (resume) {
    hid_t space = H5Dget_space(s->dsets[0]);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(space, dims, NULL);
    H5Sclose(space);
    if (dims[0] != spec->members)
      return tf_fail(err, "'%s' holds %llu members but the config asks for %llu",
                     s->run->output_path, (unsigned long long)dims[0],
                     (unsigned long long)spec->members);
  }
  return 0;
}

/* Reads the done mask on rank 0 and broadcasts the pending list. */
static int find_pending(scheduler *s, bool resume, tf_ensemble_outcome *out, tf_error *err) {
  const uint64_t m = s->spec->members;
  s->pending = malloc((m ? m : 1) * sizeof *s->pending);
  if (!s->pending) return tf_fail(err, "out of memory for %llu members", (unsigned long long)m);
  s->npending = 0;
  int rc = 0;
  if (resume) {
    uint8_t *done = NULL;
    if (s->run->rank == 0) {
      done = malloc(m ? m : 1);
      uint8_t *status = malloc(m ? m : 1);
      rc = !done || !status ||
           tf_h5_read_rows(s->dsets[s->spec->ncols], H5T_NATIVE_UINT8, 1, 0, m, done) ||
           tf_h5_read_rows(s->dsets[s->spec->ncols + 1], s->status_type, 1, 0, m, status);
      if (!rc)
        for (uint64_t i = 0; i < m; i++)
          if (done[i])
            out->status_counts[status[i] < TF_MEMBER_STATUS_COUNT ? status[i] : TF_MEMBER_FAILED]++;
      free(status);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, s->run->comm);
    MPI_Bcast(out->status_counts, TF_MEMBER_STATUS_COUNT, MPI_LONG_LONG, 0, s->run->comm);
    if (rc) {
      free(done);
      return tf_fail(err, "'%s': cannot read /members/done (corrupt file?)", s->run->output_path);
    }
    if (s->run->rank == 0)
      for (uint64_t i = 0; i < m; i++)
        if (!done[i]) s->pending[s->npending++] = i;
    free(done);
    MPI_Bcast(&s->npending, 1, MPI_UINT64_T, 0, s->run->comm);
    MPI_Bcast(s->pending, (int)s->npending, MPI_UINT64_T, 0, s->run->comm);
  } else {
    for (uint64_t i = 0; i < m; i++) s->pending[s->npending++] = i;
  }
  out->resumed = m - s->npending;
  out->done_before = out->resumed;
  if (s->run->parts > 0) { /* keep block `part` of `parts` */
    const uint64_t lo = m * (uint64_t)s->run->part / (uint64_t)s->run->parts;
    const uint64_t hi = m * (uint64_t)(s->run->part + 1) / (uint64_t)s->run->parts;
    uint64_t kept = 0;
    for (uint64_t i = 0; i < s->npending; i++)
      if (s->pending[i] >= lo && s->pending[i] < hi) s->pending[kept++] = s->pending[i];
    out->resumed = (hi - lo) - kept;
    s->npending = kept;
  }
  return 0;
}

/* Small chunks balance better, large ones cost fewer atomics: aim at ~32 claims per rank. */
static uint64_t choose_chunk(const tf_ensemble_spec *spec, uint64_t npending, int ranks) {
  if (spec->chunk > 0) return spec->chunk;
  uint64_t c = npending / ((uint64_t)ranks * 32);
  if (c < 1) c = 1;
  if (c > 256) c = 256;
  return c;
}

static int64_t atomic_add(scheduler *s, int which, int64_t delta) {
  int64_t old = 0;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, s->win);
  MPI_Fetch_and_op(&delta, &old, MPI_INT64_T, 0, which, MPI_SUM, s->win);
  MPI_Win_unlock(0, s->win);
  return old;
}

static int flush_round(scheduler *s, tf_error *err) {
  row_buffer *b = &s->rows;
  const tf_ensemble_spec *spec = s->spec;
  /* Rows are written in member-id order: sort an index by id (ids within a rank are already
   * increasing chunk by chunk, but chunks are claimed in any order across rounds). */
  size_t *order = malloc((b->n ? b->n : 1) * sizeof *order);
  uint64_t *ids = malloc((b->n ? b->n : 1) * sizeof *ids);
  uint8_t *ones = malloc(b->n ? b->n : 1), *status = malloc(b->n ? b->n : 1);
  size_t maxw = 1;
  for (size_t c = 0; c < spec->ncols; c++)
    if (column_bytes(&spec->cols[c]) > maxw) maxw = column_bytes(&spec->cols[c]);
  char *scratch = malloc((b->n ? b->n : 1) * maxw);
  int rc = !order || !ids || !ones || !status || !scratch;
  if (!rc) {
    for (size_t i = 0; i < b->n; i++) order[i] = i;
    /* insertion sort: rows arrive nearly sorted */
    for (size_t i = 1; i < b->n; i++) {
      size_t v = order[i], j = i;
      while (j > 0 && b->ids[order[j - 1]] > b->ids[v]) order[j] = order[j - 1], j--;
      order[j] = v;
    }
    for (size_t i = 0; i < b->n; i++) {
      ids[i] = b->ids[order[i]];
      ones[i] = 1;
      status[i] = b->status[order[i]];
    }
  }
  int local_rc = rc;
  for (size_t c = 0; c < spec->ncols && !rc; c++) {
    const size_t w = column_bytes(&spec->cols[c]);
    for (size_t i = 0; i < b->n; i++) memcpy(scratch + i * w, (char *)b->cols[c] + order[i] * w, w);
    local_rc |= tf_h5_write_rows(s->dsets[c], column_h5type(&spec->cols[c]), spec->cols[c].width,
                                 b->n, ids, scratch);
  }
  if (!rc) {
    local_rc |= tf_h5_write_rows(s->dsets[spec->ncols + 1], s->status_type, 1, b->n, ids, status);
    /* The done mask last: a member is done only once its data is in the file. */
    local_rc |= tf_h5_write_rows(s->dsets[spec->ncols], H5T_NATIVE_UINT8, 1, b->n, ids, ones);
  }
  free(order), free(ids), free(ones), free(status), free(scratch);
  int any_rc = 0;
  MPI_Allreduce(&local_rc, &any_rc, 1, MPI_INT, MPI_MAX, s->run->comm);
  if (any_rc) return tf_fail(err, "writing results to '%s' failed", s->run->output_path);
  H5Fflush(s->dsets[0], H5F_SCOPE_GLOBAL);
  b->n = 0;
  return 0;
}

/* Runs members until this rank's round time is up, it runs out of chunks, or a stop is
 * requested.  Returns true when the chunk counter is exhausted for this rank. */
static bool compute_round(scheduler *s, double round_start, tf_ensemble_outcome *out, bool *stop,
                          int *rc, tf_error *err) {
  const tf_ensemble_spec *spec = s->spec;
  void **slots = calloc(spec->ncols ? spec->ncols : 1, sizeof *slots);
  bool exhausted = false;
  while (MPI_Wtime() - round_start < spec->flush_interval) {
    if (s->run->pause_after > 0 && !s->paused &&
        atomic_add(s, COUNTER_COMPLETED, 0) >= s->run->pause_after) {
      /* the test hook: stand still until a signal arrives (or --time-limit expires), then stop
       * as it says */
      s->paused = true;
      if (s->run->rank == 0) fprintf(stderr, "twofold: paused; waiting for a signal\n");
      while (!tf_checkpoint_should_stop(s->run->start_time, s->run->time_limit))
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    if (tf_checkpoint_should_stop(s->run->start_time, s->run->time_limit) ||
        (s->run->stop_after > 0 && atomic_add(s, COUNTER_COMPLETED, 0) >= s->run->stop_after)) {
      *stop = true;
      break;
    }
    const int64_t chunk = atomic_add(s, COUNTER_NEXT_CHUNK, 1);
    if ((uint64_t)chunk >= s->nchunks) {
      exhausted = true;
      break;
    }
    const uint64_t begin = (uint64_t)chunk * s->chunk;
    const uint64_t end = begin + s->chunk < s->npending ? begin + s->chunk : s->npending;
    if (buffer_reserve(&s->rows, spec, s->rows.n + (end - begin))) {
      *rc = tf_fail(err, "out of memory buffering results");
      break;
    }
    for (uint64_t i = begin; i < end; i++) {
      const size_t r = s->rows.n++;
      const uint64_t member = s->pending[i];
      for (size_t c = 0; c < spec->ncols; c++)
        slots[c] = (char *)s->rows.cols[c] + r * column_bytes(&spec->cols[c]);
      s->rows.ids[r] = member;
      s->rows.status[r] = (uint8_t)spec->run(spec->ctx, member, slots);
      out->computed++;
    }
    atomic_add(s, COUNTER_COMPLETED, (int64_t)(end - begin));
    if (s->run->rank == 0) {
      const int64_t completed = atomic_add(s, COUNTER_COMPLETED, 0);
      tf_progress_update(&s->progress, out->resumed + (uint64_t)completed, false);
    }
  }
  free(slots);
  return exhausted;
}

static void tally(scheduler *s, tf_ensemble_outcome *out) {
  long long local[TF_MEMBER_STATUS_COUNT] = {0}, global[TF_MEMBER_STATUS_COUNT];
  for (size_t i = 0; i < s->rows.n; i++)
    local[s->rows.status[i] < TF_MEMBER_STATUS_COUNT ? s->rows.status[i] : TF_MEMBER_FAILED]++;
  MPI_Allreduce(local, global, TF_MEMBER_STATUS_COUNT, MPI_LONG_LONG, MPI_SUM, s->run->comm);
  for (int k = 0; k < TF_MEMBER_STATUS_COUNT; k++) out->status_counts[k] += global[k];
}

static void scheduler_free(scheduler *s) {
  if (s->win != MPI_WIN_NULL) MPI_Win_free(&s->win);
  for (size_t c = 0; c < s->spec->ncols + 2; c++)
    if (s->dsets && s->dsets[c] >= 0) H5Dclose(s->dsets[c]);
  free(s->dsets);
  if (s->status_type >= 0) H5Tclose(s->status_type);
  free(s->pending);
  for (size_t c = 0; c < s->spec->ncols; c++) free(s->rows.cols ? s->rows.cols[c] : NULL);
  free(s->rows.cols), free(s->rows.ids), free(s->rows.status);
}

int tf_ensemble_execute(tf_run *run, hid_t file, const tf_ensemble_spec *spec, bool resume,
                        tf_ensemble_outcome *out, tf_error *err) {
  memset(out, 0, sizeof *out);
  scheduler s = {.run = run, .spec = spec, .win = MPI_WIN_NULL, .status_type = tf_h5_status_type()};
  s.dsets = malloc((spec->ncols + 2) * sizeof *s.dsets);
  s.rows.cols = calloc(spec->ncols ? spec->ncols : 1, sizeof *s.rows.cols);
  if (!s.dsets || !s.rows.cols) return tf_fail(err, "out of memory");
  for (size_t c = 0; c < spec->ncols + 2; c++) s.dsets[c] = -1;
  int rc = open_datasets(&s, file, resume, err);
  if (!rc) rc = find_pending(&s, resume, out, err);
  if (rc) {
    scheduler_free(&s);
    return -1;
  }
  s.chunk = choose_chunk(spec, s.npending, run->size);
  s.nchunks = (s.npending + s.chunk - 1) / s.chunk;
  MPI_Win_allocate(run->rank == 0 ? 2 * sizeof(int64_t) : 0, sizeof(int64_t), MPI_INFO_NULL,
                   run->comm, &s.counters, &s.win);
  if (run->rank == 0) s.counters[0] = s.counters[1] = 0;
  MPI_Barrier(run->comm);
  if (run->rank == 0)
    tf_progress_start(&s.progress, "members", spec->members, out->resumed, run->quiet,
                      run->progress_mode);

  const double t_start = MPI_Wtime();
  for (;;) {
    bool stop = false;
    int local_rc = 0;
    const bool exhausted = compute_round(&s, MPI_Wtime(), out, &stop, &local_rc, err);
    /* flags: [0] any rank failed, [1] any rank asked to stop, [2] ranks not exhausted */
    int flags[3] = {local_rc != 0, stop, !exhausted}, any[3];
    MPI_Allreduce(flags, any, 3, MPI_INT, MPI_MAX, run->comm);
    tally(&s, out);
    if (flush_round(&s, err)) {
      rc = -1;
      break;
    }
    if (any[0]) {
      rc = -1;
      if (!local_rc) tf_fail(err, "another rank failed (see its message)");
      break;
    }
    if (any[1]) {
      out->interrupted = !exhausted || any[2];
      if (out->interrupted) break;
    }
    if (!any[2]) break;
  }
  out->seconds = MPI_Wtime() - t_start;
  uint64_t computed = out->computed;
  MPI_Allreduce(&computed, &out->computed, 1, MPI_UINT64_T, MPI_SUM, run->comm);
  out->done = out->done_before + out->computed;
  out->complete = rc == 0 && !out->interrupted && out->done == spec->members;
  if (run->rank == 0 && rc == 0) tf_progress_finish(&s.progress, out->done);
  scheduler_free(&s);
  return rc;
}

int tf_ensemble_finish(tf_run *run, hid_t file, const tf_ensemble_outcome *out, int rc,
                       tf_error *err) {
  tf_json_integer(run->summary, "done", (long long)out->done);
  tf_json_integer(run->summary, "computed", (long long)out->computed);
  tf_json_integer(run->summary, "resumed_from", (long long)out->resumed);
  tf_json_number(run->summary, "members_per_second",
                 out->seconds > 0 ? (double)out->computed / out->seconds : 0.0);
  if (run->parts > 0) {
    char part[64];
    snprintf(part, sizeof part, "%d/%d", run->part, run->parts);
    tf_json_string(run->summary, "part", part);
  }
  const bool complete = rc == 0 && out->complete;
  tf_error close_err;
  if (tf_results_close(run, file, complete, &close_err) && rc == 0) {
    *err = close_err;
    rc = -1;
  }
  if (rc == 0 && out->interrupted) run->exit_code = TF_EXIT_INTERRUPTED;
  return rc;
}
