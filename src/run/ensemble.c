/* ensemble.c — the dynamic chunk scheduler and the collective flush rounds (see ensemble.h). */
#include "ensemble.h"

#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "failures.h"
#include "guard.h"
#include "h5io.h"
#include "isolate.h"
#include "lock.h"
#include "member_ranges.h"
#include "merge.h"
#include "progress.h"
#include "results.h"

/* Counters on rank 0: the next chunk to claim, members completed, and the last flush round
 * some rank asked to end early because its buffer was full. */
enum { COUNTER_NEXT_CHUNK = 0, COUNTER_COMPLETED = 1, COUNTER_FLUSH = 2, COUNTERS = 3 };

/* Rows computed since the last flush, column by column, with their member ids. */
typedef struct row_buffer {
  size_t n, cap;
  uint64_t *ids;
  uint8_t *status;
  void **cols;
} row_buffer;

/* Tables after the job's columns, in this order. */
enum { EXTRA_DONE = 0, EXTRA_STATUS = 1, EXTRA_CHECKSUM = 2, EXTRA_TABLES = 3 };

typedef struct scheduler { /* one rank's view of the run */
  tf_run *run;
  const tf_ensemble_spec *spec;
  hid_t *dsets;      /* ncols + done + status + checksum */
  hid_t status_type; /* every status: reads (a file's enum names a subset of them) */
  /* The file's enum, for writes (HDF5 converts an enum only to one naming all its values):
   * a new file names crashed and timeout only if the run is isolated. */
  hid_t status_file_type;
  tf_isolate *isolate;      /* --isolate: the members' worker process */
  tf_member_ranges pending; /* members this run computes, as runs */
  uint64_t nchunks, chunk;
  uint64_t cap_rows;      /* rows buffered at most between flushes: the memory budget */
  int64_t round;          /* flush rounds done */
  uint64_t done_at_start; /* members of this run's block done before it (resumed) */
  MPI_Win win;
  int64_t *counters;
  row_buffer rows;
  tf_progress progress;
  bool paused;      /* --pause-after: standing still until its signal (joining flush rounds) */
  bool file_broken; /* an HDF5 write failed: the library's state is not to be trusted */
} scheduler;

static bool anyone(const struct scheduler *s, int local);

size_t tf_column_bytes(const tf_column *c) {
  return (size_t)c->width * (c->type == TF_COLUMN_TEXT ? TF_COLUMN_TEXT_BYTES : 8);
}

/* The fixed-length string of a text column, made once (HDF5 frees it when it closes). */
static hid_t text_type(void) {
  static hid_t type = -1;
  if (type < 0) {
    type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, TF_COLUMN_TEXT_BYTES);
    H5Tset_strpad(type, H5T_STR_NULLPAD);
    H5Tset_cset(type, H5T_CSET_UTF8);
  }
  return type;
}

static hid_t column_h5type(const tf_column *c) {
  return c->type == TF_COLUMN_F64   ? H5T_NATIVE_DOUBLE
         : c->type == TF_COLUMN_I64 ? H5T_NATIVE_INT64
                                    : text_type();
}

