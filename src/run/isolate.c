/* isolate.c — see isolate.h.  The rank and its worker share one socket pair: the rank sends a
 * member id (uint64), the worker answers with a header and the row.  send() with MSG_NOSIGNAL
 * never raises SIGPIPE when the worker is gone; the end of the stream is how the rank learns
 * that it died, and waitpid says of what. */
#define _GNU_SOURCE
#include "isolate.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "status.h"

/* What the worker says first: a row follows a result; an exit status follows nothing; the
 * description of a crash (guard.h) follows a crash, `value` bytes of it, and then the worker
 * dies. */
enum { REPLY_RESULT = 1, REPLY_EXIT = 2, REPLY_CRASH = 3 };
enum { CRASH_TEXT_MAX = 4096 };
typedef struct reply {
  int32_t kind, value; /* value: the status, the model's exit status, or the text's length */
} reply;

struct tf_isolate {
  const tf_ensemble_spec *spec;
  double time_limit;
  tf_isolate_stop_fn stop;
  void *stop_ctx;
  size_t row_bytes;
  char *row;    /* the columns of one row, one after another */
  void **slots; /* into row */
  pid_t pid;    /* 0: no worker */
  int fd;
};

static int worker_fd = -1; /* the worker's end, for the exit hook */

/* exit() in the model: say so instead of running the rank's exit handlers (HDF5 would close
 * the rank's file from the worker) */
static void on_exit_in_worker(int status, void *arg) {
  (void)arg;
  const reply r = {REPLY_EXIT, status};
  if (send(worker_fd, &r, sizeof r, MSG_NOSIGNAL) < 0) {
    /* the rank is gone too */
  }
  _exit(0);
}

/* async-signal-safe (send(2) only): the crash handler calls it */
static bool send_all(int fd, const void *data, size_t n) {
  for (const char *p = data; n;) {
    const ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k, n -= (size_t)k;
  }
  return true;
}

/* the guard's crash handler, in the worker: the rank records the description */
static void report_crash(const char *text, size_t len) {
  if (len > CRASH_TEXT_MAX) len = CRASH_TEXT_MAX;
  const reply r = {REPLY_CRASH, (int32_t)len};
  if (send_all(worker_fd, &r, sizeof r)) send_all(worker_fd, text, len);
}

static void worker_loop(tf_isolate *w) {
  for (;;) {
    uint64_t member;
    size_t got = 0;
    while (got < sizeof member) {
      const ssize_t k = recv(w->fd, (char *)&member + got, sizeof member - got, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) _exit(0); /* the rank closed: done */
      got += (size_t)k;
    }
    tf_guard_member(member);
    const int status = w->spec->run(w->spec->ctx, member, w->slots);
    tf_guard_idle();
    const reply r = {REPLY_RESULT, status};
    if (!send_all(w->fd, &r, sizeof r) || !send_all(w->fd, w->row, w->row_bytes)) _exit(0);
  }
}

static int start_worker(tf_isolate *w) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair)) return -1;
  const pid_t parent = getpid();
  fflush(NULL); /* nothing buffered is written twice */
  const pid_t pid = fork();
  if (pid < 0) {
    close(pair[0]), close(pair[1]);
    return -1;
  }
  if (pid == 0) {
    close(pair[0]);
    w->fd = worker_fd = pair[1];
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    signal(SIGINT, SIG_IGN), signal(SIGTERM, SIG_IGN), signal(SIGUSR1, SIG_IGN);
    on_exit(on_exit_in_worker, NULL);
    tf_guard_worker(report_crash);
    worker_loop(w);
  }
  close(pair[1]);
  w->pid = pid, w->fd = pair[0];
  return 0;
}

