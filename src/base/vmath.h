/* vmath.h — log, exp and sin/cos written out in plain C over arrays, for the fast normals of
 * rng.h (integrator.normals: fast) and the fast step-size controller of the explicit pairs and
 * their lanes (integrator.controller_math: fast).
 *
 * Only additions, multiplications, divisions, square roots and integer operations on the
 * bits, all correctly rounded in IEEE double and compiled with -ffp-contract=off: gcc
 * vectorises the loops (AVX-512, AVX2 or SSE2, chosen at run time) and every width gives
 * the same bits, on every machine (where they are inlined, too: the whole build has
 * -ffp-contract=off).  The values are within a few units in the last place of
 * the exact functions (tests/unit/test_fast_normals.c and test_fast_control.c measure the
 * bounds against long double).  A call with n = 1 gives the bits of any element of a longer
 * call: the scalar path and the lanes of any width agree.
 *
 * The log and exp follow fdlibm (e_log.c, e_exp.c), whose notice follows:
 *   Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
 *   Developed at SunSoft, a Sun Microsystems, Inc. business.
 *   Permission to use, copy, modify, and distribute this software is freely granted,
 *   provided that this notice is preserved. */
#ifndef TF_VMATH_H
#define TF_VMATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "twofold/fast_math.h"

/* One value's log and exp, inline so that a loop over lanes vectorises them where it stands
 * (the controller's lanes, src/engine/flow_lanes.h) and a scalar caller pays no call; the
 * array functions below are loops over them. */

/* a where c, else b, chosen on the bits: gcc if-converts this in a loop for every vector unit,
 * where a conditional expression whose arms feed more arithmetic stays a branch (AVX2, SSE2). */
static inline double tf_vmath_pick(bool c, double a, double b) {
  return tf_fast_pick(0 - (tf_fast_mask)c, a, b);
}

/* log(x) for positive normal finite x.  fdlibm e_log.c: log(1 + f) = f - f^2/2 + s (f^2/2 +
 * R(s^2)), s = f / (2 + f), with m = 1 + f in [sqrt(2)/2, sqrt(2)) and ln 2 split so that
 * k ln2_hi is exact. */
static inline double tf_vmath_log1(double x) {
  const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
  const double lg1 = 0x1.5555555555593p-1, lg2 = 0x1.999999997fa04p-2, lg3 = 0x1.2492494229359p-2,
               lg4 = 0x1.c71c51d8e78afp-3, lg5 = 0x1.7466496cb03dep-3, lg6 = 0x1.39a09d078c69fp-3,
               lg7 = 0x1.2f112df3e5244p-3;
  /* fdlibm's 32-bit integer steps in 64 bits (the same values for positive x): every operand
   * of a loop over doubles then has the doubles' width, and vectorises at their lane count */
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  const uint64_t high = bits >> 32;
  const int64_t mant = (int64_t)(high & 0x000fffff);
  const uint64_t up = (uint64_t)(mant + 0x95f64) & 0x100000; /* mantissa above sqrt(2): halve it */
  const int64_t k = ((int64_t)(high >> 20) - 1023) + (int64_t)(up >> 20);
  const uint64_t mbits = (((uint64_t)mant | (up ^ 0x3ff00000)) << 32) | (bits & 0xffffffffu);
  double m;
  memcpy(&m, &mbits, sizeof m);
  /* (double)k through the bits of 1.5 2^52 + k (exact for |k| < 2^51): a conversion of 64-bit
   * integers the vector units have only with AVX-512DQ */
  const uint64_t kbits = 0x4338000000000000u + (uint64_t)k;
  double dk;
  memcpy(&dk, &kbits, sizeof dk);
  dk -= 0x1.8p52;
  const double f = m - 1.0;
  const double s = f / (2.0 + f), z = s * s, w = z * z;
  const double t1 = w * (lg2 + w * (lg4 + w * lg6));
  const double t2 = z * (lg1 + w * (lg3 + w * (lg5 + w * lg7)));
  const double r = t2 + t1, hfsq = 0.5 * f * f;
  /* fdlibm's two forms, each the more accurate one on its range of mantissas */
  const int64_t middle = (mant - 0x6147a) | (0x6b851 - mant);
  const double wide = dk * ln2_hi - ((hfsq - (s * (hfsq + r) + dk * ln2_lo)) - f);
  const double narrow = dk * ln2_hi - ((s * (f - r) - dk * ln2_lo) - f);
  return tf_vmath_pick(middle > 0, wide, narrow);
}

/* 2^k for a whole number k in [-1022, 1023] held as a double: its exponent field is k + 1023,
 * the low bits of k + 1023 + 1.5 2^52 shifted into place. */
static inline double tf_vmath_two_to(double k) {
  const double biased = k + (0x1.8p52 + 1023.0);
  uint64_t bits;
  memcpy(&bits, &biased, sizeof bits);
  bits <<= 52;
  double p;
  memcpy(&p, &bits, sizeof p);
  return p;
}

/* exp(x); 0 below -746, inf above 710, NaN for NaN.  fdlibm e_exp.c: x = k ln2 + r,
 * |r| <= ln2 / 2 (k the nearest integer to x / ln2, found by adding and subtracting 1.5 2^52,
 * exact in round-to-nearest; k ln2_hi is exact for |k| < 2^21), exp(r) = 1 + r + r c / (2 - c),
 * c = r - r^2 (P1 + r^2 (P2 + ...)).  The result is scaled by 2^k as 2^k1 2^k2, k1 + k2 = k,
 * each a normal number built from its exponent bits: no branch and no libm. */
static inline double tf_vmath_exp1(double x) {
  const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
  const double inv_ln2 = 0x1.71547652b82fep+0, shift = 0x1.8p52;
  const double p1 = 0x1.555555555553ep-3, p2 = -0x1.6c16c16bebd93p-9, p3 = 0x1.1566aaf25de2cp-14,
               p4 = -0x1.bbd41c5d26bf1p-20, p5 = 0x1.6376972bea4d0p-25;
  const double above = tf_vmath_pick(x < -746.0, -746.0, x);
  const double xc = tf_vmath_pick(above > 710.0, 710.0, above); /* NaN stays NaN */
  const double k = (xc * inv_ln2 + shift) - shift;
  const double hi = xc - k * ln2_hi, lo = k * ln2_lo, r = hi - lo, z = r * r;
  const double c = r - z * (p1 + z * (p2 + z * (p3 + z * (p4 + z * p5))));
  const double y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
  const double k1 = (0.5 * k + shift) - shift; /* about k / 2: both halves within range */
  return y * tf_vmath_two_to(k1) * tf_vmath_two_to(k - k1);
}

/* out[i] = log(x[i]) for positive normal finite x[i]: tf_vmath_log1. */
void tf_vmath_log(size_t n, const double *x, double *out);

/* out[i] = exp(x[i]): tf_vmath_exp1. */
void tf_vmath_exp(size_t n, const double *x, double *out);

/* s[i] = sin(2 pi u[i]), c[i] = cos(2 pi u[i]) for u[i] in [0, 1]: the reduction to
 * |r| <= 1/8 of a turn, u - q/4, is exact, and the Taylor polynomials in r are taken to
 * terms below 1e-18. */
void tf_vmath_sincos_turn(size_t n, const double *u, double *s, double *c);

#endif