/* Memory type, values per row and bytes per row of table d (a column or one of the extras). */
static hid_t table_type(const scheduler *s, size_t d, uint64_t *width, size_t *row_bytes) {
  const tf_ensemble_spec *spec = s->spec;
  if (d < spec->ncols) {
    *width = spec->cols[d].width;
    *row_bytes = tf_column_bytes(&spec->cols[d]);
    return column_h5type(&spec->cols[d]);
  }
  *width = 1;
  *row_bytes = d - spec->ncols == EXTRA_CHECKSUM ? 8 : 1;
  return d - spec->ncols == EXTRA_DONE     ? H5T_NATIVE_UINT8
         : d - spec->ncols == EXTRA_STATUS ? s->status_type
                                           : H5T_NATIVE_UINT64;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/* The checksum of a member's row: its id, status and every column, so a row that a crash
 * left stale, zero, or holding another row's bytes does not pass as done on --resume.  Text
 * columns (an isolated run's reasons) are left out: a file begun isolated resumes without
 * isolation, which has no such column. */
static uint64_t row_checksum(const tf_ensemble_spec *spec, uint64_t member, uint8_t status,
                             const void *const *cols, size_t r) {
  uint64_t h = fnv1a(0xcbf29ce484222325ull, &member, sizeof member);
  h = fnv1a(h, &status, 1);
  for (size_t c = 0; c < spec->ncols; c++) {
    if (spec->cols[c].type == TF_COLUMN_TEXT) continue;
    const size_t w = tf_column_bytes(&spec->cols[c]);
    h = fnv1a(h, (const char *)cols[c] + r * w, w);
  }
  return h;
}

static int buffer_reserve(row_buffer *b, const tf_ensemble_spec *spec, size_t need, size_t most) {
  if (need <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  if (cap > most && most >= need) cap = most;
  uint64_t *ids = realloc(b->ids, cap * sizeof *ids);
  if (!ids) return -1;
  b->ids = ids;
  uint8_t *status = realloc(b->status, cap);
  if (!status) return -1;
  b->status = status;
  for (size_t c = 0; c < spec->ncols; c++) {
    void *col = realloc(b->cols[c], cap * tf_column_bytes(&spec->cols[c]));
    if (!col) return -1;
    b->cols[c] = col;
  }
  b->cap = cap;
  return 0;
}

/* On --resume a table is opened; one missing (a run killed before its tables reached the
 * disk) or unopenable is created afresh, and the verification then finds its rows not done. */
/* True if the opened table has exactly the shape (members, or members x width) and the type
 * class and size this run writes: a file whose tables were declared otherwise (crafted, or
 * not this run's) is refused before anything is read or written in it. */
static bool table_fits(hid_t dset, hid_t type, uint64_t members, uint64_t width) {
  const hid_t space = H5Dget_space(dset), ftype = H5Dget_type(dset);
  hsize_t dims[2] = {0, 0};
  const int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  if (rank == 1 || rank == 2) H5Sget_simple_extent_dims(space, dims, NULL);
  const bool shape = width == 1 ? (rank == 1 || (rank == 2 && dims[1] == 1)) && dims[0] == members
                                : rank == 2 && dims[0] == members && dims[1] == width;
  const bool kind = ftype >= 0 && H5Tget_class(ftype) == H5Tget_class(type) &&
                    H5Tget_size(ftype) == H5Tget_size(type);
  if (space >= 0) H5Sclose(space);
  if (ftype >= 0) H5Tclose(ftype);
  return shape && kind;
}

static hid_t table(hid_t group, const char *name, hid_t type, uint64_t members, uint64_t width,
                   int compression, const char *doc, bool resume, bool *misfit) {
  if (resume && H5Lexists(group, name, H5P_DEFAULT) > 0) {
    hid_t dset = tf_h5_open_table(group, name);
    if (dset >= 0 && table_fits(dset, type, members, width)) return dset;
    if (dset >= 0) {
      H5Dclose(dset);
      *misfit = true;
      return -1;
    }
    if (H5Ldelete(group, name, H5P_DEFAULT) < 0) return -1;
  }
  return tf_h5_create_table(group, name, type, members, width, compression, doc);
}

/* Table d of /members: a column of the spec, then done, status and checksum. */
static const char *table_name(const tf_ensemble_spec *spec, size_t d) {
  static const char *const extra[] = {"done", "status", "checksum"};
  return d < spec->ncols ? spec->cols[d].name : extra[d - spec->ncols];
}

/* How many statuses the file's /members/status type names (a run's own, or an isolated
 * run's with crashed and timeout), or -1 if that type is not one this program writes: one
 * byte, each value i named tf_member_status_name(i).  Rows are then written with a type built
 * here, never with the file's own: HDF5 compares the two types when converting, and a damaged
 * type description would be read past its end. */
static int statuses_of_file(hid_t status) {
  const hid_t type = H5Dget_type(status);
  if (type < 0) return -1;
  int n = H5Tget_class(type) == H5T_ENUM && H5Tget_size(type) == 1 ? H5Tget_nmembers(type) : -1;
  if (n < tf_member_status_recorded(false) || n > TF_MEMBER_STATUS_COUNT) n = -1;
  uint64_t seen = 0; /* the values named so far, in the file's member order */
  for (int j = 0; j < n; j++) {
    uint8_t value = 0xff;
    char *name = H5Tget_member_name(type, (unsigned)j);
    if (!name || H5Tget_member_value(type, (unsigned)j, &value) < 0 || value >= n ||
        (seen >> value & 1) || strcmp(name, tf_member_status_name(value)) != 0)
      n = -1;
    else
      seen |= (uint64_t)1 << value;
    if (name) H5free_memory(name);
  }
  H5Tclose(type);
  return n;
}

static int open_datasets(scheduler *s, hid_t file, bool resume, tf_error *err) {
  const tf_ensemble_spec *spec = s->spec;
  hid_t group = tf_h5_group(file, "members");
  if (group < 0)
    return tf_fail_code(err, TF_ERR_IO, "cannot create group /members in '%s'",
                        s->run->output_path);
  size_t i = 0;
  bool misfit = false;
  for (; i < spec->ncols + EXTRA_TABLES; i++) {
    uint64_t width;
    size_t rb;
    const hid_t type = table_type(s, i, &width, &rb);
    static const char *const docs[] = {
        "1 if the member is finished", "why the member stopped",
        "FNV-1a 64 over the member id (uint64), status (uint8) and the row of each table "
        "in `columns`, native bytes; checked on --resume"};
    const size_t x = i - spec->ncols;
    const hid_t file_type = i == spec->ncols + EXTRA_STATUS ? s->status_file_type : type;
    s->dsets[i] =
        table(group, table_name(spec, i), file_type, spec->members, width, spec->compression,
              i < spec->ncols ? spec->cols[i].doc : docs[x], resume, &misfit);
    if (s->dsets[i] < 0) break;
  }
  H5Gclose(group);
  if (i == spec->ncols + EXTRA_TABLES) { /* the order the checksum reads the row in */
    size_t len = 1;
    for (size_t c = 0; c < spec->ncols; c++) len += strlen(spec->cols[c].name) + 1;
    char *names = calloc(len, 1);
    for (size_t c = 0; names && c < spec->ncols; c++)
      if (spec->cols[c].type != TF_COLUMN_TEXT)
        strcat(strcat(names, *names ? "," : ""), spec->cols[c].name);
    const int rc =
        !names || tf_h5_attr_names(s->dsets[spec->ncols + EXTRA_CHECKSUM], "columns", names);
    free(names);
    if (rc)
      return tf_fail_code(err, TF_ERR_IO,
                          "'%s': cannot write the attribute columns of /members/checksum",
                          s->run->output_path);
  }
  if (misfit) {
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "cannot resume '%s': its table /members/%s does not have the shape or type of "
        "this run's (%llu members); not this run's file (--overwrite starts again)",
        s->run->output_path, table_name(spec, i), (unsigned long long)spec->members);
  }
  if (i != spec->ncols + EXTRA_TABLES) /* resumed: a damaged input; new: the output refused */
    return tf_fail_code(err, resume ? TF_ERR_CONFIG : TF_ERR_IO,
                        "'%s': cannot %s dataset /members/%s", s->run->output_path,
                        resume ? "open" : "create", table_name(spec, i));
  const int recorded = statuses_of_file(s->dsets[spec->ncols + EXTRA_STATUS]);
  if (recorded < 0) {
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "cannot resume '%s': its /members/status is not a table of member statuses (its "
        "type is damaged or another program's); --overwrite starts again",
        s->run->output_path);
  }
  H5Tclose(s->status_file_type), s->status_file_type = tf_h5_status_type_upto(recorded);
  if (resume && s->isolate && recorded < TF_MEMBER_STATUS_COUNT) {
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "cannot resume '%s' with --isolate: the run that started it was not isolated, "
        "so its /members/status cannot record crashed or timeout; resume it without "
        "--isolate (and run.isolate), or start again with --overwrite",
        s->run->output_path);
  }
  if (resume) {
    hid_t space = H5Dget_space(s->dsets[0]);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(space, dims, NULL);
    H5Sclose(space);
    if (dims[0] != spec->members)
      return tf_fail_code(
          err, TF_ERR_CONFIG, "'%s' holds %llu members but the config asks for %llu",
          s->run->output_path, (unsigned long long)dims[0], (unsigned long long)spec->members);
  }
  return 0;
}

/* Chunk rows of table d (the whole table if it is not chunked). */
static uint64_t chunk_rows(const scheduler *s, size_t d) {
  hsize_t dims[2] = {s->spec->members, 1};
  hid_t dcpl = H5Dget_create_plist(s->dsets[d]);
  if (dcpl < 0 || H5Pget_chunk(dcpl, 2, dims) < 1 || dims[0] == 0) dims[0] = s->spec->members;
  if (dcpl >= 0) H5Pclose(dcpl);
  return dims[0] ? dims[0] : 1;
}

/* A chunk no read can decompress, to be overwritten whole (a partial write would have to
 * read it first, and fail). */
