/* vec.h — the dot product every geometric module needs, written once. */
#ifndef TF_VEC_H
#define TF_VEC_H

#include <stddef.h>

static inline double tf_dot(const double *a, const double *b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

#endif
