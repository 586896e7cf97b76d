/* dopri5_coeffs.h — the Dormand–Prince 5(4) coefficients, one copy for the scalar stepper
 * (dopri5.c) and the lanes (flow_lanes.c), which must sum them in the same order. */
#ifndef TF_DOPRI5_COEFFS_H
#define TF_DOPRI5_COEFFS_H

enum { STAGES = 7 };

/* a (row-major, strictly lower, one row a line); row 6 is b (first same as last) */
// clang-format off
static const double A[STAGES * STAGES] = {
    [1 * STAGES] = 1.0 / 5,
    [2 * STAGES] = 3.0 / 40, 9.0 / 40,
    [3 * STAGES] = 44.0 / 45, -56.0 / 15, 32.0 / 9,
    [4 * STAGES] = 19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729,
    [5 * STAGES] = 9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656,
    [6 * STAGES] = 35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84,
};
// clang-format on
static const double C[STAGES] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0};
static const double E[STAGES] = {71.0 / 57600,      0.0,        -71.0 / 16695, 71.0 / 1920,
                                 -17253.0 / 339200, 22.0 / 525, -1.0 / 40};
/* Hairer's dense-output coefficients (the 4th-order extension's last term) */
static const double D[STAGES] = {-12715105075.0 / 11282082432,  0.0,
                                 87487479700.0 / 32700410799,   -10690763975.0 / 1880347072,
                                 701980252875.0 / 199316789632, -1453857185.0 / 822651844,
                                 69997945.0 / 29380423};

#endif