typedef struct damaged_chunk {
  uint64_t table, first, count;
} damaged_chunk;

typedef struct verification {
  tf_member_ranges *pending;  /* not done, or done but not verified: computed again */
  tf_member_ranges untrusted; /* marked done (or unreadable) but not verified: unmarked */
  damaged_chunk *damaged;
  uint64_t ndamaged;
} verification;

static int note_damage(verification *v, uint64_t table, uint64_t first, uint64_t count) {
  if (v->ndamaged && v->damaged[v->ndamaged - 1].table == table &&
      v->damaged[v->ndamaged - 1].first == first)
    return 0;
  damaged_chunk *grown = realloc(v->damaged, (v->ndamaged + 1) * sizeof *grown);
  if (!grown) return -1;
  v->damaged = grown;
  v->damaged[v->ndamaged++] = (damaged_chunk){table, first, count};
  return 0;
}

/* Rank 0 reads every table of the file in blocks and trusts a member only if it is marked
 * done, every chunk holding its row decompresses, and its checksum matches the row: what a
 * crash or a full disk left half-written is computed again, never passed on as a result. */
static int verify_rows(scheduler *s, verification *v, tf_ensemble_outcome *out) {
  const tf_ensemble_spec *spec = s->spec;
  const uint64_t m = spec->members, ntables = spec->ncols + EXTRA_TABLES;
  size_t total_bytes = 0;
  uint64_t max_chunk = 1;
  uint64_t *crows = malloc(ntables * sizeof *crows);
  void **bufs = calloc(ntables, sizeof *bufs);
  uint8_t *bad = NULL;
  int rc = !crows || !bufs;
  for (uint64_t d = 0; d < ntables && !rc; d++) {
    uint64_t width;
    size_t rb;
    table_type(s, d, &width, &rb);
    total_bytes += rb;
    crows[d] = chunk_rows(s, d);
    if (crows[d] > max_chunk) max_chunk = crows[d];
  }
  /* blocks of at most ~4 MiB of rows, whole chunks where they fit */
  uint64_t block = (4u << 20) / (total_bytes ? total_bytes : 1);
  if (block > max_chunk) block = max_chunk;
  if (block < 1) block = 1;
  if (block > m) block = m ? m : 1;
  bad = rc ? NULL : malloc(block);
  rc |= !bad;
  for (uint64_t d = 0; d < ntables && !rc; d++) {
    uint64_t width;
    size_t rb;
    table_type(s, d, &width, &rb);
    rc |= !(bufs[d] = malloc(block * rb));
  }
  const void **cols = rc ? NULL : malloc((spec->ncols ? spec->ncols : 1) * sizeof *cols);
  rc |= !cols;
  for (uint64_t a = 0; a < m && !rc; a += block) {
    const uint64_t b = a + block < m ? a + block : m;
    memset(bad, 0, b - a);
    for (uint64_t d = 0; d < ntables && !rc; d++) {
      uint64_t width;
      size_t rb;
      const hid_t type = table_type(s, d, &width, &rb);
      for (uint64_t cs = a / crows[d] * crows[d]; cs < b; cs += crows[d]) {
        const uint64_t lo = cs > a ? cs : a, hi = cs + crows[d] < b ? cs + crows[d] : b;
        if (tf_h5_read_rows(s->dsets[d], type, width, lo, hi - lo,
                            (char *)bufs[d] + (lo - a) * rb) == 0)
          continue;
        memset(bad + (lo - a), 1, hi - lo);
        const uint64_t ce = cs + crows[d] < m ? cs + crows[d] : m;
        if (note_damage(v, d, cs, ce - cs)) rc = -1;
      }
    }
    const uint8_t *done = bufs[spec->ncols + EXTRA_DONE];
    const uint8_t *status = bufs[spec->ncols + EXTRA_STATUS];
    const uint64_t *check = bufs[spec->ncols + EXTRA_CHECKSUM];
    for (size_t c = 0; c < spec->ncols; c++) cols[c] = bufs[c];
    for (uint64_t i = a; i < b && !rc; i++) {
      const size_t r = i - a;
      if (!bad[r] && !done[r]) {
        rc = tf_member_ranges_add(v->pending, i);
        continue;
      }
      if (bad[r] || row_checksum(spec, i, status[r], cols, r) != check[r]) {
        rc = tf_member_ranges_add(v->pending, i) || tf_member_ranges_add(&v->untrusted, i);
        continue;
      }
      out->status_counts[status[r] < TF_MEMBER_STATUS_COUNT ? status[r] : TF_MEMBER_FAILED]++;
    }
  }
  for (uint64_t d = 0; bufs && d < ntables; d++) free(bufs[d]);
  free(bufs), free(crows), free(bad), free(cols);
  return rc ? -1 : 0;
}

/* Collective: chunks nothing can read are overwritten whole with zeros, and members marked
 * done that did not verify are unmarked, so the file says what it holds even if this run
 * stops before computing them again. */
static int repair(scheduler *s, verification *v, tf_error *err) {
  const tf_ensemble_spec *spec = s->spec;
  const bool root = s->run->rank == 0;
  uint64_t n[2] = {v->ndamaged, v->untrusted.count};
  MPI_Bcast(n, 2, MPI_UINT64_T, 0, s->run->comm);
  if (n[0] == 0 && n[1] == 0) return 0;
  if (!root && n[0]) v->damaged = malloc(n[0] * sizeof *v->damaged);
  int rc = n[0] && !v->damaged, any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, s->run->comm);
  if (any) return tf_fail(err, "out of memory repairing '%s'", s->run->output_path);
  MPI_Bcast(v->damaged, (int)(n[0] * 3), MPI_UINT64_T, 0, s->run->comm);
  if (root)
    fprintf(stderr,
            "twofold: '%s': %llu members marked done or unreadable did not verify (%llu "
            "unreadable chunks); they are computed again\n",
            s->run->output_path, (unsigned long long)n[1], (unsigned long long)n[0]);
  int local = 0;
  for (uint64_t k = 0; k < n[0]; k++) {
    const damaged_chunk *c = &v->damaged[k];
    uint64_t width;
    size_t rb;
    const hid_t type = table_type(s, c->table, &width, &rb);
    const size_t rows = root ? c->count : 0;
    uint64_t *ids = malloc((rows ? rows : 1) * sizeof *ids);
    void *zeros = calloc(rows ? rows : 1, rb);
    local |= !ids || !zeros;
    for (size_t i = 0; ids && i < rows; i++) ids[i] = c->first + i;
    local |= tf_h5_write_rows(s->dsets[c->table], type, width, local ? 0 : rows, ids, zeros);
    free(ids), free(zeros);
  }
  /* unmark what did not verify, in batches so that memory stays within the budget */
  const uint64_t batch = s->cap_rows;
  uint64_t run = 0, offset = 0; /* rank 0's place in v->untrusted */
  uint64_t *ids = malloc((root ? batch : 1) * sizeof *ids);
  uint8_t *zeros = calloc(root ? batch : 1, 1);
  local |= !ids || !zeros;
  for (uint64_t done = 0; done < n[1]; done += batch) {
    size_t rows = 0;
    while (root && ids && rows < batch && run < v->untrusted.nruns) {
      ids[rows++] = v->untrusted.runs[run].first + offset;
      if (++offset == v->untrusted.runs[run].count) run++, offset = 0;
    }
    local |= tf_h5_write_rows(s->dsets[spec->ncols + EXTRA_DONE], H5T_NATIVE_UINT8, 1,
                              local ? 0 : rows, ids, zeros);
  }
  free(ids), free(zeros);
  local |= tf_h5_flush(s->dsets[0]);
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, s->run->comm);
  if (any) s->file_broken = true;
  if (any)
    return tf_fail_code(err, TF_ERR_IO,
                        "'%s' is damaged beyond repair (its chunks cannot be rewritten); "
                        "--overwrite starts it again",
                        s->run->output_path);
  return 0;
}

