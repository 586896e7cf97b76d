/* crash_point.h — where a member's integration is, for the crash handler (run/guard.h).
 *
 * An integration loop publishes its own time and state variables (the last accepted step,
 * the point a crashing model call starts from) when it starts, and clears them (NULL) before
 * they go out of scope; only the crash handler reads them, so publishing costs nothing per
 * step.  The text is written without libc's formatting, so a signal handler may call it. */
#ifndef TF_CRASH_POINT_H
#define TF_CRASH_POINT_H

#include <stddef.h>
#include <stdint.h>

void tf_crash_point_publish(const double *t, const double *x, int dim);

/* Appends " at t = T, state [X0, X1] (the last step reached)" to buf[*len..cap), nothing if
 * nothing is published. */
void tf_crash_point_describe(char *buf, size_t *len, size_t cap);

/* v as printf's "%.17g" writes it (exactly: the digits are those of the double's exact
 * decimal expansion, rounded half to even), with only async-signal-safe code; "inf", "-inf",
 * "nan".  Writes at most n - 1 characters and a NUL; returns the length. */
size_t tf_format_double_exact(double v, char *buf, size_t n);

/* Text, or a number in decimal, appended to buf at *len (kept below cap, no NUL). */
void tf_safe_put(char *buf, size_t *len, size_t cap, const char *s);
void tf_safe_put_u64(char *buf, size_t *len, size_t cap, uint64_t v);

#endif
