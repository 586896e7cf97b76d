/* error.c — formatting of tf_error messages. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int tf_fail(tf_error *err, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return -1;
}
