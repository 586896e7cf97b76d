/* progress.h — one progress line on stderr for the whole job (rank 0 prints it).
 *
 * On a terminal the bar is redrawn in place a few times a second; in a log (stderr not a
 * terminal) one line is written every few seconds; with --quiet nothing.  The count comes
 * from the scheduler's shared counter, so it covers all ranks. */
#ifndef TF_PROGRESS_H
#define TF_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct tf_progress {
  bool enabled, tty;
  double start, last_draw, interval;
  uint64_t total, already_done;
  const char *label;
} tf_progress;

/* mode: "bar", "log", or NULL (bar on a terminal, log otherwise). */
void tf_progress_start(tf_progress *p, const char *label, uint64_t total, uint64_t already_done,
                       bool quiet, const char *mode);
/* Draws if the interval has passed (or always if force). */
void tf_progress_update(tf_progress *p, uint64_t done, bool force);
void tf_progress_finish(tf_progress *p, uint64_t done);

#endif
