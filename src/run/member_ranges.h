/* member_ranges.h — a set of member ids as sorted, disjoint runs.
 *
 * The scheduler hands out positions 0..count-1 of the pending members in chunks.  Listing
 * every pending id costs 8 bytes per member on every rank (800 MB per rank at 1e8 members);
 * the pending members of a fresh run are one run, and those of a resumed run are the gaps
 * the interrupted run left, a few runs per rank and flush round.  So the set is kept as runs
 * and a position is found by bisection over their prefix counts. */
#ifndef TF_MEMBER_RANGES_H
#define TF_MEMBER_RANGES_H

#include <stdint.h>

typedef struct tf_member_run {
  uint64_t first, count;
} tf_member_run;

typedef struct tf_member_ranges {
  tf_member_run *runs;
  uint64_t nruns, cap;
  uint64_t *before; /* members in runs[0..r-1]; built by tf_member_ranges_index */
  uint64_t count;   /* members in all runs */
} tf_member_ranges;

/* Adds `member`, which must be above every member added before; 0 or -1 (out of memory). */
int tf_member_ranges_add(tf_member_ranges *s, uint64_t member);

/* Adds members [first, first + count), all above those added before. */
int tf_member_ranges_add_run(tf_member_ranges *s, uint64_t first, uint64_t count);

/* Keeps only the members in [lo, hi). */
void tf_member_ranges_clip(tf_member_ranges *s, uint64_t lo, uint64_t hi);

/* Builds the prefix counts that tf_member_ranges_find needs; 0 or -1. */
int tf_member_ranges_index(tf_member_ranges *s);

/* The run holding position `pos` (< count) of the set, in O(log nruns). */
uint64_t tf_member_ranges_find(const tf_member_ranges *s, uint64_t pos);

void tf_member_ranges_free(tf_member_ranges *s);

#endif
