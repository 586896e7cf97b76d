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

void tf_stop_arm(tf_stop_token *t, double start_time, double time_limit, long long stop_after,
                 long long pause_after) {
  *t = (tf_stop_token){.armed = true,
                       .start = start_time,
                       .limit = time_limit,
                       .stop_after = stop_after,
                       .pause_after = pause_after};
}

void tf_stop_disarm(tf_stop_token *t) {
  t->armed = false;
}

bool tf_stop_point(tf_stop_token *t) {
  if (!t || !t->armed) return false;
  t->points++;
  if (t->pause_after > 0 && t->points == t->pause_after && !t->stopped) {
    fprintf(stderr, "twofold: paused; waiting for a signal\n");
    while (!tf_checkpoint_should_stop(t->start, t->limit))
      nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  if (!t->stopped)
    t->stopped = tf_checkpoint_should_stop(t->start, t->limit) ||
                 (t->stop_after > 0 && t->points >= t->stop_after);
  return t->stopped;
}

bool tf_stop_poll(tf_stop_token *t) {
  if (!t || !t->armed) return false;
  if (!t->stopped) t->stopped = tf_checkpoint_should_stop(t->start, t->limit);
  return t->stopped;
}

bool tf_stop_requested(const tf_stop_token *t) {
  return t && t->armed && t->stopped;
}

long long tf_stop_points(const tf_stop_token *t) {
  return t ? t->points : 0;
}
