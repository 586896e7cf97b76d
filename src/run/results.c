/* results.c — see results.h. */
#include "results.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "h5io.h"
#include "lock.h"
#include "model.h"
#include "plugin.h"
#include "version.h"

static char *fingerprint(const tf_config *cfg, const char *const *paths) {
  size_t len = 0, cap = 256;
  char *out = malloc(cap);
  if (!out) return NULL;
  out[0] = '\0';
  for (const char *const *p = paths; *p; p++) {
    char *text = tf_config_dump_path(cfg, *p);
    if (!text && tf_config_has(cfg, *p)) { /* out of memory */
      free(out);
      return NULL;
    }
    const char *piece = text ? text : "(absent)\n";
    const size_t need = len + strlen(*p) + strlen(piece) + 8;
    if (need > cap) {
      cap = need * 2;
      char *grown = realloc(out, cap);
      if (!grown) {
        free(out), free(text);
        return NULL;
      }
      out = grown;
    }
    len += (size_t)snprintf(out + len, cap - len, "%s:\n%s\n", *p, piece);
    free(text);
  }
  return out;
}

static bool file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Parallel HDF5 allocates a dataset's whole storage when it is opened for writing, so a file
 * whose /members tables declare more rows than the run has (crafted, or another run's) would
 * make --resume write gigabytes before any check: rank 0 reads the shapes read-only first.
 * Every table must have the same number of rows, and an ensemble exactly ensemble.members.
 * Every string attribute must pass the bounded read (h5io.c), which names the damaged one. */
static int members_tables_fit(tf_run *run, const char *path, tf_error *err) {
  struct stat st; /* anything but a regular HDF5 file is for the parallel open to report (a
                     FIFO would block here) */
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || H5Fis_hdf5(path) <= 0) return 0;
  const hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return 0; /* the parallel open reports it */
  int rc = tf_h5_check_strings(f, path, err);
  if (rc == 0 && H5Lexists(f, "members", H5P_DEFAULT) > 0) {
    const hid_t g = H5Gopen2(f, "members", H5P_DEFAULT);
    H5G_info_t info;
    long long expected = -1;
    if (tf_config_has(run->cfg, "ensemble.members")) {
      const long long d = 0;
      tf_error ignored;
      if (tf_config_get_int(run->cfg, "ensemble.members", &d, 0, LLONG_MAX, &expected, &ignored))
        expected = -1;
    }
    for (hsize_t i = 0; g >= 0 && rc == 0 && H5Gget_info(g, &info) >= 0 && i < info.nlinks; i++) {
      char name[256];
      if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name,
                             H5P_DEFAULT) < 0)
        continue;
      H5O_info_t oi;
      if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_DATASET)
        continue;
      const hid_t d = H5Dopen2(g, name, H5P_DEFAULT), sp = d >= 0 ? H5Dget_space(d) : -1;
      hsize_t dims[8] = {0};
      const int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
      if (nd >= 1 && nd <= 8) H5Sget_simple_extent_dims(sp, dims, NULL);
      if (sp >= 0) H5Sclose(sp);
      if (d >= 0) H5Dclose(d);
      if (nd < 1 || nd > 8)
        rc = -1;
      else if (expected < 0)
        expected = (long long)dims[0]; /* no ensemble: the first table's */
      if (rc == 0 && (long long)dims[0] != expected) rc = -1;
      if (rc)
        tf_fail_code(
            err, TF_ERR_CONFIG,
            "cannot resume '%s': its table /members/%s declares %llu rows where this run has "
            "%lld; not this run's file (--overwrite starts again)",
            path, name, (unsigned long long)dims[0], expected);
    }
    if (g >= 0) H5Gclose(g);
  }
  H5Fclose(f);
  return rc;
}

/* Whether /members, if the file links it, opens: a run killed during its first metadata
 * flush can leave the link on disk without the group's header. */
