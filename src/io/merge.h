/* merge.h — part files of a split run (--part K/N, SLURM array tasks) into one results file.
 *
 * A part file is a complete results file whose done mask covers one block of the members.
 * The merge first checks everything without writing: every file readable and written by
 * twofold, the same fingerprint (model, initial, integrator, job, ensemble size, seed...),
 * the same member tables, and every member done in some part.  Problems are reported
 * together, naming the array task of every block that is missing or incomplete, and
 * nothing is written.  Then it copies the first part byte for byte to a temporary file
 * next to the output, writes the rows of the other parts into it, lets the job finish it
 * as it finishes a resumed run (summary, `complete = 1`: so the merged file's data equals a
 * single run's), and renames it into place.  An existing output is never touched unless
 * `overwrite` is set, and the part files are only read.
 *
 * Copy rather than HDF5 virtual datasets: a virtual file depends on every part staying
 * where it was, cannot be resumed or opened for parallel writes, and reads slower.  The
 * copy moves chunks that lie inside one part as stored and recompresses only the chunks
 * that straddle two parts (docs/CLUSTER.md has the numbers). */
#ifndef TF_MERGE_H
#define TF_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

typedef struct tf_merge_stats {
  uint64_t members;
  uint64_t rows_copied; /* rows written from parts other than the first */
  int parts;            /* N of --part K/N, 0 if the files were not split runs */
  double copy_seconds;  /* checks and row copies, before the job finishes the file */
  double seconds;
} tf_merge_stats;

/* The first member of block k of n equal blocks of `members` (--part k/n); block k ends
 * where block k + 1 begins. */
static inline uint64_t tf_part_first(uint64_t members, long long k, long long n) {
  return members * (uint64_t)k / (uint64_t)n;
}

/* Of a part file (open for reading): which part of how many, its block's size and how many
 * of the block's members are done.  Returns 1 for a part file, 0 for a file that is not one,
 * -1 if its done mask cannot be read. */
int tf_merge_part_progress(long long file_id, long long *part, long long *parts, uint64_t *block,
                           uint64_t *done);

/* Finishes the merged file at `path` with the job described by `config_text` (the config
 * as run, stored in the parts); `source` names where the text came from. */
typedef int (*tf_merge_finish_fn)(const char *path, const char *config_text, const char *source,
                                  void *ctx, tf_error *err);

/* How a merge ended (with the message in err when not done). */
typedef enum tf_merge_end {
  TF_MERGE_DONE = 0,
  TF_MERGE_REFUSED, /* bad input (parts missing, inconsistent or unreadable): nothing written */
  TF_MERGE_FAILED   /* a runtime failure while writing (the output is left as it was) */
} tf_merge_end;

/* Merges `nfiles` part files into `output`, every problem in err. */
tf_merge_end tf_merge(const char *output, const char *const *files, int nfiles, bool overwrite,
                      tf_merge_finish_fn finish, void *ctx, tf_merge_stats *stats, tf_error *err);

#endif
