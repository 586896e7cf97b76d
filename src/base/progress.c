/* progress.c — rate and ETA from the members done since this process started (members
 * completed before a resume are counted in the bar but not in the rate). */
#include "progress.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void tf_progress_start(tf_progress *p, const char *label, uint64_t total, uint64_t already_done,
                       bool quiet, const char *mode) {
  p->enabled = !quiet;
  p->tty = mode ? strcmp(mode, "bar") == 0 : isatty(STDERR_FILENO);
  p->start = MPI_Wtime();
  p->last_draw = p->start;
  p->interval = p->tty ? 0.2 : 5.0;
  p->total = total;
  p->already_done = already_done;
  p->label = label;
}

static void format_duration(double s, char *buf, size_t n) {
  if (!(s >= 0) || s > 1e7)
    snprintf(buf, n, "--:--");
  else if (s >= 3600)
    snprintf(buf, n, "%d:%02d:%02d", (int)s / 3600, (int)s / 60 % 60, (int)s % 60);
  else
    snprintf(buf, n, "%02d:%02d", (int)s / 60, (int)s % 60);
}

static void draw(tf_progress *p, uint64_t done, bool final) {
  const double now = MPI_Wtime(), elapsed = now - p->start;
  const uint64_t fresh = done > p->already_done ? done - p->already_done : 0;
  const double rate = elapsed > 0 ? (double)fresh / elapsed : 0.0;
  const double frac = p->total ? (double)done / (double)p->total : 1.0;
  char eta[32], spent[32];
  format_duration(rate > 0 ? (double)(p->total - done) / rate : -1, eta, sizeof eta);
  format_duration(elapsed, spent, sizeof spent);
  if (p->tty) {
    enum { WIDTH = 30 };
    char bar[WIDTH + 1];
    const int filled = (int)(frac * WIDTH);
    for (int i = 0; i < WIDTH; i++) bar[i] = i < filled ? '#' : '.';
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r%s [%s] %5.1f%% %llu/%llu  %.4g/s  %s elapsed  ETA %s\033[K%s", p->label,
            bar, 100 * frac, (unsigned long long)done, (unsigned long long)p->total, rate, spent,
            eta, final ? "\n" : "");
  } else {
    fprintf(stderr, "%s: %llu/%llu (%.1f%%)  %.4g/s  elapsed %s  ETA %s\n", p->label,
            (unsigned long long)done, (unsigned long long)p->total, 100 * frac, rate, spent, eta);
  }
  fflush(stderr);
  p->last_draw = now;
}

void tf_progress_update(tf_progress *p, uint64_t done, bool force) {
  if (!p->enabled) return;
  if (force || MPI_Wtime() - p->last_draw >= p->interval) draw(p, done, false);
}

void tf_progress_finish(tf_progress *p, uint64_t done) {
  if (p->enabled) draw(p, done, true);
}
