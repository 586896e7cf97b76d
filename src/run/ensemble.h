/* ensemble.h — members distributed over MPI ranks, results written by member id.
 *
 * Scheduling: ranks claim chunks of pending members from a shared counter on rank 0,
 * updated with MPI one-sided atomics (MPI_Fetch_and_op), so rank 0 computes like the others
 * instead of serving requests, and members of very different cost balance out.
 *
 * Output: results are buffered per rank and flushed in rounds: when a rank has computed
 * for `flush_interval` seconds, or its buffer would exceed the memory budget
 * (`output.buffer_mb`; it then asks the others, through a third counter, to end the round
 * too), or it runs out of work, it joins a collective flush in which
 * every rank writes its rows (parallel HDF5 needs collective writes for compressed data),
 * marks them done in /members/done and learns whether anyone was asked to stop.  A stop
 * (signal or time budget) therefore loses no finished member: the round is flushed and
 * the caller gets `interrupted`.  On resume the done mask is read back and only pending
 * members are scheduled, kept as runs of ids (member_ranges.h): memory per rank does not
 * grow with the ensemble.  With --part K/N only the members of block K of N are
 * scheduled; the file then holds rows for that block and is completed by merging (see
 * `twofold merge`, src/io/merge.c) or by a later run without --part.
 *
 * A round writes the rows, their statuses and checksums, flushes the file, and only then
 * writes and flushes the done mask, every phase agreed on by all ranks: a crash loses at
 * most the round under way.  --resume trusts a member only if its row reads back and matches
 * its checksum, and repairs what does not (see ARCHITECTURE.md, "Crashes and full disks").
 *
 * Datasets: /members/<column> for each column, plus /members/done (uint8),
 * /members/status (enum, see status.h) and /members/checksum (uint64, FNV-1a of the member
 * id, status and row; attribute `columns`).  An isolated run (isolate.h) adds the text column
 * /members/failure: why a member crashed or timed out, empty for the others. */
#ifndef TF_ENSEMBLE_H
#define TF_ENSEMBLE_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "results.h"
#include "status.h"

/* TF_COLUMN_TEXT: NUL-padded text of TF_COLUMN_TEXT_BYTES per value (a fixed-length HDF5
 * string: parallel HDF5 cannot write variable-length ones collectively). */
typedef enum tf_column_type { TF_COLUMN_F64, TF_COLUMN_I64, TF_COLUMN_TEXT } tf_column_type;
enum { TF_COLUMN_TEXT_BYTES = 512 };

typedef struct tf_column {
  const char *name;
  tf_column_type type;
  uint64_t width; /* values per member */
  const char *doc;
} tf_column;

/* Bytes of one member's row of column c. */
size_t tf_column_bytes(const tf_column *c);

/* Computes one member.  row[c] points to the slot of column c (width values of double or
 * int64_t; a text column is filled by the scheduler, not here).  Returns a tf_member_status. */
typedef int (*tf_member_fn)(void *ctx, uint64_t member, void *const *row);

/* Computes members[0 .. n) of one claimed chunk together (members side by side, the rank's
 * queue): rows[i * ncols + c] is the slot of column c for member i; status[i] as tf_member_fn
 * returns it.  Each member's numbers must be what tf_member_fn gives it alone. */
typedef void (*tf_chunk_fn)(void *ctx, size_t n, const uint64_t *members, void *const *rows,
                            int *status);

typedef struct tf_ensemble_spec {
  uint64_t members;
  uint64_t chunk; /* members per claim; 0 = automatic */
  double flush_interval;
  int compression;
  size_t ncols;
  const tf_column *cols;
  tf_member_fn run;
  tf_chunk_fn run_chunk; /* optional: a chunk's members at once, instead of run one by one */
  void *ctx;
} tf_ensemble_spec;

typedef struct tf_ensemble_outcome {
  uint64_t done;        /* members done in the file (this run and before) */
  uint64_t computed;    /* members computed by this run, all ranks */
  uint64_t resumed;     /* members of this run's range already done when it started */
  uint64_t done_before; /* members of the whole ensemble done when it started */
  bool interrupted;
  bool complete;    /* every member of the ensemble is done (not just this part) */
  bool file_broken; /* an HDF5 write failed: the file is left as the last flush made it */
  long long status_counts[TF_MEMBER_STATUS_COUNT]; /* over all done members */
  int statuses;     /* statuses the file's enum names: all of them if it was begun isolated */
  double seconds;   /* wall time of the scheduling loop */
  long long rounds; /* flush rounds of this run */
} tf_ensemble_outcome;

/* Creates the member datasets in a new file (resume = false) or opens them and verifies the
 * members marked done (resume = true), then runs every pending member.  On resume the file
 * is closed and opened again (*file changes): rank 0 verifies it alone, opened serially.
 * Collective. */
int tf_ensemble_execute(tf_run *run, hid_t *file, const tf_ensemble_spec *spec, bool resume,
                        tf_ensemble_outcome *out, tf_error *err);

/* The common end of a job built on the scheduler: the JSON fields done, computed,
 * resumed_from and members_per_second (and part); the file closed, marked complete if
 * rc == 0 and every member is done; run->outcome TF_RUN_INTERRUPTED if the run was
 * interrupted, TF_RUN_MEMBERS_FAILED if too many members failed.  Returns rc (or -1 if closing
 * failed).  After a failed HDF5 write (file_broken) it reports the error (code TF_ERR_IO), sets
 * run->file_broken and returns -1 on every rank
 * without closing the file: HDF5's state then differs between ranks, and a collective close
 * could hang or crash (the executable then ends without MPI_Finalize). */
int tf_ensemble_finish(tf_run *run, hid_t file, const tf_ensemble_outcome *out, int rc,
                       tf_error *err);
/* The same, with a summary of the complete file written by rank 0 alone after the parallel
 * close (tf_results_close_summarized). */
int tf_ensemble_finish_summarized(tf_run *run, hid_t file, const tf_ensemble_outcome *out, int rc,
                                  tf_results_summarize_fn summarize, void *ctx, tf_error *err);

#endif
