/* json.h — a flat JSON object built field by field, for the one-line job summary that
 * `--json` prints as the last line of stdout.  Numbers are written with %.17g so values
 * round-trip; non-finite numbers become null. */
#ifndef TF_JSON_H
#define TF_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef struct tf_json tf_json;

tf_json *tf_json_create(void);
void tf_json_destroy(tf_json *j);
void tf_json_string(tf_json *j, const char *key, const char *value);
void tf_json_number(tf_json *j, const char *key, double value);
void tf_json_integer(tf_json *j, const char *key, long long value);
void tf_json_bool(tf_json *j, const char *key, int value);
void tf_json_numbers(tf_json *j, const char *key, const double *v, size_t n);
/* A nested object of integer counts, e.g. {"ok": 10, "nonfinite": 1}. */
void tf_json_counts(tf_json *j, const char *key, const char *const *names, const long long *v,
                    size_t n);
/* The object text, "{...}"; valid until the next call on j. */
const char *tf_json_text(tf_json *j);

#endif