/* Broadcasts rank 0's runs to every rank. */
static int share_runs(scheduler *s, tf_member_ranges *r) {
  uint64_t n = r->nruns;
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, s->run->comm);
  int failed = 0;
  if (s->run->rank != 0) {
    tf_member_ranges_free(r);
    r->runs = malloc((n ? n : 1) * sizeof *r->runs);
    failed = !r->runs;
    r->nruns = r->cap = failed ? 0 : n;
  }
  if (anyone(s, failed)) return -1;
  for (uint64_t a = 0; a < n; a += 1u << 26) { /* MPI counts are int */
    const uint64_t k = n - a < (1u << 26) ? n - a : 1u << 26;
    MPI_Bcast(r->runs + a, (int)(2 * k), MPI_UINT64_T, 0, s->run->comm);
  }
  r->count = 0;
  for (uint64_t i = 0; i < n; i++) r->count += r->runs[i].count;
  return 0;
}

static void close_datasets(scheduler *s) {
  for (size_t c = 0; c < s->spec->ncols + EXTRA_TABLES; c++) {
    if (s->dsets[c] >= 0) H5Dclose(s->dsets[c]);
    s->dsets[c] = -1;
  }
}

/* Rank 0 reads every table of the file alone, and rank 0 reading a parallel file alone fills
 * its HDF5 metadata cache differently from the other ranks': the collective writes that
 * follow can then wait for each other for ever.  So every rank closes the file, rank 0
 * verifies it opened serially, and every rank opens it again. */
static int verify_serially(scheduler *s, hid_t *file, verification *v, tf_ensemble_outcome *out,
                           tf_error *err) {
  const tf_run *run = s->run;
  close_datasets(s);
  int rc = H5Fclose(*file) < 0 ? -1 : 0, any = 0;
  *file = -1;
  if (rc == 0 && run->rank == 0) {
    hid_t f = H5Fopen(run->output_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t group = f >= 0 ? H5Gopen2(f, "members", H5P_DEFAULT) : -1;
    for (size_t i = 0; group >= 0 && i < s->spec->ncols + EXTRA_TABLES; i++) {
      s->dsets[i] = tf_h5_open_table(group, table_name(s->spec, i));
      if (s->dsets[i] < 0) rc = -1;
    }
    if (group < 0) rc = -1;
    if (rc == 0 && verify_rows(s, v, out)) rc = -2;
    close_datasets(s);
    if (group >= 0) H5Gclose(group);
    if (f >= 0 && H5Fclose(f) < 0) rc = -1;
  }
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MIN, run->comm);
  if (any == -2) return tf_fail(err, "'%s': out of memory verifying the members", run->output_path);
  if (any)
    return tf_fail_code(err, TF_ERR_IO, "'%s': cannot reopen it to verify the members",
                        run->output_path);
  if ((*file = tf_h5_open_rw(run->output_path, run->comm, err)) < 0) return -1;
  return open_datasets(s, *file, true, err);
}

/* Verifies the file (on --resume) and shares the pending members as runs. */
static int find_pending(scheduler *s, hid_t *file, bool resume, tf_ensemble_outcome *out,
                        tf_error *err) {
  const uint64_t m = s->spec->members;
  int rc = 0;
  if (resume) {
    verification v = {.pending = &s->pending};
    rc = verify_serially(s, file, &v, out, err);
    MPI_Bcast(out->status_counts, TF_MEMBER_STATUS_COUNT, MPI_LONG_LONG, 0, s->run->comm);
    if (rc) {
      tf_member_ranges_free(&v.untrusted), free(v.damaged);
      return -1;
    }
    rc = repair(s, &v, err);
    tf_member_ranges_free(&v.untrusted), free(v.damaged);
    if (rc) return -1;
    if (share_runs(s, &s->pending)) return tf_fail(err, "out of memory");
  } else if (tf_member_ranges_add_run(&s->pending, 0, m)) {
    return tf_fail(err, "out of memory");
  }
  out->resumed = m - s->pending.count;
  out->done_before = out->resumed;
  if (s->run->parts > 0) { /* keep block `part` of `parts` */
    const uint64_t lo = tf_part_first(m, s->run->part, s->run->parts);
    const uint64_t hi = tf_part_first(m, s->run->part + 1, s->run->parts);
    tf_member_ranges_clip(&s->pending, lo, hi);
    out->resumed = (hi - lo) - s->pending.count;
  }
  s->done_at_start = out->resumed;
  if (tf_member_ranges_index(&s->pending)) return tf_fail(err, "out of memory");
  return 0;
}

/* Rows a rank may buffer between flushes so that they, and the flush's sorted copies, fit the
 * memory budget `output.buffer_mb` (at least one row). */
