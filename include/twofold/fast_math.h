/* twofold/fast_math.h — sin, cos and atan2 for a model's fields under model.field_math:
 * fast (public, header only, for kernels and plugins alike).
 *
 * libm's sin, cos and atan2 are calls per value that a loop over lanes cannot vectorise; these
 * are inline, branch-free C that gcc vectorises where a loop over lanes calls them.  They are
 * fdlibm's algorithms (e_rem_pio2.c, k_sin.c, k_cos.c, s_atan.c, e_atan2.c) with every branch
 * replaced by computing both sides and choosing on the bits (but for the reduction's
 * refinements where leading bits cancel, rare, which the arrays' functions leave to
 * tf_fast_sincos after their vector loop), so they use only additions, multiplications,
 * divisions and operations on the bits, each correctly rounded in IEEE double.  Compiled without
 * contraction (-ffp-contract=off, as the engine and the models it compiles are) they give the same
 * bits on every lane width, vector unit and machine: a model's scalar field and its lane field then
 * agree lane by lane, and a member's results do not depend on which members share its lanes.  They
 * are not libm's bits: within an ulp or two of the exact values (tests/unit/test_fast_math.c
 * measures the bounds against long double).
 *
 * tf_fast_sin and tf_fast_cos are valid for |x| <= TF_FAST_TRIG_MAX; beyond it (and for
 * infinities and NaN) the one-value functions call libm, and the arrays' functions hand such
 * elements to tf_fast_sincos after their vector loop: the same bits either way.
 *
 * The reduction, the polynomials and their coefficients are fdlibm's, whose notice follows:
 *   Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
 *   Developed at SunSoft, a Sun Microsystems, Inc. business.
 *   Permission to use, copy, modify, and distribute this software is freely granted,
 *   provided that this notice is preserved. */
#ifndef TWOFOLD_FAST_MATH_H
#define TWOFOLD_FAST_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* For a model's lane fields (under either math: plain arithmetic between libm's calls
 * vectorises too): compiled for AVX-512, AVX2 and the baseline and chosen at run time, the
 * same operations at every width (the same bits; tests/unit/test_fast_math.c compares them).
 * Write it before the function, with the loops it calls inlined into it (always_inline) so
 * that each clone vectorises them at its width. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TF_FAST_LANES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TF_FAST_LANES
#endif
#define TF_FAST_INLINE static inline __attribute__((always_inline))

/* The largest |x| reduced here: the quadrant n = round(2x / pi) stays below 2^20, where
 * n times each 33-bit piece of pi/2 is exact. */
#define TF_FAST_TRIG_MAX 0x1p19

/* Choices without branches or comparisons: a mask (all ones or all zeros) from the sign bit of
 * a difference, and a selection by it on the bits.  gcc vectorises these for SSE2, the kernels'
 * baseline, which has no 64-bit integer comparison (a conditional expression stays a branch,
 * and a comparison's truth value turned into a mask is not vectorised there either). */
typedef uint64_t tf_fast_mask;

/* all ones where a < b, for a, b not NaN and a - b not the NaN of inf - inf: the difference of
 * two such doubles is negative exactly where a < b (equal ones give +0) */
TF_FAST_INLINE tf_fast_mask tf_fast_below(double a, double b) {
  const double d = a - b;
  uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  return 0 - (bits >> 63);
}

/* all ones where x's sign bit is set (x < 0, -0, a negative NaN) */
TF_FAST_INLINE tf_fast_mask tf_fast_negative(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  return 0 - (bits >> 63);
}

/* a where mask, else b */
TF_FAST_INLINE double tf_fast_pick(tf_fast_mask mask, double a, double b) {
  uint64_t a_bits, b_bits;
  memcpy(&a_bits, &a, sizeof a_bits);
  memcpy(&b_bits, &b, sizeof b_bits);
  const uint64_t chosen = (a_bits & mask) | (b_bits & ~mask);
  double y;
  memcpy(&y, &chosen, sizeof y);
  return y;
}

