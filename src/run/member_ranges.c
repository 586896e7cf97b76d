/* member_ranges.c — sets of member ids as runs (see member_ranges.h). */
#include "member_ranges.h"

#include <stdlib.h>

int tf_member_ranges_add_run(tf_member_ranges *s, uint64_t first, uint64_t count) {
  if (count == 0) return 0;
  s->count += count;
  if (s->nruns && s->runs[s->nruns - 1].first + s->runs[s->nruns - 1].count == first) {
    s->runs[s->nruns - 1].count += count;
    return 0;
  }
  if (s->nruns == s->cap) {
    const uint64_t cap = s->cap ? 2 * s->cap : 16;
    tf_member_run *grown = realloc(s->runs, cap * sizeof *grown);
    if (!grown) return -1;
    s->runs = grown, s->cap = cap;
  }
  s->runs[s->nruns++] = (tf_member_run){first, count};
  return 0;
}

int tf_member_ranges_add(tf_member_ranges *s, uint64_t member) {
  return tf_member_ranges_add_run(s, member, 1);
}

void tf_member_ranges_clip(tf_member_ranges *s, uint64_t lo, uint64_t hi) {
  uint64_t kept = 0;
  s->count = 0;
  for (uint64_t r = 0; r < s->nruns; r++) {
    uint64_t a = s->runs[r].first, b = a + s->runs[r].count;
    if (a < lo) a = lo;
    if (b > hi) b = hi;
    if (a >= b) continue;
    s->runs[kept++] = (tf_member_run){a, b - a};
    s->count += b - a;
  }
  s->nruns = kept;
}

int tf_member_ranges_index(tf_member_ranges *s) {
  free(s->before);
  s->before = malloc((s->nruns + 1) * sizeof *s->before);
  if (!s->before) return -1;
  s->before[0] = 0;
  for (uint64_t r = 0; r < s->nruns; r++) s->before[r + 1] = s->before[r] + s->runs[r].count;
  return 0;
}

uint64_t tf_member_ranges_find(const tf_member_ranges *s, uint64_t pos) {
  uint64_t lo = 0, hi = s->nruns; /* before[lo] <= pos < before[hi] */
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (s->before[mid] <= pos)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

void tf_member_ranges_free(tf_member_ranges *s) {
  free(s->runs), free(s->before);
  *s = (tf_member_ranges){0};
}