static uint64_t buffer_rows(const scheduler *s) {
  const tf_ensemble_spec *spec = s->spec;
  size_t row = 8 + 1, widest = 1; /* the buffer: id, status, columns */
  for (size_t c = 0; c < spec->ncols; c++) {
    row += tf_column_bytes(&spec->cols[c]);
    if (tf_column_bytes(&spec->cols[c]) > widest) widest = tf_column_bytes(&spec->cols[c]);
  }
  row += sizeof(size_t) + 8 + 8 + 1 + 1 + widest; /* flush_round: order, ids, sums, ones, ... */
  row += 16 * 2; /* HDF5's point selection of the rows written (coordinates, conservatively) */
  /* On several ranks parallel HDF5 writes compressed chunks collectively: each rank ships its
   * rows to the chunk's owner, which holds them with the chunk unfiltered and filtered again.
   * Measured (smoke ensemble, 2 ranks, 8-64 MB budgets): 2.4 times the rows' own cost. */
  if (s->run->size > 1 && spec->compression > 0) row = row * 5 / 2;
  const uint64_t budget = s->run->buffer_bytes ? s->run->buffer_bytes : TF_DEFAULT_BUFFER_BYTES;
  return budget / row > 0 ? budget / row : 1;
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

/* Claims the next chunk and reads, in the same access, whether some rank has asked to end
 * this round early (its buffer full). */
static int64_t claim_chunk(scheduler *s, bool *flush_requested) {
  const int64_t one = 1, none = 0;
  int64_t chunk = 0, requested = 0;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, s->win);
  MPI_Fetch_and_op(&one, &chunk, MPI_INT64_T, 0, COUNTER_NEXT_CHUNK, MPI_SUM, s->win);
  MPI_Fetch_and_op(&none, &requested, MPI_INT64_T, 0, COUNTER_FLUSH, MPI_NO_OP, s->win);
  MPI_Win_unlock(0, s->win);
  *flush_requested = requested > s->round;
  return chunk;
}

/* Whether another rank has asked for a flush round this rank has not joined yet. */
static bool flush_wanted(scheduler *s) {
  return atomic_add(s, COUNTER_FLUSH, 0) > s->round;
}

static void request_flush(scheduler *s) {
  const int64_t next = s->round + 1;
  int64_t old = 0;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, s->win);
  MPI_Fetch_and_op(&next, &old, MPI_INT64_T, 0, COUNTER_FLUSH, MPI_MAX, s->win);
  MPI_Win_unlock(0, s->win);
}

/* Collective: true on every rank if any rank's status is nonzero. */
static bool anyone(const struct scheduler *s, int local) {
  int any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, s->run->comm);
  return any != 0;
}

/* The chunks this rank's rows touch, as (table << 40 | chunk), in increasing order. */
static uint64_t *touched_chunks(const scheduler *s, const uint64_t *ids, size_t n, int *count) {
  const size_t ntables = s->spec->ncols + EXTRA_TABLES;
  size_t cap = 64;
  uint64_t *keys = malloc(cap * sizeof *keys);
  *count = 0;
  for (size_t d = 0; d < ntables && keys; d++) {
    const uint64_t cr = chunk_rows(s, d);
    for (size_t i = 0; i < n && keys; i++) {
      const uint64_t key = (uint64_t)d << 40 | ids[i] / cr;
      if (*count > 0 && keys[*count - 1] == key) continue;
      if ((size_t)*count == cap) {
        uint64_t *grown = realloc(keys, 2 * cap * sizeof *keys);
        if (!grown) free(keys);
        keys = grown, cap *= 2;
        if (!keys) break;
      }
      keys[(*count)++] = key;
    }
  }
  return keys;
}

static int compare_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Upper bound (on rank 0) of what one flush round adds to the file: every chunk the rows of
 * all ranks touch, rewritten uncompressed at a new address (deflate may grow incompressible
 * data by a little), plus the chunk indexes and headers written by the two H5Fflush. */
static int round_bytes(const scheduler *s, const uint64_t *ids, size_t n, uint64_t *bytes) {
  const int ranks = s->run->size, root = s->run->rank == 0;
  int count = 0, failed = 0, *counts = root ? malloc(ranks * sizeof *counts) : NULL;
  int *displs = root ? malloc(ranks * sizeof *displs) : NULL;
  uint64_t *keys = touched_chunks(s, ids, n, &count), *all = NULL;
  if (!keys) count = 0;
  MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, s->run->comm);
  int total = 0;
  if (root && counts && displs) {
    for (int r = 0; r < ranks; r++) displs[r] = total, total += counts[r];
    all = malloc((total ? total : 1) * sizeof *all);
  }
  MPI_Gatherv(keys, count, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0, s->run->comm);
  *bytes = 0;
  if (root && all) {
    qsort(all, (size_t)total, sizeof *all, compare_u64);
    for (int i = 0; i < total; i++) {
      if (i > 0 && all[i] == all[i - 1]) continue;
      const size_t d = (size_t)(all[i] >> 40);
      const uint64_t c = all[i] & ((1ull << 40) - 1), cr = chunk_rows(s, d);
      uint64_t width;
      size_t rb;
      table_type(s, d, &width, &rb);
      const uint64_t rows = (c + 1) * cr <= s->spec->members ? cr : s->spec->members - c * cr;
      *bytes += rows * rb + rows * rb / 64 + 4096;
    }
  }
  failed = !keys || (root && (!counts || !displs || !all));
  free(keys), free(all), free(counts), free(displs);
  return anyone(s, failed) ? -1 : 0;
}

/* The space check before a round writes anything: when the file system cannot take the
 * round, every rank learns it here, together, and the file is closed as the last round left
 * it.  (A write that fails anyway, the disk filled by someone else, aborts the job: see
 * h5io.c.)  TWOFOLD_TEST_NO_SPACE_CHECK turns the check off, for the test of that abort. */
static int check_space(scheduler *s, const uint64_t *ids, size_t n, tf_error *err) {
  if (getenv("TWOFOLD_TEST_NO_SPACE_CHECK")) return 0;
  uint64_t need = 0, avail = UINT64_MAX;
  if (round_bytes(s, ids, n, &need)) return tf_fail(err, "out of memory");
  need += 256u << 10;
  if (s->run->rank == 0) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", s->run->output_path);
    struct statvfs fs;
    if (statvfs(dirname(dir), &fs) == 0) avail = (uint64_t)fs.f_bavail * fs.f_frsize;
  }
  uint64_t both[2] = {avail, need};
  MPI_Bcast(both, 2, MPI_UINT64_T, 0, s->run->comm);
  if (both[0] >= both[1]) return 0;
  return tf_fail_code(
      err, TF_ERR_IO,
      "'%s': its file system has %llu bytes free and the next flush may need %llu; the members "
      "flushed so far are kept: make room and run again with --resume",
      s->run->output_path, (unsigned long long)both[0], (unsigned long long)both[1]);
}

/* How a flush round ended, the same on every rank (each phase is agreed on). */
typedef enum round_end {
  ROUND_FLUSHED,
  ROUND_OUT_OF_MEMORY, /* on some rank, before anything was written */
  ROUND_NO_SPACE,      /* check_space refused it, before anything was written (err says why) */
  ROUND_WRITE_FAILED   /* a write or flush failed: the file is broken (file_broken) */
} round_end;