/* |x| with the sign bit of s */
TF_FAST_INLINE double tf_fast_with_sign_of(double x, double s) {
  uint64_t xb, sb;
  memcpy(&xb, &x, sizeof xb);
  memcpy(&sb, &s, sizeof sb);
  xb = (xb & 0x7fffffffffffffffu) | (sb & 0x8000000000000000u);
  double y;
  memcpy(&y, &xb, sizeof y);
  return y;
}

/* One refinement of fdlibm's reduction (e_rem_pio2.c): r less n times the next 33 bits of pi/2
 * (exact, n < 2^20), into the new remainder, and into *w the rest, n times the tail beyond
 * them and the rounding error of the subtraction. */
TF_FAST_INLINE double tf_fast_pio2_round(double r, double n, double piece, double tail, double *w) {
  const double nw = n * piece, next = r - nw;
  *w = n * tail - ((r - next) - nw);
  return next;
}

/* n = round(2x / pi) (exact below 2^51) and fdlibm's first round: x - n pio2_1 is exact (n
 * pio2_1 has at most 53 bits and is within a factor 2 of x), 85 bits of pi/2 with *w */
TF_FAST_INLINE double tf_fast_pio2_first(double x, double *n, double *w) {
  const double invpio2 = 0x1.45f306dc9c883p-1, shift = 0x1.8p52, pio2_1 = 0x1.921fb54400000p+0;
  *n = (x * invpio2 + shift) - shift;
  *w = *n * 0x1.0b4611a626331p-34;
  return x - *n * pio2_1;
}

/* 2^e(x), x's bits without its mantissa or sign: fdlibm's tests of the exponents j - e(y0) > 16
 * and > 49, where the leading bits cancelled, become |y0| < 2^e(x) 2^-16 and 2^-49: comparisons
 * of doubles (every vector unit has those; 64-bit integer ones need SSE4.2). */
TF_FAST_INLINE double tf_fast_binade(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  bits &= 0x7ff0000000000000u;
  double b;
  memcpy(&b, &bits, sizeof b);
  return b;
}

#define TF_FAST_PIO2_2 0x1.0b4611a600000p-34
#define TF_FAST_PIO2_2T 0x1.3198a2e037073p-69
#define TF_FAST_PIO2_3 0x1.3198a2e000000p-69
#define TF_FAST_PIO2_3T 0x1.b839a252049c1p-104

/* x = n pi/2 + (y0 + y1), |y0 + y1| <= pi/4 (about), for |x| <= TF_FAST_TRIG_MAX: fdlibm's
 * medium case, its refinements only where the leading bits cancel (the values are fdlibm's).
 * Returns n (a whole number, as a double). */
TF_FAST_INLINE double tf_fast_reduce_pio2_scalar(double x, double *y0, double *y1) {
  double n, w;
  double r = tf_fast_pio2_first(x, &n, &w);
  *y0 = r - w;
  const double binade = tf_fast_binade(x);
  if (fabs(*y0) < binade * 0x1p-16) {
    r = tf_fast_pio2_round(r, n, TF_FAST_PIO2_2, TF_FAST_PIO2_2T, &w);
    *y0 = r - w;
    if (fabs(*y0) < binade * 0x1p-49) {
      r = tf_fast_pio2_round(r, n, TF_FAST_PIO2_3, TF_FAST_PIO2_3T, &w);
      *y0 = r - w;
    }
  }
  *y1 = (r - *y0) - w;
  return n;
}

/* sin(y0 + y1) for |y0| <= pi/4: fdlibm k_sin.c with its tail */
TF_FAST_INLINE double tf_fast_kernel_sin(double x, double y) {
  const double s1 = -0x1.5555555555549p-3, s2 = 0x1.111111110f8a6p-7, s3 = -0x1.a01a019c161d5p-13,
               s4 = 0x1.71de357b1fe7dp-19, s5 = -0x1.ae5e68a2b9cebp-26, s6 = 0x1.5d93a5acfd57cp-33;
  const double z = x * x, v = z * x;
  const double r = s2 + z * (s3 + z * (s4 + z * (s5 + z * s6)));
  return x - ((z * (0.5 * y - v * r) - y) - v * s1);
}

