/* failures.h — members that failed, counted by status with their first ids, and the verdict
 * on the run they make.
 *
 * A member that fails is a result, recorded in /members/status; but a run in which most
 * members failed has no result to speak of, and must not look like one that succeeded: the
 * end of a run and `twofold info` name the failed members per status (failed in the sense
 * of tf_member_status_failed), and the run ends TF_RUN_MEMBERS_FAILED (exit status 4) when every
 * member failed or more than `run.max_failed_fraction` of them did. */
#ifndef TF_FAILURES_H
#define TF_FAILURES_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* member ids named per status */
enum { TF_FAILURES_FIRST = 5 };

typedef struct tf_failures {
  long long counts[TF_MEMBER_STATUS_COUNT];
  uint64_t first[TF_MEMBER_STATUS_COUNT][TF_FAILURES_FIRST]; /* smallest ids of each status */
  bool have_ids;                                             /* first[] filled */
} tf_failures;

/* Counts member `member` (added in increasing id order, so first[] holds the smallest). */
void tf_failures_add(tf_failures *f, uint64_t member, int status);

/* Reads /members/status of a results file (serially opened).  -1 if it has none. */
int tf_failures_read(hid_t file, tf_failures *f);

/* Why member `member` failed, as an isolated run recorded it in /members/failure (a
 * fixed-length string, read as such: a file that declares it otherwise is not read):
 * 0 with the text in buf[n] ("" if none was recorded), -1 if the file has no such text. */
int tf_failures_text(hid_t file, uint64_t member, char *buf, size_t n);

/* Members done (every status but pending), and those of them that failed. */
long long tf_failures_done(const tf_failures *f);
long long tf_failures_failed(const tf_failures *f);

/* True if the run fails: every done member failed, or more than max_fraction of them. */
bool tf_failures_fail_run(long long failed, long long done, double max_fraction);

/* "nonfinite 199 (first: 0, 1, 2, 3, 4, ...), max_steps 1 (first: 7)": the failed members
 * per status, ids only if read. */
void tf_failures_describe(const tf_failures *f, char *buf, size_t n);

#endif
