/* ts_module.h — the PETSc TS module (ts.c, built as libtwofold_ts.so) and the engine that loads
 * it on first use (petsc_start.c).
 *
 * PETSc's Debian build maps about 100 shared libraries; linked into the executable, every run
 * paid for loading them, even the many that never integrate on PETSc TS.  So nothing of PETSc
 * is linked into the executable or libtwofold.so: the module links PETSc, and the engine
 * dlopens it when a run needs PETSc (petsc_start.h) and reaches it only through the tables
 * below.  The module is looked for only where the build or the installation put it
 * (ts_module_dirs.h), never where the environment or a config says.
 *
 * The module exports one symbol, TF_TS_MODULE_ENTRY, of type tf_ts_module_entry; everything
 * else in it is hidden, so its functions never bind to the engine's of the same name. */
#ifndef TF_TS_MODULE_H
#define TF_TS_MODULE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "checkpoint.h"
#include "error.h"
#include "ts.h"

/* Changes whenever either table below changes: a module of another version is refused. */
#define TF_TS_MODULE_ABI 2
#define TF_TS_MODULE_ENTRY "twofold_ts_module"

/* What the module calls back in the engine: the stop flag a signal sets lives in the engine,
 * one copy per process. */
typedef struct tf_ts_host {
  int abi;
  bool (*stop_point)(tf_stop_token *t);
  bool (*stop_poll)(tf_stop_token *t);
  bool (*stop_requested)(const tf_stop_token *t);
} tf_ts_host;

/* What the module gives: ts.h's functions, and PETSc's start and end. */
typedef struct tf_ts_ops {
  int abi;
  int (*solve)(const tf_ts_problem *pb, const tf_ts_settings *set, size_t batch, double t0,
               double t_end, double *x, tf_ts_sample_fn sample, void *sample_ctx, long n_samples,
               tf_ts_stats *stats, tf_error *err);
  int (*check)(const tf_ts_settings *set, char *type_out, size_t n, tf_error *err);
  void (*effective_options)(char *buf, size_t n);
  /* PetscInitialize on comm with argv's options unless PETSc is running: 1 if it started
   * PETSc, 0 if PETSc was running already, -1 (err) if it failed */
  int (*start)(MPI_Comm comm, int argc, char **argv, tf_error *err);
  /* PetscFinalize of what start started */
  void (*stop)(void);
  /* whether PETSc is initialised (by start, or by the program twofold runs in) */
  bool (*running)(void);
  /* For a caller that runs PETSc itself: pushes an options database with argv's options
   * (argv[0] is the program) for one call, and pops it. */
  int (*push_options)(int argc, char **argv, tf_error *err);
  void (*pop_options)(void);
} tf_ts_ops;

typedef const tf_ts_ops *tf_ts_module_entry(const tf_ts_host *host);

#endif