/* cos(y0 + y1) for |y0| <= pi/4: fdlibm k_cos.c, its two forms joined (qx = 0 below 0.3
 * gives the first form's operations exactly) */
TF_FAST_INLINE double tf_fast_kernel_cos(double x, double y) {
  const double c1 = 0x1.555555555554cp-5, c2 = -0x1.6c16c16c15177p-10, c3 = 0x1.a01a019cb1590p-16,
               c4 = -0x1.27e4f809c52adp-22, c5 = 0x1.1ee9ebdb4b1c4p-29, c6 = -0x1.8fae9be8838d4p-37;
  const double z = x * x;
  const double r = z * (c1 + z * (c2 + z * (c3 + z * (c4 + z * (c5 + z * c6)))));
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  const uint64_t high = (bits >> 32) & 0x7fffffffu;
  const uint64_t quarter = (high - 0x00200000u) << 32; /* |x| / 4, its low word cleared */
  double qx;
  memcpy(&qx, &quarter, sizeof qx);
  /* fdlibm's tests of the high word, high > 0x3fe90000 and high < 0x3fd33333, on |x| */
  const double ax = fabs(x);
  qx = tf_fast_pick(~tf_fast_below(ax, 0x1.9000100000000p-1), 0.28125, qx);
  qx = tf_fast_pick(tf_fast_below(ax, 0x1.3333300000000p-2), 0.0, qx);
  const double hz = 0.5 * z - qx, a = 1.0 - qx;
  return a - (hz - (z * r - x * y));
}

/* The quadrant n mod 4 as q = n - 4 round(n / 4) in -2 .. 2 (-2 standing for 2, -1 for 3), in
 * doubles (exact: n is a whole number below 2^20) for the comparisons */
TF_FAST_INLINE double tf_fast_quadrant(double n) {
  const double shift = 0x1.8p52;
  return n - 4.0 * ((0.25 * n + shift) - shift);
}

/* sin x and cos x for |x| <= TF_FAST_TRIG_MAX where fdlibm's first round of the reduction is
 * its last (no leading bits cancelled), no libm, no branch; *refine: all ones where it is not
 * (x within about 2^-16 |x| of a multiple of pi/2, rare: tf_fast_sincos gives those) */
TF_FAST_INLINE void tf_fast_sincos_branchless(double x, double *s, double *c,
                                              tf_fast_mask *refine) {
  double n, w;
  const double r = tf_fast_pio2_first(x, &n, &w), y0 = r - w, y1 = (r - y0) - w;
  *refine = tf_fast_below(fabs(y0), tf_fast_binade(x) * 0x1p-16);
  const double q = tf_fast_quadrant(n);
  const double ks = tf_fast_kernel_sin(y0, y1), kc = tf_fast_kernel_cos(y0, y1);
  const tf_fast_mask odd = tf_fast_below(fabs(fabs(q) - 1.0), 0.5);                 /* 1, 3 */
  const tf_fast_mask sin_negative = tf_fast_below(q, 0.0) | tf_fast_below(1.5, q);  /* 2, 3 */
  const tf_fast_mask cos_negative = tf_fast_below(0.5, q) | tf_fast_below(q, -1.5); /* 1, 2 */
  const double sv = tf_fast_pick(odd, kc, ks), cv = tf_fast_pick(odd, ks, kc);
  *s = tf_fast_pick(sin_negative, -sv, sv);
  *c = tf_fast_pick(cos_negative, -cv, cv);
}

/* True where the reduction above holds (false for infinities and NaN). */
TF_FAST_INLINE bool tf_fast_trig_in_range(double x) {
  return fabs(x) <= TF_FAST_TRIG_MAX;
}

