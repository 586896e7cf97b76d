/* vmath.c — see vmath.h. */
#include "vmath.h"

#include <stdint.h>
#include <string.h>

/* One build of each loop per vector width, chosen when the program starts (a test defines
 * TF_VMATH_CLONES empty to compare a plain build with them). */
#ifndef TF_VMATH_CLONES
#define TF_VMATH_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif

/* fdlibm e_log.c: log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), s = f / (2 + f), with
 * m = 1 + f in [sqrt(2)/2, sqrt(2)) and ln 2 split so that k ln2_hi is exact. */
static const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
static const double lg1 = 0x1.5555555555593p-1, lg2 = 0x1.999999997fa04p-2,
                    lg3 = 0x1.2492494229359p-2, lg4 = 0x1.c71c51d8e78afp-3,
                    lg5 = 0x1.7466496cb03dep-3, lg6 = 0x1.39a09d078c69fp-3,
                    lg7 = 0x1.2f112df3e5244p-3;

TF_VMATH_CLONES void tf_vmath_log(size_t n, const double *x, double *out) {
  for (size_t i = 0; i < n; i++) {
    uint64_t bits;
    memcpy(&bits, &x[i], sizeof bits);
    const int32_t high = (int32_t)(bits >> 32);
    const int32_t mant = high & 0x000fffff;
    const int32_t up = (mant + 0x95f64) & 0x100000; /* mantissa above sqrt(2): halve it */
    const int32_t k = ((high >> 20) - 1023) + (up >> 20);
    const uint64_t mbits =
        ((uint64_t)(uint32_t)(mant | (up ^ 0x3ff00000)) << 32) | (bits & 0xffffffffu);
    double m;
    memcpy(&m, &mbits, sizeof m);
    const double f = m - 1.0, dk = (double)k;
    const double s = f / (2.0 + f), z = s * s, w = z * z;
    const double t1 = w * (lg2 + w * (lg4 + w * lg6));
    const double t2 = z * (lg1 + w * (lg3 + w * (lg5 + w * lg7)));
    const double r = t2 + t1, hfsq = 0.5 * f * f;
    /* fdlibm's two forms, each the more accurate one on its range of mantissas */
    const int32_t middle = (mant - 0x6147a) | (0x6b851 - mant);
    const double wide = dk * ln2_hi - ((hfsq - (s * (hfsq + r) + dk * ln2_lo)) - f);
    const double narrow = dk * ln2_hi - ((s * (f - r) - dk * ln2_lo) - f);
    out[i] = middle > 0 ? wide : narrow;
  }
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
