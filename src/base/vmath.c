/* vmath.c — see vmath.h. */
#include "vmath.h"

#include <stdint.h>

/* One build of each loop per vector width, chosen when the program starts (a test defines
 * TF_VMATH_CLONES empty to compare a plain build with them). */
#ifndef TF_VMATH_CLONES
#define TF_VMATH_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif

TF_VMATH_CLONES void tf_vmath_log(size_t n, const double *x, double *out) {
  for (size_t i = 0; i < n; i++) out[i] = tf_vmath_log1(x[i]);
}

TF_VMATH_CLONES void tf_vmath_exp(size_t n, const double *x, double *out) {
  for (size_t i = 0; i < n; i++) out[i] = tf_vmath_exp1(x[i]);
}

/* sin(2 pi r) = r (S0 + r^2 (S1 + ...)), cos(2 pi r) = 1 + r^2 (C1 + r^2 (C2 + ...)):
 * (-1)^k (2 pi)^(2k+1) / (2k+1)! and (-1)^k (2 pi)^(2k) / (2k)!, rounded to double. */
static const double s0 = 0x1.921fb54442d18p+2, s1 = -0x1.4abbce625be53p+5,
                    s2 = 0x1.466bc6775aae2p+6, s3 = -0x1.32d2cce62bd86p+6,
                    s4 = 0x1.50783487ee782p+5, s5 = -0x1.e3074fde8871fp+3,
                    s6 = 0x1.e8f434d018d63p+1, s7 = -0x1.6fadb9f155744p-1,
                    s8 = 0x1.aaec32af93359p-4;
static const double c1 = -0x1.3bd3cc9be45dep+4, c2 = 0x1.03c1f081b5ac4p+6,
                    c3 = -0x1.55d3c7e3cbffap+6, c4 = 0x1.e1f506891babbp+5,
                    c5 = -0x1.a6d1f2a204a8cp+4, c6 = 0x1.f9d38a3763cc3p+2,
                    c7 = -0x1.b6e24f44b128fp+0, c8 = 0x1.20c62c2f2d7f5p-2;

TF_VMATH_CLONES void tf_vmath_sincos_turn(size_t n, const double *u, double *s, double *c) {
  for (size_t i = 0; i < n; i++) {
    const int32_t q = (int32_t)(4.0 * u[i] + 0.5); /* the nearest quarter turn */
    const double r = u[i] - 0.25 * (double)q;      /* exact (Sterbenz) */
    const double z = r * r;
    const double sr =
        r *
        (s0 + z * (s1 + z * (s2 + z * (s3 + z * (s4 + z * (s5 + z * (s6 + z * (s7 + z * s8))))))));
    const double cr =
        1.0 + z * (c1 + z * (c2 + z * (c3 + z * (c4 + z * (c5 + z * (c6 + z * (c7 + z * c8)))))));
    /* quarter q: cos = {c, -s, -c, s}, sin = {s, c, -s, -c} */
    const int32_t quarter = q & 3;
    const double cs = quarter & 1 ? sr : cr, sn = quarter & 1 ? cr : sr;
    c[i] = quarter == 1 || quarter == 2 ? -cs : cs;
    s[i] = quarter >= 2 ? -sn : sn;
  }
}