/* sin x (want_sin) or cos x one value at a time, with branches: the values of
 * tf_fast_sincos_branchless in range, libm's beyond */
TF_FAST_INLINE double tf_fast_sin_or_cos(double x, bool want_sin) {
  if (!tf_fast_trig_in_range(x)) return want_sin ? sin(x) : cos(x);
  double y0, y1;
  const double q = tf_fast_quadrant(tf_fast_reduce_pio2_scalar(x, &y0, &y1));
  const int quadrant = ((int)q + 4 + (want_sin ? 0 : 1)) & 3; /* cos x = sin(x + pi/2) */
  const double v = quadrant & 1 ? tf_fast_kernel_cos(y0, y1) : tf_fast_kernel_sin(y0, y1);
  return quadrant & 2 ? -v : v;
}
TF_FAST_INLINE double tf_fast_sin(double x) {
  return tf_fast_sin_or_cos(x, true);
}
TF_FAST_INLINE double tf_fast_cos(double x) {
  return tf_fast_sin_or_cos(x, false);
}
TF_FAST_INLINE void tf_fast_sincos(double x, double *s, double *c) {
  if (!tf_fast_trig_in_range(x)) {
    *s = sin(x), *c = cos(x);
    return;
  }
  double y0, y1;
  const int quadrant = ((int)tf_fast_quadrant(tf_fast_reduce_pio2_scalar(x, &y0, &y1)) + 4) & 3;
  const double ks = tf_fast_kernel_sin(y0, y1), kc = tf_fast_kernel_cos(y0, y1);
  const double sv = quadrant & 1 ? kc : ks, cv = quadrant & 1 ? ks : kc;
  *s = quadrant & 2 ? -sv : sv;
  *c = (quadrant + 1) & 2 ? -cv : cv;
}

/* The arrays' functions work in blocks of TF_FAST_BLOCK values, the last padded with
 * harmless ones: a loop of a constant count that every vector unit runs whole (a loop over any
 * n leaves its remainder to scalar code, here slower than libm's). */
#define TF_FAST_BLOCK 8

/* s[i] = tf_fast_sin(x[i]), c[i] = tf_fast_cos(x[i]) (either may be NULL): the vector loop,
 * then tf_fast_sincos for the few elements out of range or whose reduction needs a refinement
 * (only those: the others' values are already its values). */
TF_FAST_INLINE void tf_fast_sincos_array(int n, const double *x, double *s, double *c) {
  for (int b = 0; b < n; b += TF_FAST_BLOCK) {
    const int m = n - b < TF_FAST_BLOCK ? n - b : TF_FAST_BLOCK;
    double xb[TF_FAST_BLOCK], sb[TF_FAST_BLOCK], cb[TF_FAST_BLOCK];
    const double *in = x + b;
    if (m < TF_FAST_BLOCK) { /* the last block, padded */
      for (int i = 0; i < TF_FAST_BLOCK; i++) xb[i] = i < m ? x[b + i] : 0.0;
      in = xb;
    }
    tf_fast_mask redo[TF_FAST_BLOCK]; /* out of range or to refine */
    uint64_t any = 0;
    for (int i = 0; i < TF_FAST_BLOCK; i++) {
      tf_fast_mask refine;
      tf_fast_sincos_branchless(in[i], &sb[i], &cb[i], &refine);
      redo[i] = refine | tf_fast_below(TF_FAST_TRIG_MAX, fabs(in[i])) |
                ~tf_fast_below(fabs(in[i]), INFINITY);
      any |= redo[i];
    }
    for (int i = 0; any && i < m; i++)
      if (redo[i]) tf_fast_sincos(in[i], &sb[i], &cb[i]);
    if (m == TF_FAST_BLOCK) { /* a constant size: vector moves, not a string copy */
      if (s) memcpy(s + b, sb, sizeof sb);
      if (c) memcpy(c + b, cb, sizeof cb);
      continue;
    }
    for (int i = 0; s && i < m; i++) s[b + i] = sb[i];
    for (int i = 0; c && i < m; i++) c[b + i] = cb[i];
  }
}

