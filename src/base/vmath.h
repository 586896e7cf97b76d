/* vmath.h — log and sin/cos written out in plain C over arrays, for the fast normals of
 * rng.h (integrator.normals: fast).
 *
 * Only additions, multiplications, divisions, square roots and integer operations on the
 * bits, all correctly rounded in IEEE double and compiled with -ffp-contract=off: gcc
 * vectorises the loops (AVX-512, AVX2 or SSE2, chosen at run time) and every width gives
 * the same bits, on every machine.  The values are within a few units in the last place of
 * the exact functions (tests/unit/test_rng.c measures the bound against long double). */
#ifndef TF_VMATH_H
#define TF_VMATH_H

#include <stddef.h>

/* out[i] = log(x[i]) for positive normal finite x[i] (fdlibm's reduction and polynomial). */
void tf_vmath_log(size_t n, const double *x, double *out);

/* s[i] = sin(2 pi u[i]), c[i] = cos(2 pi u[i]) for u[i] in [0, 1]: the reduction to
 * |r| <= 1/8 of a turn, u - q/4, is exact, and the Taylor polynomials in r are taken to
 * terms below 1e-18. */
void tf_vmath_sincos_turn(size_t n, const double *u, double *s, double *c);

#endif
