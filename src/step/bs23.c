/* bs23.c — Bogacki & Shampine's 3(2) pair (Appl. Math. Lett. 2, 1989; MATLAB's ode23): three
 * new evaluations a step (first same as last), an error estimate of order 2, and the cubic
 * Hermite interpolant through the step's ends as its 3rd-order continuous extension.  For
 * loose tolerances and for checking the step driver with a pair given as data only. */
#include "stepper_type.h"

enum { STAGES = 4 };

/* one row of the tableau a line */
// clang-format off
static const double A[STAGES * STAGES] = {
    0,        0,       0,       0,
    1.0 / 2,  0,       0,       0,
    0,        3.0 / 4, 0,       0,
    2.0 / 9,  1.0 / 3, 4.0 / 9, 0,
};
static const double C[STAGES] = {0, 1.0 / 2, 3.0 / 4, 1};
/* b minus the 2nd-order weights (7/24, 1/4, 1/3, 1/8) */
static const double E[STAGES] = {2.0 / 9 - 7.0 / 24, 1.0 / 3 - 1.0 / 4,
                                 4.0 / 9 - 1.0 / 3, 0 - 1.0 / 8};
/* the Hermite cubic x0 + h theta f0 + theta^2 (3 dx - h (2 f0 + f1)) + theta^3 (h (f0 + f1) - 2 dx)
 * with dx = h sum b_j k_j and f1 = k_4: weights of theta, theta^2, theta^3 for each k_j */
static const double DENSE[STAGES * 3] = {
    1, -4.0 / 3,  5.0 / 9,
    0,  1,       -2.0 / 3,
    0,  4.0 / 3, -8.0 / 9,
    0, -1,        1,
};
// clang-format on

static const tf_rk_tableau tableau = {.stages = STAGES,
                                      .dense_degree = 3,
                                      .a = A,
                                      .b = A + 3 * STAGES,
                                      .c = C,
                                      .e = E,
                                      .dense = DENSE};

const tf_stepper_type tf_stepper_bs23 = {
    .name = "bs23",
    .order = 3,
    .error_order = 2,
    .evals_per_step = 3,
    .samples_per_step = 4,
    .fsal_stage = 3,
    .control = {.safety = 0.9,
                .expo1 = 1.0 / 3,
                .beta = 0.0,
                .fac_lo = 1.0 / 5,
                .fac_hi = 5.0,
                .start_order = 3.0},
    .tableau = &tableau,
};
