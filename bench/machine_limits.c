/* machine_limits.c — what one core of this machine can do at most, measured, so that a
 * kernel's rate can be stated as a fraction of it (bench/devs_throughput.sh): the clock (a
 * chain of dependent integer adds, one per cycle on every x86 core), the issue rate of
 * independent 512-bit vector operations (integer add, double multiply, 32x32->64 multiply,
 * and the three interleaved), and the memory bandwidth of a streaming triad over arrays far
 * larger than the caches.  Hardware counters are not available on this machine (a virtual
 * machine), hence measurements instead of counter readings.
 *   machine_limits        prints one JSON line
 * Build: cc -O2 machine_limits.c (x86-64; the 512-bit rows are null without AVX-512). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Register-register adds: newer Intel cores fold a chain of adds of an immediate at rename
 * (several a cycle; this gave 9 to 14.6 GHz on an Intel Xeon here), not a chain of these. */
#define ADD10 "add %1,%0\n\tadd %1,%0\n\tadd %1,%0\n\tadd %1,%0\n\tadd %1,%0\n\t"
static double clock_hz(void) { /* ten dependent adds per iteration: ten cycles */
  const long n = 100000000;
  unsigned long x = 0, one = 1;
  const double t0 = cpu_now();
  for (long i = 0; i < n; i++) __asm__ volatile(ADD10 ADD10 : "+r"(x) : "r"(one));
  return 10.0 * (double)n / (cpu_now() - t0);
}

/* Eight independent chains of one 512-bit instruction (or two interleaved kinds). */
#define OP8(op)                                                                                   \
  op " %%zmm8,%%zmm0,%%zmm0\n\t" op " %%zmm8,%%zmm1,%%zmm1\n\t" op " %%zmm8,%%zmm2,%%zmm2\n\t" op \
     " %%zmm8,%%zmm3,%%zmm3\n\t" op " %%zmm8,%%zmm4,%%zmm4\n\t" op " %%zmm8,%%zmm5,%%zmm5\n\t" op \
     " %%zmm8,%%zmm6,%%zmm6\n\t" op " %%zmm8,%%zmm7,%%zmm7\n\t"
/* Sixteen independent chains, four of each kind: the mix of a vectorised kernel. */
#define OP4(op, r0, r1, r2, r3)                                                                   \
  op " %%zmm8," r0 "," r0 "\n\t" op " %%zmm8," r1 "," r1 "\n\t" op " %%zmm8," r2 "," r2 "\n\t" op \
     " %%zmm8," r3 "," r3 "\n\t"
#define MIX16                                               \
  OP4("vpaddq", "%%zmm0", "%%zmm1", "%%zmm2", "%%zmm3")     \
  OP4("vmulpd", "%%zmm4", "%%zmm5", "%%zmm6", "%%zmm7")     \
  OP4("vpxorq", "%%zmm16", "%%zmm17", "%%zmm18", "%%zmm19") \
  OP4("vpmuludq", "%%zmm20", "%%zmm21", "%%zmm22", "%%zmm23")
#define ZMM_CLOBBER                                                                         \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm16", "xmm17", \
      "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23"
#define ZMM_RATE(name, body)                                                     \
  __attribute__((target("avx512f"))) static double name(double hz) {             \
    const long n = 20000000;                                                     \
    __asm__ volatile("vpxorq %%zmm8,%%zmm8,%%zmm8" ::: ZMM_CLOBBER);             \
    const double t0 = cpu_now();                                                 \
    for (long i = 0; i < n; i++) __asm__ volatile(body ::: ZMM_CLOBBER);         \
    return 8.0 * (double)n / ((cpu_now() - t0) * hz); /* operations per cycle */ \
  }
ZMM_RATE(rate_int_add, OP8("vpaddq"))
ZMM_RATE(rate_fp_mul, OP8("vmulpd"))
ZMM_RATE(rate_mul32, OP8("vpmuludq"))
ZMM_RATE(rate_mixed, MIX16)

static double triad_bytes_per_second(void) { /* a = b + s c over 3 x 256 MiB, 24 B per index */
  const long n = 32L << 20;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  if (!a || !b || !c) return 0;
  for (long i = 0; i < n; i++) a[i] = 0, b[i] = 1, c[i] = 2;
  double best = 0;
  for (int r = 0; r < 4; r++) {
    const double t0 = cpu_now();
    for (long i = 0; i < n; i++) a[i] = b[i] + 0.5 * c[i];
    const double rate = 24.0 * (double)n / (cpu_now() - t0);
    best = rate > best ? rate : best;
  }
  if (a[n / 2] != 2.0) best = 0; /* the loop ran */
  free(a), free(b), free(c);
  return best;
}

int main(void) {
  const double hz = clock_hz();
  printf("{\"clock_hz\": %.4g", hz);
  if (__builtin_cpu_supports("avx512f"))
    printf(
        ", \"zmm_per_cycle\": {\"int_add\": %.3g, \"fp_mul\": %.3g, \"mul32\": %.3g, "
        "\"mixed\": %.3g}",
        rate_int_add(hz), rate_fp_mul(hz), rate_mul32(hz), rate_mixed(hz) * 2);
  else
    printf(", \"zmm_per_cycle\": null");
  printf(", \"triad_bytes_per_second\": %.4g}\n", triad_bytes_per_second());
  return 0;
}
