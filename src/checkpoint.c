/* checkpoint.c — async-signal-safe stop requests. */
#include "checkpoint.h"

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t received;

static void on_signal(int sig) {
  if (sig == SIGINT && received == SIGINT) signal(SIGINT, SIG_DFL);
  received = sig;
}

void tf_checkpoint_install_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
}

int tf_checkpoint_signal(void) {
  return received;
}

bool tf_checkpoint_should_stop(double start_time, double time_limit) {
  if (received) return true;
  return time_limit > 0 && MPI_Wtime() - start_time >= time_limit;
}

static struct {
  bool armed, stopped;
  double start, limit;
  long long stop_after, pause_after, points;
} point;

void tf_checkpoint_arm(double start_time, double time_limit, long long stop_after,
                       long long pause_after) {
  point.armed = true, point.stopped = false;
  point.start = start_time, point.limit = time_limit, point.stop_after = stop_after;
  point.pause_after = pause_after, point.points = 0;
}

void tf_checkpoint_disarm(void) {
  point.armed = false;
}

bool tf_checkpoint_stop_point(void) {
  if (!point.armed) return false;
  point.points++;
  if (point.pause_after > 0 && point.points == point.pause_after && !point.stopped) {
    fprintf(stderr, "twofold: paused; waiting for a signal\n");
    while (!tf_checkpoint_should_stop(point.start, point.limit))
      nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  if (!point.stopped)
    point.stopped = tf_checkpoint_should_stop(point.start, point.limit) ||
                    (point.stop_after > 0 && point.points >= point.stop_after);
  return point.stopped;
}

bool tf_checkpoint_poll(void) {
  if (!point.armed) return false;
  if (!point.stopped) point.stopped = tf_checkpoint_should_stop(point.start, point.limit);
  return point.stopped;
}

bool tf_checkpoint_stopped(void) {
  return point.armed && point.stopped;
}

long long tf_checkpoint_points(void) {
  return point.points;
}