/* One collective round: rows, statuses and checksums, H5Fflush; only then the done mask,
 * H5Fflush.  Every phase is agreed on by all ranks before the next begins, so a member is
 * marked done only when its row is in the file on every rank, and a failure anywhere stops
 * every rank at the same point without marking anything. */
static int flush_round(scheduler *s, tf_error *err) {
  row_buffer *b = &s->rows;
  const tf_ensemble_spec *spec = s->spec;
  const size_t n = b->n, alloc = n ? n : 1;
  /* Rows are written in member-id order: sort an index by id (ids within a rank are already
   * increasing chunk by chunk, but chunks are claimed in any order across rounds). */
  size_t *order = malloc(alloc * sizeof *order);
  uint64_t *ids = malloc(alloc * sizeof *ids), *sums = malloc(alloc * sizeof *sums);
  uint8_t *ones = malloc(alloc), *status = malloc(alloc);
  size_t maxw = 1;
  for (size_t c = 0; c < spec->ncols; c++)
    if (tf_column_bytes(&spec->cols[c]) > maxw) maxw = tf_column_bytes(&spec->cols[c]);
  char *scratch = malloc(alloc * maxw);
  int rc = !order || !ids || !sums || !ones || !status || !scratch;
  if (!rc) {
    for (size_t i = 0; i < n; i++) order[i] = i;
    /* insertion sort: rows arrive nearly sorted */
    for (size_t i = 1; i < n; i++) {
      size_t v = order[i], j = i;
      while (j > 0 && b->ids[order[j - 1]] > b->ids[v]) order[j] = order[j - 1], j--;
      order[j] = v;
    }
    for (size_t i = 0; i < n; i++) {
      ids[i] = b->ids[order[i]];
      ones[i] = 1;
      status[i] = b->status[order[i]];
      sums[i] = row_checksum(spec, ids[i], status[i], (const void *const *)b->cols, order[i]);
    }
  }
  round_end end = ROUND_FLUSHED;
  if (anyone(s, rc)) {
    end = ROUND_OUT_OF_MEMORY;
  } else if (check_space(s, ids, n, err)) {
    end = ROUND_NO_SPACE;
  } else {
    bool bad = false;
    for (size_t c = 0; c < spec->ncols && !bad; c++) {
      const size_t w = tf_column_bytes(&spec->cols[c]);
      for (size_t i = 0; i < n; i++) memcpy(scratch + i * w, (char *)b->cols[c] + order[i] * w, w);
      bad = anyone(s, tf_h5_write_rows(s->dsets[c], column_h5type(&spec->cols[c]),
                                       spec->cols[c].width, n, ids, scratch));
    }
    if (!bad)
      bad = anyone(s, tf_h5_write_rows(s->dsets[spec->ncols + EXTRA_STATUS], s->status_file_type, 1,
                                       n, ids, status));
    if (!bad)
      bad = anyone(s, tf_h5_write_rows(s->dsets[spec->ncols + EXTRA_CHECKSUM], H5T_NATIVE_UINT64, 1,
                                       n, ids, sums));
    if (!bad) bad = anyone(s, tf_h5_flush(s->dsets[0]));
    /* The done mask last: a member is done only once its row is in the file. */
    if (!bad)
      bad = anyone(s, tf_h5_write_rows(s->dsets[spec->ncols + EXTRA_DONE], H5T_NATIVE_UINT8, 1, n,
                                       ids, ones));
    if (!bad) bad = anyone(s, tf_h5_flush(s->dsets[0]));
    if (bad) end = ROUND_WRITE_FAILED;
  }
  free(order), free(ids), free(sums), free(ones), free(status), free(scratch);
  switch (end) {
    case ROUND_FLUSHED:
      b->n = 0;
      return 0;
    case ROUND_OUT_OF_MEMORY:
      return tf_fail(err, "out of memory");
    case ROUND_NO_SPACE:
      return -1;
    case ROUND_WRITE_FAILED:
      s->file_broken = true;
      return tf_fail_code(err, TF_ERR_IO,
                          "writing results to '%s' failed (file system full or failing?); the "
                          "members flushed before are kept: run again with --resume",
                          s->run->output_path);
  }
  return -1;
}

static bool run_should_stop(void *run) {
  const tf_run *r = run;
  return tf_checkpoint_should_stop(r->start_time, r->time_limit);
}

/* Computes one member, in the worker process if isolated (then saying why one crashed). */
static int run_member(scheduler *s, uint64_t member, void *const *slots) {
  if (!s->isolate) {
    tf_guard_member(member);
    const int status = s->spec->run(s->spec->ctx, member, slots);
    tf_guard_idle();
    return status;
  }
  char why[512];
  const int status = tf_isolate_member(s->isolate, member, slots, why, sizeof why);
  if (why[0])
    fprintf(stderr,
            "twofold: warning: rank %d, member %llu: %s; recorded as %s, the others go on\n",
            s->run->rank, (unsigned long long)member, why, tf_member_status_name(status));
  return status;
}

/* The member at position i of the pending ranges, `run` the range it lies in or before. */
static uint64_t pending_member(const scheduler *s, uint64_t i, uint64_t *run) {
  while (i >= s->pending.before[*run + 1]) (*run)++;
  return s->pending.runs[*run].first + (i - s->pending.before[*run]);
}

/* Rows begin .. end of the pending members, one by one; the number finished. */
static uint64_t compute_members(scheduler *s, uint64_t begin, uint64_t end, uint64_t run,
                                void **slots, tf_ensemble_outcome *out, bool *stop) {
  const tf_ensemble_spec *spec = s->spec;
  uint64_t finished = 0;
  for (uint64_t i = begin; i < end && !*stop; i++) {
    const size_t r = s->rows.n++;
    const uint64_t member = pending_member(s, i, &run);
    for (size_t c = 0; c < spec->ncols; c++)
      slots[c] = (char *)s->rows.cols[c] + r * tf_column_bytes(&spec->cols[c]);
    s->rows.ids[r] = member;
    const int status = run_member(s, member, slots);
    if (status == TF_MEMBER_PENDING) { /* stopped inside: not done, computed again on resume */
      s->rows.n--;
      *stop = true;
      break;
    }
    s->rows.status[r] = (uint8_t)status;
    out->computed++;
    finished++;
  }
  return finished;
}

/* Rows begin .. end all at once (spec->run_chunk); the members before the first one stopped
 * inside are kept, in order, and the rest computed again on resume. */