static bool members_openable(hid_t f) {
  const htri_t linked = H5Lexists(f, "members", H5P_DEFAULT);
  if (linked == 0) return true;
  const hid_t g = linked > 0 ? H5Gopen2(f, "members", H5P_DEFAULT) : -1;
  if (g >= 0) H5Gclose(g);
  return g >= 0;
}

/* --resume on an HDF5 file that HDF5 cannot open at all, or whose /members cannot be opened
 * (a run killed while its metadata was being written; no other twofold run holds it: the lock
 * is ours), has nothing to recover: it is kept as PATH.damaged (or .damaged.N) for inspection
 * and the run starts again.  Returns 1 if it moved the file. */
static int move_aside_if_unopenable(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || H5Fis_hdf5(path) <= 0) return 0;
  const hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  const bool members = f >= 0 && members_openable(f);
  if (f >= 0) H5Fclose(f);
  if (members) return 0;
  char aside[4200];
  snprintf(aside, sizeof aside, "%s.damaged", path);
  for (int i = 1; file_exists(aside) && i < 1000; i++)
    snprintf(aside, sizeof aside, "%s.damaged.%d", path, i);
  if (rename(path, aside) != 0) return 0; /* the open below reports it */
  fprintf(stderr,
          "twofold: '%s' %s (a run killed while writing its metadata); kept as '%s', starting "
          "again\n",
          path, f >= 0 ? "is damaged: /members cannot be opened" : "cannot be opened", aside);
  return 1;
}

/* --overwrite replaces only a twofold results file: never a device, FIFO, directory or a file
 * of anyone else's (rank 0 decides, every rank gets the answer). */
static bool replaceable(const tf_run *run, const char *path, tf_error *err) {
  int ok = 1;
  char why[64] = "";
  if (run->rank == 0) {
    const char *kind = tf_file_kind(path);
    ok = tf_h5_is_results_file(path);
    snprintf(why, sizeof why, "%s",
             !kind                          ? "missing file"
             : strcmp(kind, "regular file") ? kind
                                            : "file that is not a twofold results file");
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, run->comm);
  MPI_Bcast(why, sizeof why, MPI_CHAR, 0, run->comm);
  if (!ok)
    tf_fail_code(err, TF_ERR_CONFIG,
                 "output '%s' is a %s; --overwrite replaces only twofold results files (choose "
                 "another -o or output.file)",
                 path, why);
  return ok;
}

/* --part K/N: which block of the members this file holds, for `twofold merge`. */
static int write_part(const tf_run *run, hid_t file) {
  return tf_h5_attr_int(file, "part", run->part) | tf_h5_attr_int(file, "parts", run->parts);
}

static int write_provenance(tf_run *run, hid_t file, const char *fp) {
  char *dump = tf_config_dump(run->cfg);
  char created[64];
  const time_t now = time(NULL);
  strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  /* a config that could not be written out (out of memory) fails the header, after the
   * collective writes every rank makes alike */
  int rc = (dump ? 0 : -1) | tf_h5_attr_string(file, "twofold_version", TF_VERSION_STRING) |
           tf_h5_attr_string(file, "config", dump ? dump : "") |
           tf_h5_attr_string(file, "config_source", run->config_path ? run->config_path : "") |
           tf_h5_attr_string(file, "fingerprint", fp) |
           tf_h5_attr_string(file, "created", created) | tf_h5_attr_int(file, "ranks", run->size) |
           tf_h5_attr_int(file, "complete", 0);
  if (run->parts > 0) rc |= write_part(run, file);
  const tf_kernel *k = tf_model_peek(run->cfg, run->comm);
  if (k && tf_plugin_digest(k))
    rc |= tf_h5_attr_string(file, "model_plugin", tf_plugin_origin(k)) |
          tf_h5_attr_string(file, "model_plugin_code", tf_plugin_digest(k));
  free(dump);
  return rc;
}

/* The same config may name a plugin whose code has changed since the file was begun (a
 * rebuilt library, an edited source): the members still to run would then compute another
 * model.  True, with `why`, if the code differs from the file's. */
