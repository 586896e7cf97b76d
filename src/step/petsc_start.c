/* petsc_start.c — PETSc on demand (see petsc_start.h): the PETSc TS module (ts_module.h) is
 * loaded on first use, and ts.h's functions are reached through it. */
#define _GNU_SOURCE /* dladdr */
#include "petsc_start.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "ts.h"
#include "ts_module.h"
#include "ts_module_dirs.h"

static int saved_argc;
static char **saved_argv;
static bool started;
static const tf_ts_ops *ops;
static char load_error[TF_ERROR_MAX]; /* a failed load is not retried: every caller gets it */

void tf_petsc_remember_options(int argc, char **argv) {
  saved_argc = argc;
  saved_argv = argv;
}

/* --- finding and loading the module ------------------------------------------------------- */

/* The module installed relative to object's directory (resolved) if that directory is there:
 * then object is installed. */
static bool installed_beside(const char *object, const char *relative, char *out, size_t n) {
  char dir[2 * PATH_MAX], real[PATH_MAX];
  const char *slash = strrchr(object, '/');
  if (!slash) return false;
  snprintf(dir, sizeof dir, "%.*s/%s", (int)(slash - object), object, relative);
  struct stat st;
  if (!realpath(dir, real) || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return (size_t)snprintf(out, n, "%s/%s", real, TF_TS_MODULE_NAME) < n;
}

/* Where the installation or the build put the module: beside the installed executable
 * (PREFIX/bin -> PREFIX/lib/twofold) or libtwofold.so (PREFIX/lib -> PREFIX/lib/twofold) that
 * runs, if that directory exists; else, for code run from the build tree, the build tree's.
 * An installation missing its module never loads the build tree's. */
static void module_path(char *out, size_t n) {
  char exe[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[len > 0 ? len : 0] = '\0';
  Dl_info code;
  char lib[PATH_MAX] = "";
  if (dladdr((void *)&module_path, &code) && code.dli_fname && !realpath(code.dli_fname, lib))
    lib[0] = '\0';
  const bool in_exe = !lib[0] || strcmp(lib, exe) == 0;
  if (in_exe ? installed_beside(exe, TF_TS_MODULE_FROM_BINDIR, out, n)
             : installed_beside(lib, TF_TS_MODULE_FROM_LIBDIR, out, n))
    return;
  snprintf(out, n, "%s/%s", TF_TS_MODULE_BUILD_DIR, TF_TS_MODULE_NAME);
}

/* Loading runs the module's constructors: it must be a file that only root or we could have
 * written, in a directory the same holds for (docs/SECURITY.md).  `what`: "it" or "its
 * directory 'DIR'". */
static int trusted(const struct stat *st, const char *what, const char *path, tf_error *err) {
  if (st->st_uid != 0 && st->st_uid != geteuid())
    return tf_fail(err,
                   "%s belongs to another user (uid %ld), who could put code there that twofold "
                   "would run as you; reinstall twofold",
                   what, (long)st->st_uid);
  if (st->st_mode & (S_IWGRP | S_IWOTH))
    return tf_fail(err,
                   "%s may be written by others (mode %04o), who could put code there that "
                   "twofold would run as you; run 'chmod go-w %s'",
                   what, (unsigned)(st->st_mode & 07777), path);
  return 0;
}

static int check_module(int fd, const char *path, tf_error *err) {
  struct stat st, dst;
  if (fstat(fd, &st) != 0) return tf_fail(err, "%s", strerror(errno));
  if (!S_ISREG(st.st_mode)) return tf_fail(err, "it is not a regular file");
  char dir[PATH_MAX], its_dir[PATH_MAX + 32];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  if (!dir[0]) snprintf(dir, sizeof dir, "/");
  if (stat(dir, &dst) != 0) return tf_fail(err, "'%s': %s", dir, strerror(errno));
  snprintf(its_dir, sizeof its_dir, "its directory '%s'", dir);
  return trusted(&st, "it", path, err) || trusted(&dst, its_dir, dir, err) ? -1 : 0;
}

static const tf_ts_host host = {TF_TS_MODULE_ABI, tf_stop_point, tf_stop_poll, tf_stop_requested};

/* dlopens the module at path through the descriptor that was checked. */
static int open_module(const char *path, tf_error *err) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tf_fail(err, "%s", strerror(errno));
  if (check_module(fd, path, err)) return close(fd), -1;
  char local[64];
  snprintf(local, sizeof local, "/proc/self/fd/%d", fd);
  dlerror();
  void *h = dlopen(local, RTLD_NOW | RTLD_LOCAL);
  close(fd);
  const char *why = h ? NULL : dlerror();
  if (!h) return tf_fail(err, "cannot be loaded: %s", why ? why : "dlopen failed");
  tf_ts_module_entry *entry = (tf_ts_module_entry *)dlsym(h, TF_TS_MODULE_ENTRY);
  ops = entry ? entry(&host) : NULL;
  if (!ops || ops->abi != TF_TS_MODULE_ABI)
    return ops = NULL, tf_fail(err, "not the PETSc TS module of this twofold (%s ABI %d)",
                               TF_TS_MODULE_ENTRY, TF_TS_MODULE_ABI);
  return 0; /* never closed: PETSc is not made to be unloaded */
}

/* The module's table, loaded on the first call; NULL with err naming the file if it fails. */
static const tf_ts_ops *module(tf_error *err) {
  if (ops || load_error[0]) return ops ? ops : (tf_fail(err, "%s", load_error), NULL);
  char path[PATH_MAX];
  module_path(path, sizeof path);
  tf_error why = {0};
  if (open_module(path, &why)) {
    tf_fail(err,
            "integrator.method petsc-ts (the default for smoothed stiff members of more than 16 "
            "components) needs the PETSc TS module '%s', built and installed with twofold: %s",
            path, why.msg);
    snprintf(load_error, sizeof load_error, "%s", err->msg);
    return NULL;
  }
  return ops;
}

/* --- PETSc's start and end ---------------------------------------------------------------- */

int tf_petsc_require(MPI_Comm comm, tf_error *err) {
  const tf_ts_ops *m = module(err);
  /* every rank or none goes on to PetscInitialize, which is collective */
  int loaded = m != NULL;
  MPI_Allreduce(MPI_IN_PLACE, &loaded, 1, MPI_INT, MPI_MIN, comm);
  if (!m) return -1;
  if (!loaded)
    return tf_fail(err,
                   "the PETSc TS module could not be loaded on every rank of the run (another "
                   "rank says why)");
  const int rc = m->start(comm, saved_argc, saved_argv, err);
  if (rc > 0) started = true;
  return rc < 0 ? -1 : 0;
}

void tf_petsc_finish(MPI_Comm comm, bool warn) {
  const int given = saved_argc;
  char **argv = saved_argv;
  saved_argc = 0, saved_argv = NULL;
  if (started) {
    ops->stop();
    started = false;
    return;
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  /* argv[0] and -no_signal_handler are always there */
  if (warn && rank == 0 && given > 2) {
    fprintf(stderr, "twofold: warning: PETSc options given (");
    for (int i = 1; i < given; i++)
      if (strcmp(argv[i], "-no_signal_handler") != 0)
        fprintf(stderr, "%s%s", i > 1 ? " " : "", argv[i]);
    fprintf(stderr, ") but this run uses no PETSc TS integrator: ignored\n");
  }
}

bool tf_petsc_caller_runs_it(void) {
  /* PETSc in the process without the module: the caller linked it (the module's own copy is
   * loaded locally, invisible here) */
  if (!ops && !dlsym(RTLD_DEFAULT, "PetscInitialize")) return false;
  tf_error ignored;
  const tf_ts_ops *m = module(&ignored);
  return m && m->running();
}

int tf_petsc_push_options(int argc, char **argv, tf_error *err) {
  const tf_ts_ops *m = module(err);
  return m ? m->push_options(argc, argv, err) : -1;
}

void tf_petsc_pop_options(void) {
  if (ops) ops->pop_options();
}

/* --- ts.h, through the module (tf_petsc_require has loaded it) --------------------------- */

int tf_ts_solve(const tf_ts_problem *pb, const tf_ts_settings *set, size_t batch, double t0,
                double t_end, double *x, tf_ts_sample_fn sample, void *sample_ctx, long n_samples,
                tf_ts_stats *stats, tf_error *err) {
  const tf_ts_ops *m = module(err);
  return m ? m->solve(pb, set, batch, t0, t_end, x, sample, sample_ctx, n_samples, stats, err) : -1;
}

int tf_ts_check(const tf_ts_settings *set, char *type_out, size_t n, tf_error *err) {
  const tf_ts_ops *m = module(err);
  return m ? m->check(set, type_out, n, err) : -1;
}

void tf_ts_effective_options(char *buf, size_t n) {
  tf_error ignored;
  const tf_ts_ops *m = module(&ignored);
  if (m)
    m->effective_options(buf, n);
  else if (n)
    buf[0] = '\0';
}