static uint64_t compute_chunk(scheduler *s, uint64_t begin, uint64_t end, uint64_t run,
                              void **slots, tf_ensemble_outcome *out, bool *stop) {
  const tf_ensemble_spec *spec = s->spec;
  const size_t count = end - begin, first = s->rows.n, ncols = spec->ncols;
  void **rows = malloc((count * ncols + 1) * sizeof *rows);
  int *status = malloc(count * sizeof *status);
  if (!rows || !status) {
    free(rows), free(status);
    return compute_members(s, begin, end, run, slots, out, stop);
  }
  for (size_t k = 0; k < count; k++) {
    s->rows.ids[first + k] = pending_member(s, begin + k, &run);
    for (size_t c = 0; c < ncols; c++)
      rows[k * ncols + c] = (char *)s->rows.cols[c] + (first + k) * tf_column_bytes(&spec->cols[c]);
  }
  tf_guard_member(s->rows.ids[first]); /* a crash names the chunk's first member */
  spec->run_chunk(spec->ctx, count, s->rows.ids + first, rows, status);
  tf_guard_idle();
  uint64_t finished = 0;
  for (size_t k = 0; k < count; k++) {
    if (status[k] == TF_MEMBER_PENDING) {
      *stop = true;
      break;
    }
    s->rows.status[s->rows.n++] = (uint8_t)status[k];
    out->computed++;
    finished++;
  }
  free(rows), free(status);
  return finished;
}

/* Runs members until this rank's round time is up, it runs out of chunks, or a stop is
 * requested.  Returns true when the chunk counter is exhausted for this rank. */