static bool plugin_changed(const tf_run *run, hid_t file, char *why, size_t n) {
  const tf_kernel *k = tf_model_peek(run->cfg, run->comm);
  const char *now = k ? tf_plugin_digest(k) : NULL;
  char *was = H5Aexists(file, "model_plugin_code") > 0
                  ? tf_h5_attr_read_string(file, "model_plugin_code")
                  : NULL;
  const bool changed = (now || was) && (!now || !was || strcmp(now, was) != 0);
  if (changed)
    snprintf(why, n, "the model's code differs from the file's (was: %s; now: %s)",
             was ? was : "a built-in model", now ? now : "a built-in model");
  free(was);
  return changed;
}

/* A new file is created under a temporary name next to its final one and renamed into place
 * only once its header and provenance are on disk: a run killed or failing at its start
 * leaves no unreadable file at the output path (which --resume could not continue), and
 * --overwrite destroys the old results only by that rename. */
static hid_t create_then_rename(tf_run *run, const char *path, const char *fp, tf_error *err) {
  char tmp[sizeof run->output_path + 16];
  snprintf(tmp, sizeof tmp, "%s.creating", path);
  if (run->rank == 0) unlink(tmp); /* left by a run killed at its start */
  MPI_Barrier(run->comm);
  hid_t file = tf_h5_create(tmp, run->comm, err);
  int rc = file < 0 ? -1 : 0, any = 0;
  if (!rc && (write_provenance(run, file, fp) || tf_h5_flush(file)))
    rc = tf_fail_code(err, TF_ERR_IO, "cannot write the header of '%s'", tmp);
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, run->comm);
  if (any && !rc) tf_fail_code(err, TF_ERR_IO, "another rank could not create '%s'", tmp);
  if (!any) {
    if (run->rank == 0 && rename(tmp, path) != 0)
      rc = tf_fail_code(err, TF_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path,
                        strerror(errno));
    MPI_Bcast(&rc, 1, MPI_INT, 0, run->comm);
    if (rc && run->rank != 0) tf_fail_code(err, TF_ERR_IO, "cannot rename '%s' to '%s'", tmp, path);
    if (!rc) {
      tf_h5_renamed(path);
      return file;
    }
  }
  if (file >= 0) H5Fclose(file);
  if (run->rank == 0) unlink(tmp);
  return tf_error_mark(err, TF_ERR_IO); /* the file system refused the new file */
}

/* What is wrong with the place of the output, said plainly (rank 0 looks): a missing
 * directory, a read-only file system, no permission, a directory at the output path.  The
 * HDF5 and MPI-IO errors these cause ("Bad file descriptor") name none of them. */
static int check_place(const tf_run *run, const char *path, tf_error *err) {
  int bad = 0;
  if (run->rank == 0) {
    char copy[sizeof run->output_path];
    snprintf(copy, sizeof copy, "%s", path);
    const char *dir = dirname(copy);
    struct stat st;
    const char *kind = tf_file_kind(path);
    struct stat link;
    if (lstat(path, &link) == 0 && S_ISLNK(link.st_mode))
      bad =
          tf_fail_code(err, TF_ERR_CONFIG,
                       "output '%s' is a symbolic link; twofold writes results only to a real path "
                       "(give the link's target as -o or output.file)",
                       path);
    else if (stat(dir, &st) != 0)
      bad = tf_fail_code(err, TF_ERR_CONFIG, "cannot write '%s': directory '%s' does not exist",
                         path, dir);
    else if (!S_ISDIR(st.st_mode))
      bad =
          tf_fail_code(err, TF_ERR_CONFIG, "cannot write '%s': '%s' is not a directory", path, dir);
    else if (kind && strcmp(kind, "directory") == 0)
      bad = tf_fail_code(err, TF_ERR_CONFIG,
                         "output '%s' is a directory, not a results file; choose another -o or "
                         "output.file",
                         path);
    else if (access(dir, W_OK | X_OK) != 0)
      bad = tf_fail_code(err, TF_ERR_IO, "cannot write '%s': %s", path,
                         errno == EROFS    ? "it is on a read-only file system"
                         : errno == EACCES ? "permission denied in its directory"
                                           : strerror(errno));
  }
  MPI_Bcast(&bad, 1, MPI_INT, 0, run->comm);
  if (bad) MPI_Bcast(err, sizeof *err, MPI_BYTE, 0, run->comm); /* message and code */
  return bad ? -1 : 0;
}