/* fdlibm s_atan.c's atan of a reduced argument t: hi + lo + atan t, with hi = lo = 0 its
 * x - x (s1 + s2) for x below 7/16 */
TF_FAST_INLINE double tf_fast_atan_reduced(double t, double hi, double lo) {
  const double at0 = 0x1.555555555550dp-2, at1 = -0x1.999999998ebc4p-3, at2 = 0x1.24924920083ffp-3,
               at3 = -0x1.c71c6fe231671p-4, at4 = 0x1.745cdc54c206ep-4, at5 = -0x1.3b0f2af749a6dp-4,
               at6 = 0x1.10d66a0d03d51p-4, at7 = -0x1.dde2d52defd9ap-5, at8 = 0x1.97b4b24760debp-5,
               at9 = -0x1.2b4442c6a6c2fp-5, at10 = 0x1.0ad3ae322da11p-6;
  const double z = t * t, w = z * z;
  const double s1 = z * (at0 + w * (at2 + w * (at4 + w * (at6 + w * (at8 + w * at10)))));
  const double s2 = w * (at1 + w * (at3 + w * (at5 + w * (at7 + w * at9))));
  return hi - ((t * (s1 + s2) - lo) - t);
}

/* fdlibm's five intervals of x >= 0 (or NaN, taken as the last), the reduction
 * t = num / den of each about the point whose atan is hi + lo: 0, 1/2, 1, 3/2, infinity */
#define TF_FAST_ATAN_HI1 0x1.dac670561bb4fp-2
#define TF_FAST_ATAN_LO1 0x1.a2b7f222f65e2p-56
#define TF_FAST_ATAN_HI2 0x1.921fb54442d18p-1
#define TF_FAST_ATAN_LO2 0x1.1a62633145c07p-55
#define TF_FAST_ATAN_HI3 0x1.f730bd281f69bp-1
#define TF_FAST_ATAN_LO3 0x1.007887af0cbbdp-56
#define TF_FAST_ATAN_HI4 0x1.921fb54442d18p+0
#define TF_FAST_ATAN_LO4 0x1.1a62633145c07p-54

/* atan x for x >= 0 (or NaN), the interval chosen on the bits */
TF_FAST_INLINE double tf_fast_atan_branchless(double x) {
  const tf_fast_mask above0 = ~tf_fast_below(x, 0.4375), above1 = ~tf_fast_below(x, 0.6875),
                     above2 = ~tf_fast_below(x, 1.1875), above3 = ~tf_fast_below(x, 2.4375);
  double num = x, den = 1.0, hi = 0.0, lo = 0.0;
  num = tf_fast_pick(above0, 2.0 * x - 1.0, num), den = tf_fast_pick(above0, 2.0 + x, den);
  hi = tf_fast_pick(above0, TF_FAST_ATAN_HI1, hi), lo = tf_fast_pick(above0, TF_FAST_ATAN_LO1, lo);
  num = tf_fast_pick(above1, x - 1.0, num), den = tf_fast_pick(above1, x + 1.0, den);
  hi = tf_fast_pick(above1, TF_FAST_ATAN_HI2, hi), lo = tf_fast_pick(above1, TF_FAST_ATAN_LO2, lo);
  num = tf_fast_pick(above2, x - 1.5, num), den = tf_fast_pick(above2, 1.0 + 1.5 * x, den);
  hi = tf_fast_pick(above2, TF_FAST_ATAN_HI3, hi), lo = tf_fast_pick(above2, TF_FAST_ATAN_LO3, lo);
  num = tf_fast_pick(above3, -1.0, num), den = tf_fast_pick(above3, x, den);
  hi = tf_fast_pick(above3, TF_FAST_ATAN_HI4, hi), lo = tf_fast_pick(above3, TF_FAST_ATAN_LO4, lo);
  return tf_fast_atan_reduced(num / den, hi, lo);
}

