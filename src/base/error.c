/* error.c — formatting of tf_error messages and their codes. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void put(tf_error *err, int code, const char *fmt, va_list ap) {
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  err->code = code;
}

int tf_fail(tf_error *err, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    put(err, TF_ERR_RUNTIME, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int tf_fail_code(tf_error *err, tf_error_code code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    put(err, code, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int tf_fail_more(tf_error *err, const char *fmt, ...) {
  if (err) {
    const int code = tf_error_code_of(err);
    va_list ap;
    va_start(ap, fmt);
    put(err, code, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int tf_error_mark(tf_error *err, tf_error_code code) {
  if (err) err->code = code;
  return -1;
}

tf_error_code tf_error_code_of(const tf_error *err) {
  return err->code > TF_ERR_NONE && err->code < TF_ERR_CODE_COUNT ? (tf_error_code)err->code
                                                                  : TF_ERR_RUNTIME;
}

bool tf_error_is_input(tf_error_code code) {
  return code == TF_ERR_CONFIG || code == TF_ERR_CONFIG_MISSING_KEY || code == TF_ERR_INPUT_FILE;
}

bool tf_error_same(const tf_error *a, const tf_error *b) {
  return tf_error_code_of(a) == tf_error_code_of(b) && strcmp(a->msg, b->msg) == 0;
}