static bool listed(const char *const *given, const char *section) {
  const size_t len = strlen(section);
  for (size_t j = 0; given[j]; j++)
    if (strncmp(given[j], section, len) == 0 && (given[j][len] == '\0' || given[j][len] == '.'))
      return true;
  return false;
}

/* The sections a job read but did not list are added to its fingerprint, so a section that
 * changes the results can never be forgotten by a job (the Lyapunov scan once left out
 * codim2).  `output` is left to the lists: most of it (file, flush interval, compression)
 * changes no result; `run` (the verdict on failed members) changes none; of `ensemble` every key
 * read counts but `chunk` (scheduling only). Added paths are kept in `pool`. */
enum { POOL_PATHS = 32, POOL_LEN = 96 };
static size_t fingerprint_list(const tf_config *cfg, const char *const *given, const char **out,
                               size_t max, char pool[POOL_PATHS][POOL_LEN]) {
  size_t n = 0, pooled = 0;
  for (; given[n] && n + 1 < max; n++) out[n] = given[n];
  const char *used[64];
  const size_t nused = tf_config_used_keys(cfg, NULL, used, 64);
  for (size_t i = 0; i < nused && n + 1 < max; i++) {
    if (strcmp(used[i], "output") == 0 || strcmp(used[i], "run") == 0 || listed(given, used[i]))
      continue;
    if (strcmp(used[i], "ensemble") != 0) {
      out[n++] = used[i];
      continue;
    }
    const char *keys[32];
    const size_t nkeys = tf_config_used_keys(cfg, "ensemble", keys, 32);
    for (size_t k = 0; k < nkeys && n + 1 < max && pooled < POOL_PATHS; k++)
      if (strcmp(keys[k], "chunk") != 0) {
        snprintf(pool[pooled], POOL_LEN, "ensemble.%s", keys[k]);
        out[n++] = pool[pooled++];
      }
  }
  out[n] = NULL;
  return n;
}

/* True if the stored config equals the current one on the fingerprint's paths by value
 * (`t_end: 1.0` equals `t_end: 1`); else false with `why` naming the first key that differs. */
static bool same_settings(const tf_run *run, hid_t file, const char *const *paths, char *why,
                          size_t n) {
  char *text = tf_h5_attr_read_string(file, "config");
  tf_error perr;
  tf_config *old = text ? tf_config_parse_string(text, "the stored config", &perr) : NULL;
  free(text);
  if (!old) {
    snprintf(why, n, "its stored config cannot be read");
    return false;
  }
  bool same = true;
  char key[256];
  for (const char *const *p = paths; *p && same; p++)
    if (tf_config_differs(old, run->cfg, *p, key, sizeof key)) {
      char *was = tf_config_dump_path(old, key), *now = tf_config_dump_path(run->cfg, key);
      for (char *s = was; s && *s; s++)
        if (*s == '\n') *s = *(s + 1) ? ' ' : '\0';
      for (char *s = now; s && *s; s++)
        if (*s == '\n') *s = *(s + 1) ? ' ' : '\0';
      char where[256];
      snprintf(why, n, "key '%s' was %s in the file and is %s now (%s)", key, was ? was : "absent",
               now ? now : "absent", tf_config_where(run->cfg, key, where, sizeof where));
      free(was), free(now);
      same = false;
    }
  tf_config_free(old);
  return same;
}

/* --resume continues a file of the same split: a whole run's file resumed as a part (or a
 * part as another part, or as the whole) would hold members of two splits and stale
 * part attributes that `twofold merge` trusts. */
