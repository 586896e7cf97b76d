/* merge.c — see merge.h. */
#include "merge.h"

#include <errno.h>
#include <hdf5.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "h5io.h"

typedef struct part_file {
  const char *path;
  hid_t file;
  char *fingerprint, *config;
  char *plugin_code;     /* a plugin model's code (results.c), NULL for a built-in */
  long long part, parts; /* parts = 0: not a split run */
  uint64_t members;
  uint8_t *done;
  uint64_t ndone;
} part_file;

/* Every problem found before writing, one line each; reported together. */
typedef struct problems {
  char text[TF_ERROR_MAX - 256];
  int count;
} problems;

static void problem(problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(problems *p, const char *fmt, ...) {
  const size_t len = strlen(p->text);
  p->count++;
  if (len + 64 >= sizeof p->text) return;
  if (len + 200 >= sizeof p->text) {
    snprintf(p->text + len, sizeof p->text - len, "\n  - ... (more problems not shown)");
    return;
  }
  snprintf(p->text + len, sizeof p->text - len, "\n  - ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->text + strlen(p->text), sizeof p->text - strlen(p->text), fmt, ap);
  va_end(ap);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The first line where two fingerprints differ, for the message. */
static void first_difference(const char *a, const char *b, char *out, size_t n) {
  const char *section = "";
  size_t section_len = 0;
  while (*a && *b) {
    const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
    const size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
    if (la != lb || memcmp(a, b, la) != 0) {
      snprintf(out, n, "%s%.*s '%.*s' vs '%.*s'", section_len ? "in " : "", (int)section_len,
               section, (int)(la > 80 ? 80 : la), a, (int)(lb > 80 ? 80 : lb), b);
      return;
    }
    if (la > 0 && a[la - 1] == ':' && a[0] != ' ') section = a, section_len = la - 1;
    a += la + (ea ? 1 : 0);
    b += lb + (eb ? 1 : 0);
  }
  snprintf(out, n, "one is a prefix of the other");
}

static void part_close(part_file *p) {
  if (p->file >= 0) H5Fclose(p->file);
  p->file = -1;
  free(p->fingerprint), free(p->config), free(p->done), free(p->plugin_code);
  p->fingerprint = p->config = p->plugin_code = NULL;
  p->done = NULL;
}

/* Opens one part read-only and reads what the checks need; false (with a problem) if it
 * cannot be used at all. */
static bool part_open(part_file *p, problems *pr) {
  struct stat st;
  if (stat(p->path, &st) != 0) {
    problem(pr, "'%s': %s", p->path, strerror(errno));
    return false;
  }
  p->file = H5Fopen(p->path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (p->file < 0) {
    problem(pr, "'%s' is not a readable HDF5 file (corrupt, or still being written?)", p->path);
    return false;
  }
  tf_error corrupt;
  if (tf_h5_check_strings(p->file, p->path, &corrupt)) {
    problem(pr, "%s", corrupt.msg);
    return false;
  }
  char *version = tf_h5_attr_read_string(p->file, "twofold_version");
  p->fingerprint = tf_h5_attr_read_string(p->file, "fingerprint");
  p->config = tf_h5_attr_read_string(p->file, "config");
  const bool ours = version && p->fingerprint && p->config;
  free(version);
  if (!ours) {
    problem(pr, "'%s' is not a twofold results file", p->path);
    return false;
  }
  if (H5Aexists(p->file, "model_plugin_code") > 0)
    p->plugin_code = tf_h5_attr_read_string(p->file, "model_plugin_code");
  if (tf_h5_attr_read_int(p->file, "parts", &p->parts)) p->parts = 0;
  if (p->parts > 0 && tf_h5_attr_read_int(p->file, "part", &p->part)) p->parts = 0;
  hid_t d = H5Dopen2(p->file, "members/done", H5P_DEFAULT);
  if (d < 0) {
    problem(pr, "'%s' has no /members/done: not a job that can be split and merged", p->path);
    return false;
  }
  hid_t space = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(space, dims, NULL);
  H5Sclose(space);
  p->members = dims[0];
  p->done = malloc(p->members ? p->members : 1);
  const bool ok = p->done && (p->members == 0 ||
                              tf_h5_read_rows(d, H5T_NATIVE_UINT8, 1, 0, p->members, p->done) == 0);
  H5Dclose(d);
  if (!ok) {
    problem(pr, "'%s': cannot read /members/done (corrupt file?)", p->path);
    return false;
  }
  for (uint64_t m = 0; m < p->members; m++) p->ndone += p->done[m] != 0;
  /* what --part accepts; anything else would have the coverage check count for ever */
  if (p->parts < 0 || p->parts > INT_MAX ||
      (p->parts > 0 && (p->part < 0 || p->part >= p->parts))) {
    problem(pr, "'%s': corrupt or not a twofold results file: it says it is part %lld of %lld",
            p->path, p->part, p->parts);
    return false;
  }
  return true;
}

/* Consistency with the first usable part. */
static void check_against(const part_file *ref, const part_file *p, problems *pr) {
  if (strcmp(ref->fingerprint, p->fingerprint) != 0) {
    char diff[400];
    first_difference(ref->fingerprint, p->fingerprint, diff, sizeof diff);
    problem(pr,
            "'%s' and '%s' were run with different configs (model, initial, integrator, job, "
            "members or seed): %s",
            ref->path, p->path, diff);
  } else if ((ref->plugin_code || p->plugin_code) &&
             (!ref->plugin_code || !p->plugin_code ||
              strcmp(ref->plugin_code, p->plugin_code) != 0)) {
    problem(pr, "'%s' and '%s' were run with different model code (%s vs %s)", ref->path, p->path,
            ref->plugin_code ? ref->plugin_code : "a built-in model",
            p->plugin_code ? p->plugin_code : "a built-in model");
  } else if (ref->members != p->members) {
    problem(pr, "'%s' holds %llu members, '%s' %llu", ref->path, (unsigned long long)ref->members,
            p->path, (unsigned long long)p->members);
  } else if (ref->parts != p->parts) {
    problem(pr, "'%s' is a part of %lld, '%s' of %lld (runs split differently)", ref->path,
            ref->parts, p->path, p->parts);
  }
}

int tf_merge_part_progress(long long file_id, long long *part, long long *parts, uint64_t *block,
                           uint64_t *done) {
  const hid_t f = (hid_t)file_id;
  *done = *block = 0;
  if (H5Aexists(f, "parts") <= 0 || tf_h5_attr_read_int(f, "parts", parts) || *parts <= 0 ||
      tf_h5_attr_read_int(f, "part", part))
    return 0;
  hid_t d = H5Dopen2(f, "members/done", H5P_DEFAULT);
  if (d < 0) return -1;
  hid_t space = H5Dget_space(d);
  hsize_t members = 0;
  H5Sget_simple_extent_dims(space, &members, NULL);
  H5Sclose(space);
  const uint64_t lo = tf_part_first(members, *part, *parts);
  const uint64_t hi = tf_part_first(members, *part + 1, *parts);
  *block = hi - lo;
  const uint64_t step = 1 << 20;
  uint8_t *buf = malloc(step);
  int rc = buf ? 1 : -1;
  for (uint64_t start = lo; buf && start < hi; start += step) {
    const uint64_t count = hi - start < step ? hi - start : step;
    if (tf_h5_read_rows(d, H5T_NATIVE_UINT8, 1, start, count, buf)) {
      rc = -1;
      break;
    }
    for (uint64_t i = 0; i < count; i++) *done += buf[i] != 0;
  }
  free(buf);
  H5Dclose(d);
  return rc;
}

/* Names every block (array task) with members no part has done. */
static void check_coverage(const part_file *parts, int n, const part_file *ref,
                           const int32_t *owner, const bool *consistent, problems *pr) {
  const uint64_t m = ref->members;
  if (ref->parts > 0) {
    for (long long k = 0; k < ref->parts; k++) {
      const uint64_t lo = tf_part_first(m, k, ref->parts), hi = tf_part_first(m, k + 1, ref->parts);
      uint64_t missing = 0;
      for (uint64_t i = lo; i < hi; i++) missing += owner[i] < 0;
      if (!missing) continue;
      const part_file *holder = NULL;
      for (int j = 0; j < n; j++)
        if (consistent[j] && parts[j].part == k) holder = &parts[j];
      if (holder)
        problem(pr,
                "task %lld (part %lld/%lld, members %llu-%llu): '%s' has only %llu of %llu "
                "members done; the task failed or was interrupted: finish it with "
                "`twofold run CONFIG --part %lld/%lld --resume -o %s`",
                k, k, ref->parts, (unsigned long long)lo, (unsigned long long)(hi - 1),
                holder->path, (unsigned long long)(hi - lo - missing),
                (unsigned long long)(hi - lo), k, ref->parts, holder->path);
      else
        problem(pr,
                "task %lld (part %lld/%lld, members %llu-%llu): no usable part file; the task "
                "failed or its file is missing: rerun it (twofold run with --part %lld/%lld)",
                k, k, ref->parts, (unsigned long long)lo, (unsigned long long)(hi - 1), k,
                ref->parts);
    }
    return;
  }
  for (uint64_t i = 0; i < m;) {
    if (owner[i] >= 0) {
      i++;
      continue;
    }
    uint64_t j = i;
    while (j < m && owner[j] < 0) j++;
    problem(pr, "members %llu-%llu are done in none of the files", (unsigned long long)i,
            (unsigned long long)(j - 1));
    i = j;
  }
}

static int copy_bytes(const char *from, const char *to, tf_error *err) {
  FILE *in = fopen(from, "rb");
  if (!in) return tf_fail_code(err, TF_ERR_CONFIG, "cannot read '%s': %s", from, strerror(errno));
  FILE *out = fopen(to, "wbx");
  if (!out) {
    fclose(in);
    return tf_fail_code(err, TF_ERR_IO, "cannot create '%s': %s", to, strerror(errno));
  }
  enum { BUF = 1 << 22 };
  char *buf = malloc(BUF);
  int rc = buf ? 0 : -1;
  size_t got;
  while (!rc && (got = fread(buf, 1, BUF, in)) > 0)
    if (fwrite(buf, 1, got, out) != got) rc = -1;
  if (ferror(in)) rc = -1;
  free(buf);
  fclose(in);
  if (fclose(out) != 0) rc = -1;
  return rc ? tf_fail_code(err, TF_ERR_IO, "copying '%s' to '%s' failed: %s", from, to,
                           strerror(errno))
            : 0;
}

typedef struct copy_ctx {
  const part_file *parts;
  int nparts;
  int base;
  const int32_t *owner;
  uint64_t members;
  int rc;
  char failed[256];
  int unreadable; /* the part whose rows could not be read (-1: none) */
} copy_ctx;

/* One /members table being filled from the other parts. */
typedef struct table_copy {
  copy_ctx *c;
  hid_t dst, mtype;
  int rank;
  uint64_t width;
  size_t row_bytes;
  char path[512];
  hid_t *src;         /* per part, opened on first use */
  bool *src_chunk_ok; /* the part's chunks have the merged file's shape */
  hsize_t chunk[2];   /* of the merged table; chunk[0] = 0 if not chunked */
  void *buf, *raw;
  uint64_t batch;
  size_t raw_cap;
} table_copy;

static hid_t source(table_copy *t, int p) {
  if (t->src[p] >= 0) return t->src[p];
  t->src[p] = H5Dopen2(t->c->parts[p].file, t->path, H5P_DEFAULT);
  if (t->src[p] < 0) t->c->unreadable = p;
  if (t->src[p] >= 0 && t->chunk[0] > 0) {
    hid_t dcpl = H5Dget_create_plist(t->src[p]);
    hsize_t chunk[2] = {0, 0};
    t->src_chunk_ok[p] = H5Pget_layout(dcpl) == H5D_CHUNKED &&
                         H5Pget_chunk(dcpl, 2, chunk) == t->rank && chunk[0] == t->chunk[0] &&
                         (t->rank == 1 || chunk[1] == t->chunk[1]);
    H5Pclose(dcpl);
  }
  return t->src[p];
}

/* Rows [lo, hi) from part p, decoded and encoded again (chunks shared with another part). */
static int copy_rows(table_copy *t, int p, uint64_t lo, uint64_t hi) {
  const hid_t src = source(t, p);
  if (src < 0) return -1;
  for (uint64_t i = lo; i < hi;) {
    const uint64_t n = hi - i < t->batch ? hi - i : t->batch;
    if (tf_h5_read_rows(src, t->mtype, t->width, i, n, t->buf)) {
      t->c->unreadable = p;
      return -1;
    }
    hid_t fs = H5Dget_space(t->dst);
    const hsize_t start[2] = {i, 0}, count[2] = {n, t->width};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(t->rank, count, NULL);
    const herr_t rc = H5Dwrite(t->dst, t->mtype, ms, fs, H5P_DEFAULT, t->buf);
    H5Sclose(ms);
    H5Sclose(fs);
    if (rc < 0) return -1;
    i += n;
  }
  return 0;
}

/* A chunk whose rows all come from part p: its compressed bytes as they are (no decoding);
 * falls back to rows if the part's chunk is absent or shaped differently. */
static int copy_chunk(table_copy *t, int p, uint64_t lo, uint64_t hi) {
  const hid_t src = source(t, p);
  if (src < 0) return -1;
  const hsize_t offset[2] = {lo, 0};
  hsize_t bytes = 0;
  if (!t->src_chunk_ok[p] || H5Dget_chunk_storage_size(src, offset, &bytes) < 0 || bytes == 0)
    return copy_rows(t, p, lo, hi);
  if (bytes > t->raw_cap) {
    void *grown = realloc(t->raw, bytes);
    if (!grown) return -1;
    t->raw = grown, t->raw_cap = bytes;
  }
  uint32_t filters = 0;
  if (H5Dread_chunk(src, H5P_DEFAULT, offset, &filters, t->raw) < 0) return copy_rows(t, p, lo, hi);
  return H5Dwrite_chunk(t->dst, H5P_DEFAULT, filters, offset, bytes, t->raw) < 0 ? -1 : 0;
}

/* Copies the rows every other part owns into one /members table of the merged file. */
static int copy_table(hid_t dst_group, const char *name, copy_ctx *c) {
  hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
  H5Pset_chunk_cache(dapl, 12421, (size_t)64 << 20, 1.0);
  hid_t dst = H5Dopen2(dst_group, name, dapl);
  H5Pclose(dapl);
  if (dst < 0) return -1;
  hid_t space = H5Dget_space(dst);
  hsize_t dims[2] = {0, 1};
  const int rank = H5Sget_simple_extent_ndims(space);
  H5Sget_simple_extent_dims(space, dims, NULL);
  H5Sclose(space);
  if (dims[0] != c->members || rank < 1 || rank > 2) return H5Dclose(dst) < 0 ? -1 : 0;

  table_copy t = {.c = c, .dst = dst, .rank = rank, .width = rank == 2 ? dims[1] : 1};
  hid_t ftype = H5Dget_type(dst);
  t.mtype = H5Tget_native_type(ftype, H5T_DIR_ASCEND);
  H5Tclose(ftype);
  t.row_bytes = H5Tget_size(t.mtype) * (size_t)t.width;
  t.batch = ((uint64_t)32 << 20) / (t.row_bytes ? t.row_bytes : 1);
  if (t.batch < 1) t.batch = 1;
  snprintf(t.path, sizeof t.path, "members/%s", name);
  hid_t dcpl = H5Dget_create_plist(dst);
  if (H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_chunk(dcpl, 2, t.chunk) != rank) t.chunk[0] = 0;
  H5Pclose(dcpl);
  const int nparts = c->nparts;
  t.src = malloc((size_t)nparts * sizeof *t.src);
  t.src_chunk_ok = calloc((size_t)nparts, sizeof *t.src_chunk_ok);
  t.buf = malloc((size_t)t.batch * t.row_bytes);
  int rc = t.src && t.src_chunk_ok && t.buf ? 0 : -1;
  for (int p = 0; t.src && p < nparts; p++) t.src[p] = -1;

  const uint64_t m = c->members;
  const uint64_t step = t.chunk[0] > 0 ? t.chunk[0] : t.batch;
  for (uint64_t lo = 0; lo < m && !rc; lo += step) {
    const uint64_t hi = lo + step < m ? lo + step : m;
    const int first = c->owner[lo];
    uint64_t same = lo + 1;
    while (same < hi && c->owner[same] == first) same++;
    if (same == hi) { /* one owner for the whole chunk */
      if (first != c->base)
        rc = t.chunk[0] > 0 ? copy_chunk(&t, first, lo, hi) : copy_rows(&t, first, lo, hi);
      continue;
    }
    for (uint64_t i = lo; i < hi && !rc;) { /* a chunk shared by parts: row by row runs */
      uint64_t j = i + 1;
      while (j < hi && c->owner[j] == c->owner[i]) j++;
      if (c->owner[i] != c->base) rc = copy_rows(&t, c->owner[i], i, j);
      i = j;
    }
  }
  for (int p = 0; t.src && p < nparts; p++)
    if (t.src[p] >= 0) H5Dclose(t.src[p]);
  free(t.src), free(t.src_chunk_ok), free(t.buf), free(t.raw);
  H5Tclose(t.mtype);
  if (H5Dclose(dst) < 0) rc = -1;
  return rc;
}

static herr_t visit_table(hid_t group, const char *name, const H5L_info_t *info, void *data) {
  (void)info;
  copy_ctx *c = data;
  H5O_info_t oi;
  if (H5Oget_info_by_name2(group, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return 0;
  if (oi.type != H5O_TYPE_DATASET) return 0;
  if (copy_table(group, name, c)) {
    c->rc = -1;
    snprintf(c->failed, sizeof c->failed, "%s", name);
    return 1;
  }
  return 0;
}

/* The copy of a part file is finished as a whole run, which --resume refuses to do to a file
 * that still says it holds one part. */
static int drop_part(const char *path, tf_error *err) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return tf_fail_code(err, TF_ERR_IO, "cannot reopen '%s'", path);
  for (const char *const *a = (const char *const[]){"part", "parts", NULL}; *a; a++)
    if (H5Aexists(f, *a) > 0) H5Adelete(f, *a);
  return H5Fclose(f) < 0 ? tf_fail_code(err, TF_ERR_IO, "cannot write attributes to '%s'", path)
                         : 0;
}

/* The merged file describes the whole run: no part attributes; where it came from. */
static int mark_merged(const char *path, const part_file *parts, int n, tf_error *err) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return tf_fail_code(err, TF_ERR_IO, "cannot reopen '%s'", path);
  static const char *const stale[] = {"part", "parts", "resumed", NULL};
  for (const char *const *a = stale; *a; a++)
    if (H5Aexists(f, *a) > 0) H5Adelete(f, *a);
  /* the parts' paths as a list of names (a path may hold a comma, so not joined first) */
  const char **list = calloc((size_t)n + 1, sizeof *list);
  int rc = list ? 0 : -1;
  for (int i = 0; list && i < n; i++) list[i] = parts[i].path;
  long long complete = 0;
  if (!rc) rc = tf_h5_attr_strings(f, "merged_from", list, (size_t)n);
  if (!rc) rc = tf_h5_attr_read_int(f, "complete", &complete);
  free(list);
  if (H5Fclose(f) < 0) rc = -1;
  if (rc) return tf_fail_code(err, TF_ERR_IO, "cannot write attributes to '%s'", path);
  if (!complete) return tf_fail_code(err, TF_ERR_IO, "'%s' is not complete after merging", path);
  return 0;
}

tf_merge_end tf_merge(const char *output, const char *const *files, int nfiles, bool overwrite,
                      tf_merge_finish_fn finish, void *ctx, tf_merge_stats *stats, tf_error *err) {
  const double t0 = now_seconds();
  memset(stats, 0, sizeof *stats);
  if (nfiles < 1)
    return tf_fail_code(err, TF_ERR_CONFIG, "merge: no part files given"), TF_MERGE_REFUSED;
  struct stat st;
  for (int i = 0; i < nfiles; i++)
    if (same_file(output, files[i]))
      return tf_fail_code(err, TF_ERR_CONFIG, "output '%s' is one of the part files", output),
             TF_MERGE_REFUSED;

  part_file *parts = calloc((size_t)nfiles, sizeof *parts);
  problems *pr = calloc(1, sizeof *pr);
  if (!parts || !pr) {
    free(parts), free(pr);
    return tf_fail(err, "out of memory"), TF_MERGE_FAILED;
  }
  const part_file *ref = NULL;
  bool *consistent = calloc((size_t)nfiles, sizeof *consistent);
  for (int i = 0; consistent && i < nfiles; i++) {
    parts[i].path = files[i];
    parts[i].file = -1;
    if (!part_open(&parts[i], pr)) {
      part_close(&parts[i]);
      continue;
    }
    const int before = pr->count;
    if (ref)
      check_against(ref, &parts[i], pr);
    else
      ref = &parts[i];
    consistent[i] = pr->count == before;
    for (int j = 0; j < i; j++)
      if (parts[j].file >= 0 && parts[i].parts > 0 && parts[j].part == parts[i].part &&
          parts[j].parts == parts[i].parts)
        problem(pr, "'%s' and '%s' both hold part %lld/%lld", parts[j].path, parts[i].path,
                parts[i].part, parts[i].parts);
  }
  /* owner[m]: the first consistent part that has member m done (-1: none).  Coverage is
   * checked even when other problems were found, so a failed task is always named. */
  int32_t *owner = NULL;
  int rc = consistent ? 0 : tf_fail(err, "out of memory");
  if (!rc && ref) {
    owner = malloc((ref->members ? ref->members : 1) * sizeof *owner);
    if (!owner)
      rc = tf_fail(err, "out of memory for %llu members", (unsigned long long)ref->members);
    for (uint64_t m = 0; owner && m < ref->members; m++) {
      owner[m] = -1;
      for (int i = 0; i < nfiles && owner[m] < 0; i++)
        if (consistent[i] && parts[i].done[m]) owner[m] = i;
    }
    if (owner) check_coverage(parts, nfiles, ref, owner, consistent, pr);
  }
  if (!rc && stat(output, &st) == 0 && !overwrite)
    problem(pr, "output '%s' already exists; pass --overwrite to replace it", output);
  else if (!rc && stat(output, &st) == 0 && !tf_h5_is_results_file(output))
    problem(pr, "output '%s' is a %s; --overwrite replaces only twofold results files", output,
            S_ISREG(st.st_mode) ? "file that is not a twofold results file" : tf_file_kind(output));
  /* bad input, as opposed to a failure while writing */
  bool refused = !rc && (pr->count || !ref);
  if (!rc && pr->count)
    rc = tf_fail_code(err, TF_ERR_CONFIG,
                      "cannot merge into '%s' (%d problem%s; nothing was written):%s", output,
                      pr->count, pr->count > 1 ? "s" : "", pr->text);
  else if (!rc && !ref)
    rc = tf_fail_code(err, TF_ERR_CONFIG, "merge: no usable part file");

  char tmp[4200] = "";
  if (!rc) {
    stats->members = ref->members;
    stats->parts = (int)ref->parts;
    const int base = (int)(ref - parts);
    snprintf(tmp, sizeof tmp, "%s.merging-%ld", output, (long)getpid());
    unlink(tmp); /* a leftover of a merge that died */
    rc = copy_bytes(ref->path, tmp, err);
    if (!rc) {
      hid_t f = H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT);
      hid_t g = f >= 0 ? H5Gopen2(f, "members", H5P_DEFAULT) : -1;
      copy_ctx c = {.parts = parts,
                    .nparts = nfiles,
                    .base = base,
                    .owner = owner,
                    .members = ref->members,
                    .unreadable = -1};
      if (g >= 0) H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, visit_table, &c);
      refused = c.rc && c.unreadable >= 0; /* bad input, exit 2 */
      if (refused)
        rc =
            tf_fail_code(err, TF_ERR_CONFIG,
                         "cannot merge into '%s': /members/%s of '%s' cannot be read into the copy "
                         "of '%s' (one of them is corrupt); nothing was written",
                         output, c.failed, parts[c.unreadable].path, ref->path);
      else if (g < 0 || c.rc)
        rc = tf_fail_code(err, TF_ERR_IO,
                          "merge: copying /members/%s into '%s' (a copy of '%s') failed",
                          g < 0 ? "" : c.failed, tmp, ref->path);
      if (g >= 0) H5Gclose(g);
      if (f >= 0 && H5Fclose(f) < 0)
        rc = tf_fail_code(err, TF_ERR_IO, "merge: closing '%s' failed", tmp);
      for (uint64_t m = 0; m < ref->members; m++) stats->rows_copied += owner[m] != base;
    }
    stats->copy_seconds = now_seconds() - t0;
    if (!rc) {
      char source[4200];
      snprintf(source, sizeof source, "%s (config as run)", ref->path);
      rc = drop_part(tmp, err) || finish(tmp, ref->config, source, ctx, err);
      if (rc) { /* the copy of ref failed: say which part it was */
        char why[TF_ERROR_MAX - 200];
        snprintf(why, sizeof why, "%.1700s", err->msg);
        tf_fail_more(err, "merge: finishing the copy of '%s' failed: %s", ref->path, why);
      }
    }
    if (!rc) rc = mark_merged(tmp, parts, nfiles, err);
    if (!rc && rename(tmp, output) != 0)
      rc = tf_fail_code(err, TF_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, output,
                        strerror(errno));
    if (rc) unlink(tmp);
  }
  free(owner);
  free(consistent);
  for (int i = 0; i < nfiles; i++) part_close(&parts[i]);
  free(parts);
  free(pr);
  stats->seconds = now_seconds() - t0;
  return !rc ? TF_MERGE_DONE : refused ? TF_MERGE_REFUSED : TF_MERGE_FAILED;
}
