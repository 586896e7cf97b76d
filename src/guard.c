/* guard.c — see guard.h.  Only async-signal-safe calls in the handlers: write(2) of text
 * formatted by hand, signal(2), raise(3), _exit(2).  These handlers are the one place outside
 * the executable's main that ends the process: they are installed by the executable only
 * (never by the library entry point), and a hung computation cannot return a status. */
#define _GNU_SOURCE
#include "guard.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "error.h"

static char model_name[128] = "?";
static int guard_rank;
static double hard_limit; /* seconds, for the message */
static volatile sig_atomic_t busy;
static volatile uint64_t current;
static const double *volatile state_t, *volatile state_x;
static volatile int state_dim;
static bool in_worker;

void tf_guard_worker(void) {
  in_worker = true;
}

void tf_guard_member(uint64_t member) {
  tf_guard_state(NULL, NULL, 0);
  current = member;
  busy = 1;
}

void tf_guard_state(const double *t, const double *x, int dim) {
  state_t = NULL; /* never a time with another member's state */
  state_dim = x ? dim : 0;
  state_x = x;
  state_t = t;
}

void tf_guard_idle(void) {
  busy = 0;
}

double tf_guard_grace(double time_limit) {
  const double g = 0.1 * time_limit;
  return g < 5 ? 5 : g > 120 ? 120 : g;
}

/* text appended to buf at *len, no libc formatting */
static void put(char *buf, size_t *len, size_t cap, const char *s) {
  for (; *s && *len + 1 < cap; s++) buf[(*len)++] = *s;
}

static void put_u64(char *buf, size_t *len, size_t cap, uint64_t v) {
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
  put(buf, len, cap, e < 0 ? "e-" : "e+");
  const unsigned a = (unsigned)(e < 0 ? -e : e);
  if (a < 10) put(buf, len, cap, "0");
  put_u64(buf, len, cap, a);
}

/* "%.17g" of the digits d[0..nd) times 10^(exp10 - nd + 1): exponent style outside
 * 1e-4 <= |v| < 1e17, trailing zeros dropped */
static void put_g(char *buf, size_t *len, size_t cap, const char *d, int nd, int exp10) {
  while (nd > 1 && d[nd - 1] == '0') nd--;
  char one[2] = {0, 0};
  if (exp10 < -4 || exp10 >= 17) {
    one[0] = d[0], put(buf, len, cap, one);
    if (nd > 1) put(buf, len, cap, ".");
    for (int i = 1; i < nd; i++) one[0] = d[i], put(buf, len, cap, one);
    put_exponent(buf, len, cap, exp10);
  } else if (exp10 < 0) {
    put(buf, len, cap, "0.");
    for (int i = -1; i > exp10; i--) put(buf, len, cap, "0");
    for (int i = 0; i < nd; i++) one[0] = d[i], put(buf, len, cap, one);
  } else {
    for (int i = 0; i <= exp10 || i < nd; i++) {
      if (i == exp10 + 1) put(buf, len, cap, ".");
      one[0] = i < nd ? d[i] : '0', put(buf, len, cap, one);
    }
  }
}

size_t tf_guard_format_double(double v, char *buf, size_t n) {
  size_t len = 0;
  if (!n) return 0;
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  const bool negative = bits >> 63;
  const int field = (int)(bits >> 52 & 0x7ff);
  const uint64_t fraction = bits & ((1ull << 52) - 1);
  if (field == 0x7ff && fraction) {
    put(buf, &len, n, "nan");
  } else {
    if (negative) put(buf, &len, n, "-");
    if (field == 0x7ff) {
      put(buf, &len, n, "inf");
    } else if (!field && !fraction) {
      put(buf, &len, n, "0");
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

static const char *signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic trap)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (abort)";
    default:
      return "a fatal signal";
  }
}

static size_t where(char *msg, size_t cap) {
  size_t len = 0;
  put(msg, &len, cap, in_worker ? "twofold: warning: rank " : "twofold: error: rank ");
  put_u64(msg, &len, cap, (uint64_t)guard_rank);
  if (busy) {
    put(msg, &len, cap, ", member ");
    put_u64(msg, &len, cap, current);
    put(msg, &len, cap, " of model '");
  } else {
    put(msg, &len, cap, ", between members, model '");
  }
  put(msg, &len, cap, model_name);
  put(msg, &len, cap, "': ");
  return len;
}

/* " at t = ..., state [...]" where the member's engine published them */
static void put_state(char *msg, size_t *len, size_t cap) {
  const double *t = state_t, *x = state_x;
  const int dim = state_dim;
  if (!busy || !t) return;
  char number[32];
  put(msg, len, cap, " at t = ");
  tf_guard_format_double(*t, number, sizeof number);
  put(msg, len, cap, number);
  if (!x) return;
  put(msg, len, cap, ", state [");
  for (int i = 0; i < dim; i++) {
    tf_guard_format_double(x[i], number, sizeof number);
    put(msg, len, cap, i ? ", " : "");
    put(msg, len, cap, number);
  }
  put(msg, len, cap, "] (the last step reached)");
}

static void on_crash(int sig) {
  char msg[4096];
  size_t len = where(msg, sizeof msg);
  put(msg, &len, sizeof msg, signal_name(sig));
  put(msg, &len, sizeof msg, busy ? " inside the member's computation" : "");
  put_state(msg, &len, sizeof msg);
  put(msg, &len, sizeof msg,
      in_worker ? " (the model's code, or the engine on its values); it ran in a worker "
                  "process (--isolate): the member is recorded as crashed\n"
      : busy    ? " (the model's code, or the engine on its values); "
                  "the members flushed before are in the file\n"
                : "; the members flushed before are kept: run again with --resume\n");
  if (write(STDERR_FILENO, msg, len) < 0) {
    /* nothing left to tell */
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static void on_hard_limit(int sig) {
  (void)sig;
  char msg[512];
  size_t len = where(msg, sizeof msg);
  put(msg, &len, sizeof msg, "the hard time limit (--time-limit plus ");
  put_u64(msg, &len, sizeof msg, (uint64_t)(tf_guard_grace(hard_limit) + 0.5));
  put(msg, &len, sizeof msg,
      " s) has passed while a computation had not returned (a model call that never ends?); "
      "stopping: the members flushed before are kept, --resume continues\n");
  if (write(STDERR_FILENO, msg, len) < 0) {
    /* nothing left to tell */
  }
  _exit(TF_EXIT_INTERRUPTED);
}

void tf_guard_install(const char *model, int rank, double time_limit, double left) {
  snprintf(model_name, sizeof model_name, "%s", model && *model ? model : "?");
  guard_rank = rank;
  static bool installed;
  if (!installed) {
    installed = true;
    /* an alternate stack: a stack overflow in the model must still be reported */
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa = {0};
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) sigaction(fatal[i], &sa, NULL);
  }
  if (time_limit > 0) {
    hard_limit = time_limit;
    struct sigaction sa = {0};
    sa.sa_handler = on_hard_limit;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    double at = left + tf_guard_grace(time_limit);
    if (at < 1e-3) at = 1e-3;
    struct itimerval it = {{0, 0}, {(time_t)at, (suseconds_t)((at - (double)(time_t)at) * 1e6)}};
    setitimer(ITIMER_REAL, &it, NULL);
  }
}
