/* json.c — growable buffer behind tf_json; keys are written in insertion order. */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tf_json {
  char *buf, *text;
  size_t len, cap;
  size_t fields;
};

tf_json *tf_json_create(void) {
  return calloc(1, sizeof(tf_json));
}

void tf_json_destroy(tf_json *j) {
  if (j) free(j->buf), free(j->text);
  free(j);
}

static void append(tf_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(tf_json *j, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    const size_t room = j->cap - j->len;
    const int w = vsnprintf(j->buf ? j->buf + j->len : NULL, room, fmt, ap);
    va_end(ap);
    if (w >= 0 && (size_t)w < room) {
      j->len += (size_t)w;
      return;
    }
    const size_t cap = (j->cap + (size_t)(w > 0 ? w : 0) + 64) * 2;
    char *grown = realloc(j->buf, cap);
    if (!grown) return;
    j->buf = grown;
    j->cap = cap;
  }
}

static void append_escaped(tf_json *j, const char *s) {
  append(j, "\"");
  for (; *s; s++) {
    const unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      append(j, "\\%c", c);
    else if (c < 0x20)
      append(j, "\\u%04x", c);
    else
      append(j, "%c", c);
  }
  append(j, "\"");
}

static void key(tf_json *j, const char *k) {
  if (j->fields++) append(j, ", ");
  append_escaped(j, k);
  append(j, ": ");
}

static void number(tf_json *j, double v) {
  if (isfinite(v))
    append(j, "%.17g", v);
  else
    append(j, "null");
}

void tf_json_string(tf_json *j, const char *k, const char *v) {
  key(j, k);
  append_escaped(j, v ? v : "");
}
void tf_json_number(tf_json *j, const char *k, double v) {
  key(j, k);
  number(j, v);
}
void tf_json_integer(tf_json *j, const char *k, long long v) {
  key(j, k);
  append(j, "%lld", v);
}
void tf_json_bool(tf_json *j, const char *k, int v) {
  key(j, k);
  append(j, v ? "true" : "false");
}
void tf_json_numbers(tf_json *j, const char *k, const double *v, size_t n) {
  key(j, k);
  append(j, "[");
  for (size_t i = 0; i < n; i++) {
    if (i) append(j, ", ");
    number(j, v[i]);
  }
  append(j, "]");
}
void tf_json_counts(tf_json *j, const char *k, const char *const *names, const long long *v,
                    size_t n) {
  key(j, k);
  append(j, "{");
  for (size_t i = 0; i < n; i++) {
    if (i) append(j, ", ");
    append_escaped(j, names[i]);
    append(j, ": %lld", v[i]);
  }
  append(j, "}");
}

const char *tf_json_text(tf_json *j) {
  const size_t len = j->len;
  char *out = realloc(j->text, len + 3);
  if (!out) return "{}";
  out[0] = '{';
  if (len) memcpy(out + 1, j->buf, len);
  out[len + 1] = '}';
  out[len + 2] = '\0';
  j->text = out;
  return out;
}
