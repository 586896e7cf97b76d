/* results.c — see results.h. */
#include "results.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "h5io.h"
#include "version.h"

static char *fingerprint(const tf_config *cfg, const char *const *paths) {
  size_t len = 0, cap = 256;
  char *out = malloc(cap);
  if (!out) return NULL;
  out[0] = '\0';
  for (const char *const *p = paths; *p; p++) {
    char *text = tf_config_dump_path(cfg, *p);
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
    tf_fail(err,
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
  int rc = tf_h5_attr_string(file, "twofold_version", TF_VERSION_STRING) |
           tf_h5_attr_string(file, "config", dump ? dump : "") |
           tf_h5_attr_string(file, "config_source", run->config_path ? run->config_path : "") |
           tf_h5_attr_string(file, "fingerprint", fp) |
           tf_h5_attr_string(file, "created", created) | tf_h5_attr_int(file, "ranks", run->size) |
           tf_h5_attr_int(file, "complete", 0);
  if (run->parts > 0) rc |= write_part(run, file);
  free(dump);
  return rc;
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
    rc = tf_fail(err, "cannot write the header of '%s'", tmp);
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, run->comm);
  if (any && !rc) tf_fail(err, "another rank could not create '%s'", tmp);
  if (!any) {
    if (run->rank == 0 && rename(tmp, path) != 0)
      rc = tf_fail(err, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    MPI_Bcast(&rc, 1, MPI_INT, 0, run->comm);
    if (rc && run->rank != 0) tf_fail(err, "cannot rename '%s' to '%s'", tmp, path);
    if (!rc) {
      tf_h5_renamed(path);
      return file;
    }
  }
  if (file >= 0) H5Fclose(file);
  if (run->rank == 0) unlink(tmp);
  return -1;
}

hid_t tf_results_open(tf_run *run, const char *const *fingerprint_paths, bool *resumed,
                      tf_error *err) {
  *resumed = false;
  char *fp = fingerprint(run->cfg, fingerprint_paths);
  if (!fp) return tf_fail(err, "out of memory");
  const char *path = run->output_path;
  /* Rank 0 decides from the file system, so all ranks take the same branch. */
  int exists = run->rank == 0 ? file_exists(path) : 0;
  MPI_Bcast(&exists, 1, MPI_INT, 0, run->comm);
  hid_t file = -1;
  if (exists && run->resume) {
    if (run->rank == 0) tf_h5_recover_eoa(path);
    MPI_Barrier(run->comm);
    file = tf_h5_open_rw(path, run->comm, err);
    if (file < 0) run->exit_code = TF_EXIT_USAGE; /* not a readable results file */
    if (file >= 0) {
      char *old = tf_h5_attr_read_string(file, "fingerprint");
      if (!old || strcmp(old, fp) != 0) {
        run->exit_code = TF_EXIT_USAGE;
        tf_fail(err,
                "cannot resume '%s': it was %s; rerun with a new -o, or --overwrite to start "
                "again",
                path,
                old ? "written with a different model, initial, integrator, job or "
                      "ensemble size/seed"
                    : "not written by a twofold job");
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
    run->exit_code = TF_EXIT_USAGE;
    tf_fail(err,
            "output '%s' already exists; pass --resume to complete it or --overwrite to "
            "replace it",
            path);
  } else if (exists && !replaceable(run, path, err)) {
    run->exit_code = TF_EXIT_USAGE;
  } else {
    file = create_then_rename(run, path, fp, err);
  }
  free(fp);
  return file;
}

int tf_results_close(tf_run *run, hid_t file, bool complete, tf_error *err) {
  int rc = tf_h5_attr_int(file, "complete", complete ? 1 : 0);
  if (H5Fclose(file) < 0) rc = -1;
  if (rc) return tf_fail(err, "closing '%s' failed", run->output_path);
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