static bool compute_round(scheduler *s, double round_start, tf_ensemble_outcome *out, bool *stop,
                          int *rc, tf_error *err) {
  const tf_ensemble_spec *spec = s->spec;
  void **slots = calloc(spec->ncols ? spec->ncols : 1, sizeof *slots);
  bool exhausted = false;
  while (MPI_Wtime() - round_start < spec->flush_interval) {
    if (s->run->pause_after > (long long)s->done_at_start &&
        (s->paused ||
         (int64_t)s->done_at_start + atomic_add(s, COUNTER_COMPLETED, 0) >= s->run->pause_after)) {
      /* the test hook: stand still until a signal arrives (or --time-limit expires), then stop
       * as it says; a run resumed with that many members done goes on.  A rank standing still
       * still joins the flush rounds other ranks ask for (their buffers fill while it waits),
       * and stands still again after each: else they would wait for it in the round and rank
       * 0, if among them, would never say it paused.  That includes the rounds others end
       * because their time is up (a long chunk on a loaded machine): its own round ends with
       * theirs. */
      if (!s->paused && s->run->rank == 0)
        fprintf(stderr, "twofold: paused; waiting for a signal\n");
      s->paused = true;
      bool join = false;
      while (!tf_checkpoint_should_stop(s->run->start_time, s->run->time_limit) &&
             !(join = flush_wanted(s) || MPI_Wtime() - round_start >= spec->flush_interval))
        nanosleep(&(struct timespec){0, 10000000}, NULL);
      if (join) break;
    }
    if (tf_checkpoint_should_stop(s->run->start_time, s->run->time_limit) ||
        (s->run->stop_after > 0 && atomic_add(s, COUNTER_COMPLETED, 0) >= s->run->stop_after)) {
      *stop = true;
      break;
    }
    if (s->rows.n + s->chunk > s->cap_rows) { /* the buffer is full: everyone flushes */
      request_flush(s);
      break;
    }
    bool flush_requested = false;
    const int64_t chunk = claim_chunk(s, &flush_requested);
    if ((uint64_t)chunk >= s->nchunks) {
      exhausted = true;
      break;
    }
    const uint64_t begin = (uint64_t)chunk * s->chunk;
    const uint64_t end = begin + s->chunk < s->pending.count ? begin + s->chunk : s->pending.count;
    uint64_t run = tf_member_ranges_find(&s->pending, begin);
    if (buffer_reserve(&s->rows, spec, s->rows.n + (end - begin), s->cap_rows)) {
      *rc = tf_fail(err, "out of memory buffering results");
      break;
    }
    uint64_t finished = spec->run_chunk && !s->isolate
                            ? compute_chunk(s, begin, end, run, slots, out, stop)
                            : compute_members(s, begin, end, run, slots, out, stop);
    atomic_add(s, COUNTER_COMPLETED, (int64_t)finished);
    if (s->run->rank == 0) {
      const int64_t completed = atomic_add(s, COUNTER_COMPLETED, 0);
      tf_progress_update(&s->progress, out->resumed + (uint64_t)completed, false);
    }
    if (*stop || flush_requested) break;
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
  for (size_t c = 0; c < s->spec->ncols + EXTRA_TABLES && !s->file_broken; c++)
    if (s->dsets && s->dsets[c] >= 0) H5Dclose(s->dsets[c]);
  free(s->dsets);
  if (s->status_type >= 0) H5Tclose(s->status_type);
  if (s->status_file_type >= 0) H5Tclose(s->status_file_type);
  tf_isolate_destroy(s->isolate);
  tf_member_ranges_free(&s->pending);
  for (size_t c = 0; c < s->spec->ncols; c++) free(s->rows.cols ? s->rows.cols[c] : NULL);
  free(s->rows.cols), free(s->rows.ids), free(s->rows.status);
}

static int execute(tf_run *run, hid_t *file, const tf_ensemble_spec *spec, bool resume,
                   tf_ensemble_outcome *out, tf_error *err);

/* An isolated run records why a member crashed or timed out in one more column, which the
 * rank fills (isolate.h); the job's own columns come first, unchanged. */
int tf_ensemble_execute(tf_run *run, hid_t *file, const tf_ensemble_spec *spec, bool resume,
                        tf_ensemble_outcome *out, tf_error *err) {
  if (!run->isolate) return execute(run, file, spec, resume, out, err);
  tf_ensemble_spec isolated = *spec;
  tf_column *cols = malloc((spec->ncols + 1) * sizeof *cols);
  if (!cols) {
    memset(out, 0, sizeof *out);
    out->statuses = tf_member_status_recorded(true);
    return tf_fail(err, "out of memory");
  }
  memcpy(cols, spec->cols, spec->ncols * sizeof *cols);
  cols[spec->ncols] = (tf_column){
      "failure", TF_COLUMN_TEXT, 1,
      "why the member crashed or timed out (run.isolate); empty for every other member"};
  isolated.cols = cols, isolated.ncols = spec->ncols + 1;
  const int rc = execute(run, file, &isolated, resume, out, err);
  free(cols);
  return rc;
}

static int execute(tf_run *run, hid_t *file, const tf_ensemble_spec *spec, bool resume,
                   tf_ensemble_outcome *out, tf_error *err) {
  memset(out, 0, sizeof *out);
  out->statuses = tf_member_status_recorded(run->isolate); /* until the file says */
  /* a file that cannot hold crashed or timeout keeps the enum files always had */
  scheduler s = {
      .run = run,
      .spec = spec,
      .win = MPI_WIN_NULL,
      .status_type = tf_h5_status_type(),
      .status_file_type = tf_h5_status_type_upto(tf_member_status_recorded(run->isolate))};
  if (run->isolate &&
      !(s.isolate = tf_isolate_create(spec, run->member_time_limit, run_should_stop, run)))
    return tf_fail(err, "out of memory");
  s.dsets = malloc((spec->ncols + EXTRA_TABLES) * sizeof *s.dsets);
  s.rows.cols = calloc(spec->ncols ? spec->ncols : 1, sizeof *s.rows.cols);
  if (!s.dsets || !s.rows.cols) return tf_fail(err, "out of memory");
  for (size_t c = 0; c < spec->ncols + EXTRA_TABLES; c++) s.dsets[c] = -1;
  s.cap_rows = buffer_rows(&s);
  int rc = open_datasets(&s, *file, resume, err);
  if (!rc) out->statuses = H5Tget_nmembers(s.status_file_type);
  if (!rc) rc = find_pending(&s, file, resume, out, err);
  if (rc) {
    out->file_broken = s.file_broken;
    scheduler_free(&s);
    return -1;
  }
  s.chunk = choose_chunk(spec, s.pending.count, run->size);
  if (s.chunk > s.cap_rows) s.chunk = s.cap_rows;
  s.nchunks = (s.pending.count + s.chunk - 1) / s.chunk;
  MPI_Win_allocate(run->rank == 0 ? COUNTERS * sizeof(int64_t) : 0, sizeof(int64_t), MPI_INFO_NULL,
                   run->comm, &s.counters, &s.win);
  if (run->rank == 0)
    for (int c = 0; c < COUNTERS; c++) s.counters[c] = 0;
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
    s.round++;
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
  out->file_broken = s.file_broken;
  out->rounds = s.round;
  out->seconds = MPI_Wtime() - t_start;
  uint64_t computed = out->computed;
  MPI_Allreduce(&computed, &out->computed, 1, MPI_UINT64_T, MPI_SUM, run->comm);
  out->done = out->done_before + out->computed;
  out->complete = rc == 0 && !out->interrupted && out->done == spec->members;
  if (run->rank == 0 && rc == 0) tf_progress_finish(&s.progress, out->done);
  scheduler_free(&s);
  return rc;
}

/* Says which members failed (rank 0 reads their first ids back from the closed file; the
 * other ranks, which print nothing, keep the counts) and, unless the run was interrupted,
 * fails it if too many did.  The counts are the same on every rank, so every rank reaches the
 * same exit code, without a collective call here. */
static void judge_failures(tf_run *run, const tf_ensemble_outcome *out) {
  run->failures[0] = '\0';
  const long long failed = tf_member_failures(out->status_counts);
  long long done = 0;
  for (int k = 0; k < TF_MEMBER_STATUS_COUNT; k++)
    if (k != TF_MEMBER_PENDING) done += out->status_counts[k];
  if (!failed) return;
  const bool fail_run =
      !out->interrupted && tf_failures_fail_run(failed, done, run->max_failed_fraction);
  if (fail_run) run->outcome = TF_RUN_MEMBERS_FAILED;
  tf_failures f = {0};
  tf_error err;
  const hid_t file = run->rank == 0 ? tf_h5_open_serial(run->output_path, &err) : -1;
  if (file < 0 || tf_failures_read(file, &f) || tf_failures_failed(&f) != failed) {
    memcpy(f.counts, out->status_counts, sizeof f.counts); /* counts without ids */
    f.have_ids = false;
  }
  if (file >= 0) H5Fclose(file);
  char list[768];
  tf_failures_describe(&f, list, sizeof list);
  char why[128] = "";
  if (fail_run && failed == done)
    snprintf(why, sizeof why, "no member succeeded");
  else if (fail_run)
    snprintf(why, sizeof why, "that is more than run.max_failed_fraction = %g of them",
             run->max_failed_fraction);
  snprintf(run->failures, sizeof run->failures, "%lld of %lld members failed: %s%s%s", failed, done,
           list, *why ? "; " : "", why);
}

int tf_ensemble_finish(tf_run *run, hid_t file, const tf_ensemble_outcome *out, int rc,
                       tf_error *err) {
  return tf_ensemble_finish_summarized(run, file, out, rc, NULL, NULL, err);
}

int tf_ensemble_finish_summarized(tf_run *run, hid_t file, const tf_ensemble_outcome *out, int rc,
                                  tf_results_summarize_fn summarize, void *ctx, tf_error *err) {
  if (out->file_broken) { /* err says so: the executable prints it, the library returns it */
    if (run->discard_if_broken) {
      char why[TF_ERROR_MAX];
      snprintf(why, sizeof why, "%s", err->msg);
      tf_fail_more(err, "%s; it is removed: it was made from %s", why, run->config_path);
      if (run->rank == 0) unlink(run->output_path), tf_lock_release();
    }
    MPI_Barrier(run->comm); /* removed before any rank may end */
    run->file_broken = true;
    tf_error_mark(err, TF_ERR_IO);
    return -1;
  }
  tf_json_integer(run->summary, "done", (long long)out->done);
  tf_json_integer(run->summary, "computed", (long long)out->computed);
  tf_json_integer(run->summary, "resumed_from", (long long)out->resumed);
  tf_json_integer(run->summary, "flush_rounds", out->rounds);
  tf_json_number(run->summary, "members_per_second",
                 out->seconds > 0 ? (double)out->computed / out->seconds : 0.0);
  if (run->parts > 0) {
    char part[64];
    snprintf(part, sizeof part, "%d/%d", run->part, run->parts);
    tf_json_string(run->summary, "part", part);
  }
  const bool complete = rc == 0 && out->complete;
  tf_error close_err;
  if (tf_results_close_summarized(run, file, complete, summarize, ctx, &close_err) && rc == 0) {
    *err = close_err;
    rc = -1;
  }
  if (rc == 0 && out->interrupted) run->outcome = TF_RUN_INTERRUPTED;
  if (rc == 0) judge_failures(run, out);
  return rc;
}
