/* plugin.h — models from outside the tree: a shared library, or a C file compiled on demand.
 *
 * A researcher's model must run without rebuilding twofold.  A plugin exports the ABI number
 * of include/twofold/model.h and a list of tf_model_def (TWOFOLD_MODELS); the number is read
 * with dlsym before any struct is touched, so a library built against another version of the
 * header is refused instead of misread.  Each definition is validated and adapted to the
 * engine's tf_kernel by model_def.h.
 *
 * C sources are compiled with the compiler and flags twofold was built with into the cache of
 * code_cache.h (a directory of the user's own) under a name keyed by a hash of (source bytes,
 * compiler, flags, TWOFOLD_MODEL_ABI): an unchanged model is compiled once, ever.  The
 * compiler writes to a fresh temporary name that is renamed into place, so concurrent runs
 * never load a half-written library, and an object is loaded only after it was verified
 * against the SHA-256 manifest its compile wrote.  Only the file's own bytes are hashed:
 * headers it includes are not tracked.
 *
 * Loads are remembered for the process (by path and name, and for a source its modification
 * time and size), so a job's setup may ask for the same model several times and pays, and
 * under MPI synchronises, once; a source written again at the same path is compiled again. */
#ifndef TF_PLUGIN_H
#define TF_PLUGIN_H

#include <mpi.h>
#include <stddef.h>

#include "kernel.h"

/* Loads model `name` (NULL or "": the library's only model) from a shared library. */
int tf_plugin_open_library(const char *path, const char *name, const tf_kernel **k, tf_error *err);

/* Compiles a C file with the compiler and flags twofold was built with (recorded at configure
 * time) into a cache keyed by a hash of (source bytes, compiler, flags, TWOFOLD_MODEL_ABI), once
 * per run: rank 0 of comm (the run's communicator) compiles (to a temp name, then rename), the
 * others wait (MPI_Bcast of the status), then every rank loads it as above.  Collective over
 * comm when MPI is initialised, and over comm only: ranks running other configs at the same
 * time (a task farm of library calls on MPI_COMM_SELF) neither wait for it nor receive its
 * status; without MPI the calling process compiles.  The compiler's own diagnostics go
 * to stderr with the path as given. */
int tf_plugin_open_source(const char *path, const char *name, MPI_Comm comm, const tf_kernel **k,
                          tf_error *err);

/* `twofold model build`: compiles a C file as tf_plugin_open_source would (same compiler,
 * flags and headers) into the shared library `out`, for `model.library`.  The library is
 * loaded and its ABI and model list checked before it replaces `out` (a failed build leaves
 * an existing `out` as it was); `names` gets its models' names. */
int tf_plugin_build(const char *src, const char *out, char *names, size_t names_size,
                    tf_error *err);

/* Every model of a shared library, in its order (for `twofold models --model-library`).
 * *ks is malloc'd (the kernels themselves live for the process). */
int tf_plugin_library_models(const char *path, const tf_kernel ***ks, size_t *n, tf_error *err);

/* Where kernel k came from ("model library 'x.so'", "model source 'm.c'"), or NULL for a
 * built-in. */
const char *tf_plugin_origin(const tf_kernel *k);

/* What identifies a plugin kernel's code (a hash of the library's bytes, or the cache name of
 * the compiled source), or NULL for a built-in: results files record it and --resume refuses
 * to continue with different code under the same config. */
const char *tf_plugin_digest(const tf_kernel *k);

#endif
