/* results.h — opening the results file of a run: new, resumed, or refused.
 *
 * A new file gets the provenance attributes (build version, config as run, the fingerprint
 * of the result-determining config sections, creation time) and `complete = 0`.  With
 * --resume an existing file is reopened only if its fingerprint equals the current one, so
 * a resumed run can never mix results of two different configs; a missing file under
 * --resume simply starts afresh (the same command works before and after a requeue).
 * Without --resume an existing file is never touched unless --overwrite is given.  A new
 * file is written as OUT.h5.creating and renamed to OUT.h5 once its header is on disk, so
 * neither a run dying at its start nor --overwrite failing early destroys or leaves an
 * unreadable OUT.h5. */
#ifndef TF_RESULTS_H
#define TF_RESULTS_H

#include <hdf5.h>
#include <stdbool.h>

#include "job.h"
#include "kernel.h"

/* `fingerprint_paths` is a NULL-terminated list of config paths whose contents determine
 * the results.  Sets *resumed when an existing file was reopened.  Collective. */
hid_t tf_results_open(tf_run *run, const char *const *fingerprint_paths, bool *resumed,
                      tf_error *err);
/* /model: the kernel name and every parameter (derived ones included) as attributes. */
int tf_results_write_model(hid_t file, const tf_kernel *k, const double *params);

/* Marks the file complete (or not) and closes it; a complete file that flush rounds left
 * more than twice the size of its data is then copied compactly.  Collective. */
int tf_results_close(tf_run *run, hid_t file, bool complete, tf_error *err);

/* A summary read back from the whole file (in member order, so it is the same on any number
 * of ranks) and written into it, by rank 0 alone on the file opened serially. */
typedef int (*tf_results_summarize_fn)(tf_run *run, hid_t file, void *ctx, tf_error *err);

/* tf_results_close, but a complete file is first closed unmarked, summarized by rank 0 and
 * only then marked complete.  Rank 0 reading a parallel file alone would fill its metadata
 * cache differently from the other ranks', and the next collective write could then wait
 * for ever (seen with 1e8 members on 2 ranks); a crash while summarizing leaves a file that
 * --resume finishes.  Collective; rank 0's error is everyone's. */
int tf_results_close_summarized(tf_run *run, hid_t file, bool complete,
                                tf_results_summarize_fn summarize, void *ctx, tf_error *err);

#endif
