/* test_crash_point.c — the crash handler's own double formatter writes exactly what glibc's
 * printf("%.17g") writes (an independent implementation), for the edges (zeros, subnormals,
 * the largest double, ties at the 17th digit, the switch between fixed and exponent style)
 * and for random bit patterns and random decimal-looking values. */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "crash_point.h"

static int compared;

static void same_as_printf(double v) {
  char mine[64], libc[64];
  tf_format_double_exact(v, mine, sizeof mine);
  snprintf(libc, sizeof libc, "%.17g", v);
  if (isnan(v)) snprintf(libc, sizeof libc, "nan"); /* glibc writes "-nan" for a negative one */
  compared++;
  CHECK(strcmp(mine, libc) == 0, "%a: '%s' vs printf's '%s'", v, mine, libc);
}

static double from_bits(uint64_t bits) {
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* splitmix64: a fixed sequence of test patterns */
static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int main(void) {
  const double edges[] = {0.0,
                          -0.0,
                          1.0,
                          -1.0,
                          0.1,
                          1.5,
                          2.5,
                          1e-4,
                          9.9999e-5,
                          1e-5,
                          1e16,
                          1e17,
                          9.99e16,
                          1e22,
                          123456789012345678.0,
                          DBL_MAX,
                          -DBL_MAX,
                          DBL_MIN,
                          4.9e-324,
                          2.2e-308,
                          INFINITY,
                          -INFINITY,
                          NAN,
                          -NAN,
                          0.30000000000000004,
                          1.0 / 3,
                          2.0 / 3,
                          100.0,
                          1e100,
                          5e-324,
                          0.5,
                          0.25,
                          1.6,
                          1.95,
                          9.5,
                          99999999999999999.0};
  for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) same_as_printf(edges[i]);
  /* 17 significant digits of an exact tie round half to even: 2^-k has exact expansions */
  for (int k = 1; k < 80; k++) same_as_printf(ldexp(1.0, -k)), same_as_printf(ldexp(1.0, k));
  uint64_t seed = 36;
  for (int i = 0; i < 200000; i++) same_as_printf(from_bits(next(&seed)));
  for (int i = 0; i < 100000; i++) { /* short decimals: 17-digit ties and nines carry */
    const double mantissa = (double)(next(&seed) % 100000) / 1000.0;
    same_as_printf(mantissa * pow(10.0, (double)((int)(next(&seed) % 40) - 20)));
  }
  char small[8];
  CHECK(tf_format_double_exact(-1.0 / 3, small, sizeof small) == 7 && strcmp(small, "-0.3333") == 0,
        "truncated to the buffer: '%s'", small);
  printf("%d values compared\n", compared);
  return check_report("test_crash_point");
}
