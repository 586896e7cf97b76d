/* crash_point.c — see crash_point.h.  Async-signal-safe throughout: no libc formatting, no
 * allocation, no locks. */
#include "crash_point.h"

#include <stdbool.h>
#include <string.h>

static const double *volatile point_t, *volatile point_x;
static volatile int point_dim;

void tf_crash_point_publish(const double *t, const double *x, int dim) {
  point_t = NULL; /* never a time with another member's state */
  point_dim = x ? dim : 0;
  point_x = x;
  point_t = t;
}

void tf_safe_put(char *buf, size_t *len, size_t cap, const char *s) {
  for (; *s && *len + 1 < cap; s++) buf[(*len)++] = *s;
}

void tf_safe_put_u64(char *buf, size_t *len, size_t cap, uint64_t v) {
  char digits[24];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10), v /= 10;
  while (v);
  while (n && *len + 1 < cap) buf[(*len)++] = digits[--n];
}

/* A nonnegative integer in base 1e9, least significant limb first: the exact decimal digits
 * of a double (at most 2^53 5^1074 < 10^768, 86 limbs) without libc's formatting. */
enum { BIG_LIMBS = 90, BIG_BASE = 1000000000 };
typedef struct big {
  uint32_t limb[BIG_LIMBS];
  int n;
} big;

static void big_mul(big *b, uint32_t m) {
  uint64_t carry = 0;
  for (int i = 0; i < b->n; i++) {
    const uint64_t v = (uint64_t)b->limb[i] * m + carry;
    b->limb[i] = (uint32_t)(v % BIG_BASE), carry = v / BIG_BASE;
  }
  for (; carry && b->n < BIG_LIMBS; carry /= BIG_BASE)
    b->limb[b->n++] = (uint32_t)(carry % BIG_BASE);
}

/* b *= base^power, in factors that keep a limb times the factor below 2^64 */
static void big_mul_pow(big *b, uint32_t base, int power, int per_factor) {
  uint32_t chunk = 1;
  for (int i = 0; i < per_factor; i++) chunk *= base;
  for (; power >= per_factor; power -= per_factor) big_mul(b, chunk);
  for (; power > 0; power--) big_mul(b, base);
}

/* decimal digits of b, most significant first; returns their count */
static int big_digits(const big *b, char *out) {
  int nd = 0;
  for (int i = b->n - 1; i >= 0; i--) {
    char d[9];
    uint32_t v = b->limb[i];
    for (int k = 8; k >= 0; k--) d[k] = (char)('0' + v % 10), v /= 10;
    int k = 0;
    if (i == b->n - 1)
      while (k < 8 && d[k] == '0') k++; /* no leading zeros */
    for (; k < 9; k++) out[nd++] = d[k];
  }
  return nd;
}

/* Rounds digits[0..*nd) to 17 significant ones, half to even; a carry out of the first digit
 * raises *exp10. */
static void round_17(char *digits, int *nd, int *exp10) {
  enum { P = 17 };
  if (*nd <= P) return;
  bool rest = false;
  for (int i = P + 1; i < *nd; i++) rest = rest || digits[i] != '0';
  const bool up = digits[P] > '5' || (digits[P] == '5' && (rest || (digits[P - 1] - '0') % 2 == 1));
  *nd = P;
  if (!up) return;
  int i = P - 1;
  for (; i >= 0 && digits[i] == '9'; i--) digits[i] = '0';
  if (i >= 0) {
    digits[i]++;
  } else {
    digits[0] = '1', *nd = 1;
    (*exp10)++;
  }
}

static void put_exponent(char *buf, size_t *len, size_t cap, int e) {
  tf_safe_put(buf, len, cap, e < 0 ? "e-" : "e+");
  const unsigned a = (unsigned)(e < 0 ? -e : e);
  if (a < 10) tf_safe_put(buf, len, cap, "0");
  tf_safe_put_u64(buf, len, cap, a);
}

/* "%.17g" of the digits d[0..nd) times 10^(exp10 - nd + 1): exponent style outside
 * 1e-4 <= |v| < 1e17, trailing zeros dropped */
static void put_g(char *buf, size_t *len, size_t cap, const char *d, int nd, int exp10) {
  while (nd > 1 && d[nd - 1] == '0') nd--;
  char one[2] = {0, 0};
  if (exp10 < -4 || exp10 >= 17) {
    one[0] = d[0], tf_safe_put(buf, len, cap, one);
    if (nd > 1) tf_safe_put(buf, len, cap, ".");
    for (int i = 1; i < nd; i++) one[0] = d[i], tf_safe_put(buf, len, cap, one);
    put_exponent(buf, len, cap, exp10);
  } else if (exp10 < 0) {
    tf_safe_put(buf, len, cap, "0.");
    for (int i = -1; i > exp10; i--) tf_safe_put(buf, len, cap, "0");
    for (int i = 0; i < nd; i++) one[0] = d[i], tf_safe_put(buf, len, cap, one);
  } else {
    for (int i = 0; i <= exp10 || i < nd; i++) {
      if (i == exp10 + 1) tf_safe_put(buf, len, cap, ".");
      one[0] = i < nd ? d[i] : '0', tf_safe_put(buf, len, cap, one);
    }
  }
}

size_t tf_format_double_exact(double v, char *buf, size_t n) {
  size_t len = 0;
  if (!n) return 0;
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  const bool negative = bits >> 63;
  const int field = (int)(bits >> 52 & 0x7ff);
  const uint64_t fraction = bits & ((1ull << 52) - 1);
  if (field == 0x7ff && fraction) {
    tf_safe_put(buf, &len, n, "nan");
  } else {
    if (negative) tf_safe_put(buf, &len, n, "-");
    if (field == 0x7ff) {
      tf_safe_put(buf, &len, n, "inf");
    } else if (!field && !fraction) {
      tf_safe_put(buf, &len, n, "0");
    } else {
      /* v = M 2^E exactly; for E < 0 that is (M 5^-E) 10^E */
      const uint64_t M = field ? fraction | 1ull << 52 : fraction;
      const int E = field ? field - 1075 : -1074;
      big b = {{(uint32_t)(M % BIG_BASE), (uint32_t)(M / BIG_BASE)}, M >= BIG_BASE ? 2 : 1};
      if (E >= 0)
        big_mul_pow(&b, 2, E, 29);
      else
        big_mul_pow(&b, 5, -E, 13);
      char digits[BIG_LIMBS * 9] = {0};
      int nd = big_digits(&b, digits);
      int exp10 = nd - 1 + (E < 0 ? E : 0);
      round_17(digits, &nd, &exp10);
      put_g(buf, &len, n, digits, nd, exp10);
    }
  }
  buf[len] = '\0';
  return len;
}

void tf_crash_point_describe(char *buf, size_t *len, size_t cap) {
  const double *t = point_t, *x = point_x;
  const int dim = point_dim;
  if (!t) return;
  char number[32];
  tf_safe_put(buf, len, cap, " at t = ");
  tf_format_double_exact(*t, number, sizeof number);
  tf_safe_put(buf, len, cap, number);
  if (!x) return;
  tf_safe_put(buf, len, cap, ", state [");
  for (int i = 0; i < dim; i++) {
    tf_format_double_exact(x[i], number, sizeof number);
    tf_safe_put(buf, len, cap, i ? ", " : "");
    tf_safe_put(buf, len, cap, number);
  }
  tf_safe_put(buf, len, cap, "] (the last step reached)");
}