tf_isolate *tf_isolate_create(const tf_ensemble_spec *spec, double member_time_limit,
                              tf_isolate_stop_fn stop, void *stop_ctx) {
  tf_isolate *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->spec = spec, w->time_limit = member_time_limit, w->fd = -1;
  w->stop = stop, w->stop_ctx = stop_ctx;
  for (size_t c = 0; c < spec->ncols; c++) w->row_bytes += tf_column_bytes(&spec->cols[c]);
  w->row = malloc(w->row_bytes ? w->row_bytes : 1);
  w->slots = calloc(spec->ncols ? spec->ncols : 1, sizeof *w->slots);
  if (!w->row || !w->slots) {
    tf_isolate_destroy(w);
    return NULL;
  }
  size_t offset = 0;
  for (size_t c = 0; c < spec->ncols; c++) {
    w->slots[c] = w->row + offset;
    offset += tf_column_bytes(&spec->cols[c]);
  }
  return w;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { READ_DONE = 1, READ_CLOSED = 0, READ_LATE = -1, READ_STOPPED = -2 };

/* Reads n bytes from w's worker by `deadline` (monotonic seconds; 0: none), unless told to
 * stop first. */
static int read_by(const tf_isolate *w, void *data, size_t n, double deadline) {
  for (char *p = data; n;) {
    if (w->stop && w->stop(w->stop_ctx)) return READ_STOPPED;
    int wait_ms = 100; /* the stop is asked this often */
    if (deadline > 0) {
      const double left = deadline - now();
      if (left <= 0) return READ_LATE;
      if (left * 1e3 < wait_ms) wait_ms = (int)ceil(left * 1e3);
    }
    struct pollfd pfd = {.fd = w->fd, .events = POLLIN};
    const int ready = poll(&pfd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue; /* a signal for the rank: asked above */
    if (ready == 0) continue;                  /* the deadline is checked above */
    if (ready < 0) return READ_CLOSED;
    const ssize_t k = recv(w->fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return READ_CLOSED;
    p += k, n -= (size_t)k;
  }
  return READ_DONE;
}

/* Ends the worker (if still running) and collects it: its wait status. */
static int end_worker(tf_isolate *w, bool kill_it) {
  int wstatus = 0;
  if (w->pid > 0) {
    if (kill_it) kill(w->pid, SIGKILL);
    while (waitpid(w->pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }
  if (w->fd >= 0) close(w->fd);
  w->pid = 0, w->fd = -1;
  return wstatus;
}

/* The row of a member that did not finish: NaN (integers 0), the reason in text columns. */
static void fill_missing(const tf_isolate *w, void *const *row, const char *why) {
  for (size_t c = 0; c < w->spec->ncols; c++) {
    const tf_column *col = &w->spec->cols[c];
    if (col->type == TF_COLUMN_TEXT) {
      memset(row[c], 0, tf_column_bytes(col));
      memcpy(row[c], why, strnlen(why, TF_COLUMN_TEXT_BYTES - 1));
      continue;
    }
    for (uint64_t i = 0; i < col->width; i++) {
      if (col->type == TF_COLUMN_F64)
        ((double *)row[c])[i] = NAN;
      else
        ((int64_t *)row[c])[i] = 0;
    }
  }
}

/* why[n]: of what the worker died; `crash` is its own description, if it sent one */
static void say_death(int wstatus, const reply *said, bool said_exit, const char *crash, char *why,
                      size_t n) {
  if (said_exit)
    snprintf(why, n, "the model called exit(%d)", said->value);
  else if (WIFSIGNALED(wstatus) && *crash)
    snprintf(why, n, "the model's process died of signal %d: %s", WTERMSIG(wstatus), crash);
  else if (WIFSIGNALED(wstatus))
    snprintf(why, n, "the model's process died of signal %d (%s)", WTERMSIG(wstatus),
             strsignal(WTERMSIG(wstatus)));
  else
    snprintf(why, n, "the model's process ended with status %d (the model called _exit?)",
             WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
}

int tf_isolate_member(tf_isolate *w, uint64_t member, void *const *row, char *why, size_t n) {
  why[0] = '\0';
  if (!w->pid && start_worker(w)) {
    snprintf(why, n, "cannot start a worker process: %s", strerror(errno));
    fill_missing(w, row, why);
    return TF_MEMBER_CRASHED;
  }
  const double deadline = w->time_limit > 0 ? now() + w->time_limit : 0;
  reply r = {0, 0};
  int got =
      send_all(w->fd, &member, sizeof member) ? read_by(w, &r, sizeof r, deadline) : READ_CLOSED;
  if (got == READ_DONE && r.kind == REPLY_RESULT) got = read_by(w, w->row, w->row_bytes, deadline);
  if (got == READ_DONE && r.kind == REPLY_RESULT) {
    for (size_t c = 0, offset = 0; c < w->spec->ncols; c++) {
      const size_t bytes = tf_column_bytes(&w->spec->cols[c]);
      if (w->spec->cols[c].type == TF_COLUMN_TEXT)
        memset(row[c], 0, bytes); /* nothing to say */
      else
        memcpy(row[c], w->row + offset, bytes);
      offset += bytes;
    }
    return r.value;
  }
  char crash[CRASH_TEXT_MAX + 1] = "";
  if (got == READ_DONE && r.kind == REPLY_CRASH && r.value > 0 && r.value <= CRASH_TEXT_MAX &&
      read_by(w, crash, (size_t)r.value, deadline) == READ_DONE)
    crash[r.value] = '\0';
  else
    crash[0] = '\0';
  int status = TF_MEMBER_CRASHED;
  if (got == READ_STOPPED) {
    end_worker(w, true);
    status = TF_MEMBER_PENDING;
  } else if (got == READ_LATE) {
    end_worker(w, true);
    snprintf(why, n, "ran longer than run.member_time_limit (%g s) and was stopped", w->time_limit);
    status = TF_MEMBER_TIMEOUT;
  } else {
    say_death(end_worker(w, false), &r, got == READ_DONE && r.kind == REPLY_EXIT, crash, why, n);
  }
  fill_missing(w, row, why);
  return status;
}

void tf_isolate_destroy(tf_isolate *w) {
  if (!w) return;
  end_worker(w, true);
  free(w->row), free(w->slots);
  free(w);
}
