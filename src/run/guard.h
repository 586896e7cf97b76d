/* guard.h — a crash inside a member, or a model call that never returns, is named.
 *
 * The model's code is the user's: a segfault, an abort or an endless loop in it must not end
 * a run with only Open MPI's backtrace, or ignore the time limit.  While a member runs, the
 * scheduler records which one (tf_guard_member); an async-signal-safe handler for SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL and SIGABRT writes the model, the rank and the member on stderr
 * (on an alternate stack, so a stack overflow is reported too) and then dies of the same
 * signal, so the exit status still says which (128 + signal; docs/CONFIG.md).  Where the
 * member's engine publishes them (crash_point.h), the time and state at the crash follow.  The
 * results flushed before stay in the file and --resume continues from them.
 *
 * --time-limit is soft: the run stops at the next member boundary.  A member that never
 * returns would hold it for ever, so the guard also arms a hard limit at the time limit plus
 * a grace period (10 % of it, at least 5 s and at most 120 s): then it says which member was
 * still running and exits 3 with what was flushed. */
#ifndef TF_GUARD_H
#define TF_GUARD_H

#include <stddef.h>
#include <stdint.h>

/* Installs the handlers for this process; `model` (copied) names the model in messages,
 * `rank` the process; time_limit > 0 (of which `left` seconds remain) arms the hard limit. */
void tf_guard_install(const char *model, int rank, double time_limit, double left);

/* The grace period after a time limit of `time_limit` seconds. */
double tf_guard_grace(double time_limit);

/* The member now being computed; tf_guard_idle() between members. */
void tf_guard_member(uint64_t member);
void tf_guard_idle(void);

/* What a worker does with the description of its crash ("SIGSEGV (invalid memory access)
 * inside the member's computation at t = ..., state [...]") before it dies: only
 * async-signal-safe calls. */
typedef void (*tf_guard_report_fn)(const char *text, size_t len);

/* This process is a worker of --isolate (isolate.h): a crash ends the member, not the run,
 * and is described to `report` as well as on stderr. */
void tf_guard_worker(tf_guard_report_fn report);

#endif
