/* check.h — minimal assertions for the unit tests: print the failed condition, count it,
 * and let main() return the count. */
#ifndef TF_TEST_CHECK_H
#define TF_TEST_CHECK_H

#include <math.h>
#include <stdio.h>

static int check_failures;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      check_failures++;                                                        \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
    }                                                                          \
  } while (0)

#define CHECK_CLOSE(a, b, tol, what)                                                               \
  CHECK(fabs((a) - (b)) <= (tol), "%s: %.17g vs %.17g (tol %.3g)", what, (double)(a), (double)(b), \
        (double)(tol))

static inline int check_report(const char *name) {
  if (check_failures)
    fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
  else
    printf("%s: all checks passed\n", name);
  return check_failures ? 1 : 0;
}

#endif
