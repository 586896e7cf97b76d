/* guard.c — see guard.h.  Only async-signal-safe calls in the handlers: write(2) of text
 * formatted by hand, signal(2), raise(3), _exit(2).  These handlers are the one place outside
 * the executable's main that ends the process: they are installed by the executable only
 * (never by the library entry point), and a hung computation cannot return a status. */
#define _GNU_SOURCE
#include "guard.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "crash_point.h"
#include "error.h"

static char model_name[128] = "?";
static int guard_rank;
static double hard_limit; /* seconds, for the message */
static volatile sig_atomic_t busy;
static volatile uint64_t current;
static bool in_worker;
static tf_guard_report_fn report_crash;

void tf_guard_worker(tf_guard_report_fn report) {
  in_worker = true;
  report_crash = report;
}

void tf_guard_member(uint64_t member) {
  tf_crash_point_publish(NULL, NULL, 0);
  current = member;
  busy = 1;
}

void tf_guard_idle(void) {
  busy = 0;
}

double tf_guard_grace(double time_limit) {
  const double g = 0.1 * time_limit;
  return g < 5 ? 5 : g > 120 ? 120 : g;
}

static const char *signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic trap)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (abort)";
    default:
      return "a fatal signal";
  }
}

static size_t where(char *msg, size_t cap) {
  size_t len = 0;
  tf_safe_put(msg, &len, cap, in_worker ? "twofold: warning: rank " : "twofold: error: rank ");
  tf_safe_put_u64(msg, &len, cap, (uint64_t)guard_rank);
  if (busy) {
    tf_safe_put(msg, &len, cap, ", member ");
    tf_safe_put_u64(msg, &len, cap, current);
    tf_safe_put(msg, &len, cap, " of model '");
  } else {
    tf_safe_put(msg, &len, cap, ", between members, model '");
  }
  tf_safe_put(msg, &len, cap, model_name);
  tf_safe_put(msg, &len, cap, "': ");
  return len;
}

/* " at t = ..., state [...]" where the member's engine published them */
static void put_state(char *msg, size_t *len, size_t cap) {
  if (busy) tf_crash_point_describe(msg, len, cap);
}

static void on_crash(int sig) {
  char msg[4096];
  size_t len = where(msg, sizeof msg);
  const size_t what = len;
  tf_safe_put(msg, &len, sizeof msg, signal_name(sig));
  tf_safe_put(msg, &len, sizeof msg, busy ? " inside the member's computation" : "");
  put_state(msg, &len, sizeof msg);
  if (in_worker && report_crash) report_crash(msg + what, len - what);
  tf_safe_put(msg, &len, sizeof msg,
              in_worker ? " (the model's code, or the engine on its values); it ran in a worker "
                          "process (--isolate): the member is recorded as crashed\n"
              : busy    ? " (the model's code, or the engine on its values); "
                          "the members flushed before are in the file\n"
                        : "; the members flushed before are kept: run again with --resume\n");
  if (write(STDERR_FILENO, msg, len) < 0) {
    /* nothing left to tell */
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static void on_hard_limit(int sig) {
  (void)sig;
  char msg[512];
  size_t len = where(msg, sizeof msg);
  tf_safe_put(msg, &len, sizeof msg, "the hard time limit (--time-limit plus ");
  tf_safe_put_u64(msg, &len, sizeof msg, (uint64_t)(tf_guard_grace(hard_limit) + 0.5));
  tf_safe_put(
      msg, &len, sizeof msg,
      " s) has passed while a computation had not returned (a model call that never ends?); "
      "stopping: the members flushed before are kept, --resume continues\n");
  if (write(STDERR_FILENO, msg, len) < 0) {
    /* nothing left to tell */
  }
  _exit(TF_EXIT_INTERRUPTED);
}

void tf_guard_install(const char *model, int rank, double time_limit, double left) {
  snprintf(model_name, sizeof model_name, "%s", model && *model ? model : "?");
  guard_rank = rank;
  static bool installed;
  if (!installed) {
    installed = true;
    /* an alternate stack: a stack overflow in the model must still be reported */
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa = {0};
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) sigaction(fatal[i], &sa, NULL);
  }
  if (time_limit > 0) {
    hard_limit = time_limit;
    struct sigaction sa = {0};
    sa.sa_handler = on_hard_limit;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    double at = left + tf_guard_grace(time_limit);
    if (at < 1e-3) at = 1e-3;
    struct itimerval it = {{0, 0}, {(time_t)at, (suseconds_t)((at - (double)(time_t)at) * 1e6)}};
    setitimer(ITIMER_REAL, &it, NULL);
  }
}