static int same_split(const tf_run *run, hid_t file, tf_error *err) {
  long long part = -1, parts = 0;
  if (H5Aexists(file, "parts") > 0) {
    tf_h5_attr_read_int(file, "part", &part);
    tf_h5_attr_read_int(file, "parts", &parts);
  }
  if (parts == run->parts && (parts == 0 || part == run->part)) return 0;
  char was[64], now[64];
  snprintf(was, sizeof was, parts ? "part %lld/%lld" : "a whole run", part, parts);
  snprintf(now, sizeof now, run->parts ? "--part %d/%d" : "a whole run", run->part, run->parts);
  return tf_fail_code(err, TF_ERR_CONFIG,
                      "cannot resume '%s': it holds %s and this is %s; resume it with the same "
                      "--part, or write to another -o",
                      run->output_path, was, now);
}

/* A place the output may not go (a link, a missing directory, a file held by another run) is
 * the input's fault; one the file system refuses to write (TF_ERR_IO) is not. */
static int input_unless_io(tf_error *err) {
  return tf_error_mark(err, tf_error_code_of(err) == TF_ERR_IO ? TF_ERR_IO : TF_ERR_CONFIG);
}

hid_t tf_results_open(tf_run *run, const char *const *fingerprint_given, bool *resumed,
                      tf_error *err) {
  *resumed = false;
  const char *fingerprint_paths[96];
  char pool[POOL_PATHS][POOL_LEN];
  fingerprint_list(run->cfg, fingerprint_given, fingerprint_paths, 96, pool);
  const char *path = run->output_path;
  if (check_place(run, path, err)) return input_unless_io(err);
  int locked = run->rank == 0 ? tf_lock_take(path, err) : 0;
  MPI_Bcast(&locked, 1, MPI_INT, 0, run->comm);
  if (locked) {
    MPI_Bcast(err, sizeof *err, MPI_BYTE, 0, run->comm); /* message and code */
    return input_unless_io(err);
  }
  char *fp = fingerprint(run->cfg, fingerprint_paths);
  if (!fp) return tf_fail(err, "out of memory");
  /* Rank 0 decides from the file system, so all ranks take the same branch. */
  int exists = run->rank == 0 ? file_exists(path) : 0;
  MPI_Bcast(&exists, 1, MPI_INT, 0, run->comm);
  hid_t file = -1;
  if (exists && run->resume) {
    int moved = run->rank == 0 ? move_aside_if_unopenable(path) : 0;
    MPI_Bcast(&moved, 1, MPI_INT, 0, run->comm);
    if (moved) exists = 0; /* starts again below */
  }
  if (exists && run->resume) {
    int misfit = run->rank == 0 ? members_tables_fit(run, path, err) : 0;
    MPI_Bcast(&misfit, 1, MPI_INT, 0, run->comm);
    if (misfit) {
      if (run->rank != 0)
        tf_fail_code(err, TF_ERR_CONFIG, "cannot resume '%s': not this run's file", path);
      free(fp);
      if (run->rank == 0) tf_lock_release();
      return tf_error_mark(err, TF_ERR_CONFIG);
    }
    if (run->rank == 0) tf_h5_recover_eoa(path);
    MPI_Barrier(run->comm);
    file = tf_h5_open_rw(path, run->comm, err);
    if (file < 0) tf_error_mark(err, TF_ERR_CONFIG); /* not a readable results file */
    if (file >= 0) {
      char *old = tf_h5_attr_read_string(file, "fingerprint");
      char why[512] = "";
      int refused = !old ? 1
                         : (strcmp(old, fp) != 0 &&
                            !same_settings(run, file, fingerprint_paths, why, sizeof why)) ||
                               plugin_changed(run, file, why, sizeof why);
      MPI_Allreduce(MPI_IN_PLACE, &refused, 1, MPI_INT, MPI_MAX, run->comm);
      if (refused) {
        tf_fail_code(err, TF_ERR_CONFIG,
                     "cannot resume '%s': %s; rerun with a new -o, or --overwrite to start "
                     "again",
                     path, old ? why : "it was not written by a twofold job");
        H5Fclose(file);
        file = -1;
      } else if (same_split(run, file, err)) {
        tf_error_mark(err, TF_ERR_CONFIG);
        H5Fclose(file);
        file = -1;
      } else {
        *resumed = true;
        tf_h5_attr_int(file, "resumed", 1);
        if (run->parts > 0) write_part(run, file);
      }
      free(old);
    }
  } else if (exists && !run->overwrite) {
    tf_fail_code(err, TF_ERR_CONFIG,
                 "output '%s' already exists; pass --resume to complete it or --overwrite to "
                 "replace it",
                 path);
  } else if (exists && !replaceable(run, path, err)) {
    tf_error_mark(err, TF_ERR_CONFIG);
  } else {
    file = create_then_rename(run, path, fp, err);
  }
  free(fp);
  if (file < 0 && run->rank == 0) tf_lock_release();
  return file;
}