/* the same one value at a time, with branches */
TF_FAST_INLINE double tf_fast_atan_scalar(double x) {
  if (x < 0.4375) return tf_fast_atan_reduced(x / 1.0, 0.0, 0.0);
  if (x < 0.6875)
    return tf_fast_atan_reduced((2.0 * x - 1.0) / (2.0 + x), TF_FAST_ATAN_HI1, TF_FAST_ATAN_LO1);
  if (x < 1.1875)
    return tf_fast_atan_reduced((x - 1.0) / (x + 1.0), TF_FAST_ATAN_HI2, TF_FAST_ATAN_LO2);
  if (x < 2.4375)
    return tf_fast_atan_reduced((x - 1.5) / (1.0 + 1.5 * x), TF_FAST_ATAN_HI3, TF_FAST_ATAN_LO3);
  return tf_fast_atan_reduced(-1.0 / x, TF_FAST_ATAN_HI4, TF_FAST_ATAN_LO4);
}

#define TF_FAST_PI 0x1.921fb54442d18p+1
#define TF_FAST_PI_LO 0x1.1a62633145c07p-53

/* atan2(y, x), every quadrant, signed zeros and infinities as C's atan2: fdlibm e_atan2.c,
 * atan |y / x| then placed in its quadrant; no branch */
TF_FAST_INLINE double tf_fast_atan2_branchless(double y, double x) {
  const double ay = fabs(y), ax = fabs(x);
  double z = tf_fast_atan_branchless(ay / ax);
  /* 0 / 0 (the sum of two zeros is the only sum below the least subnormal) and inf / inf
   * (only an infinity exceeds DBL_MAX; ay and ax are positive, NaN too) */
  z = tf_fast_pick(tf_fast_below(ay + ax, 0x1p-1074), 0.0, z);
  const tf_fast_mask both_infinite =
      tf_fast_below(0x1.fffffffffffffp+1023, ay) & tf_fast_below(0x1.fffffffffffffp+1023, ax);
  z = tf_fast_pick(both_infinite, 0x1.921fb54442d18p-1, z);                   /* pi / 4 */
  z = tf_fast_pick(tf_fast_negative(x), TF_FAST_PI - (z - TF_FAST_PI_LO), z); /* x < 0, -0 */
  return tf_fast_with_sign_of(z, y);
}

/* the same one value at a time, with branches */
TF_FAST_INLINE double tf_fast_atan2(double y, double x) {
  const double ay = fabs(y), ax = fabs(x);
  double z = tf_fast_atan_scalar(ay / ax);
  if (ay + ax == 0.0) z = 0.0;
  if (ay > 0x1.fffffffffffffp+1023 && ax > 0x1.fffffffffffffp+1023) z = 0x1.921fb54442d18p-1;
  if (signbit(x)) z = TF_FAST_PI - (z - TF_FAST_PI_LO);
  return tf_fast_with_sign_of(z, y);
}

/* out[i] = tf_fast_atan2(y[i], x[i]): the vector loop, in blocks */
TF_FAST_INLINE void tf_fast_atan2_array(int n, const double *y, const double *x, double *out) {
  for (int b = 0; b < n; b += TF_FAST_BLOCK) {
    const int m = n - b < TF_FAST_BLOCK ? n - b : TF_FAST_BLOCK;
    double yb[TF_FAST_BLOCK], xb[TF_FAST_BLOCK], ob[TF_FAST_BLOCK];
    for (int i = 0; i < TF_FAST_BLOCK; i++) {
      yb[i] = i < m ? y[b + i] : 1.0;
      xb[i] = i < m ? x[b + i] : 1.0;
    }
    for (int i = 0; i < TF_FAST_BLOCK; i++) ob[i] = tf_fast_atan2_branchless(yb[i], xb[i]);
    for (int i = 0; i < m; i++) out[b + i] = ob[i];
  }
}

#endif