/* Rank 0: the closed file opened serially, summarized and marked complete. */
static int summarize_serially(tf_run *run, tf_results_summarize_fn summarize, void *ctx,
                              tf_error *err) {
  hid_t f = H5Fopen(run->output_path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0)
    return tf_fail_code(err, TF_ERR_IO, "cannot reopen '%s' to write its summary",
                        run->output_path);
  int rc = summarize(run, f, ctx, err);
  if (rc == 0 && tf_h5_attr_int(f, "complete", 1))
    rc = tf_fail_code(err, TF_ERR_IO, "cannot mark '%s' complete", run->output_path);
  if (H5Fclose(f) < 0 && rc == 0)
    rc = tf_fail_code(err, TF_ERR_IO, "closing '%s' after its summary failed", run->output_path);
  return rc;
}

int tf_results_close(tf_run *run, hid_t file, bool complete, tf_error *err) {
  return tf_results_close_summarized(run, file, complete, NULL, NULL, err);
}

int tf_results_close_summarized(tf_run *run, hid_t file, bool complete,
                                tf_results_summarize_fn summarize, void *ctx, tf_error *err) {
  int rc = tf_h5_attr_int(file, "complete", complete && !summarize ? 1 : 0);
  if (H5Fclose(file) < 0) rc = -1;
  if (rc) {
    if (run->rank == 0) tf_lock_release();
    return tf_fail_code(err, TF_ERR_IO, "closing '%s' failed", run->output_path);
  }
  if (complete && summarize) {
    if (run->rank == 0) rc = summarize_serially(run, summarize, ctx, err);
    MPI_Bcast(&rc, 1, MPI_INT, 0, run->comm);
    if (rc) {
      MPI_Bcast(err, sizeof *err, MPI_BYTE, 0, run->comm); /* message and code */
      if (run->rank == 0) tf_lock_release();
      return -1;
    }
  }
  /* Freed space is never reused while a file is written (see h5io.c), so frequent flush
   * rounds leave it several times larger than its data; a complete file is written no more
   * and is copied compactly.  Failing that it stays as it is, still correct. */
  if (complete) {
    bool compacted = false;
    int failed = run->rank == 0 && tf_h5_compact(run->output_path, 2.0, &compacted);
    MPI_Bcast(&failed, 1, MPI_INT, 0, run->comm);
    if (failed && run->rank == 0)
      fprintf(stderr, "twofold: warning: could not compact '%s'; it stays as written\n",
              run->output_path);
  }
  if (run->rank == 0) tf_lock_release();
  return 0;
}

int tf_results_write_model(hid_t file, const tf_kernel *k, const double *params) {
  hid_t model = tf_h5_group(file, "model");
  if (model < 0) return -1;
  int rc = tf_h5_attr_string(model, "name", k->name);
  for (size_t i = 0; i < k->nparams; i++)
    rc |= tf_h5_attr_double(model, k->params[i].name, params[i]);
  H5Gclose(model);
  return rc;
}
