/* heun_euler.c — the Heun–Euler 2(1) pair: Heun's second-order method with explicit Euler as
 * its embedded first-order solution, two evaluations a step, and the quadratic continuous
 * extension b_1(theta) = theta - theta^2 / 2, b_2(theta) = theta^2 / 2 (order 2). */
#include "stepper_type.h"

enum { STAGES = 2 };

// clang-format off
static const double A[STAGES * STAGES] = {
    0, 0,
    1, 0,
};
static const double B[STAGES] = {1.0 / 2, 1.0 / 2};
static const double C[STAGES] = {0, 1};
/* b minus Euler's weights (1, 0) */
static const double E[STAGES] = {1.0 / 2 - 1, 1.0 / 2};
/* weights of theta and theta^2 for each k_j */
static const double DENSE[STAGES * 2] = {
    1, -1.0 / 2,
    0,  1.0 / 2,
};
// clang-format on

static const tf_rk_tableau tableau = {
    .stages = STAGES, .dense_degree = 2, .a = A, .b = B, .c = C, .e = E, .dense = DENSE};

const tf_stepper_type tf_stepper_heun_euler = {
    .name = "heun_euler",
    .order = 2,
    .error_order = 1,
    .evals_per_step = 2,
    .samples_per_step = 4,
    .fsal_stage = STAGES,
    .control = {.safety = 0.9,
                .expo1 = 1.0 / 2,
                .beta = 0.0,
                .fac_lo = 1.0 / 5,
                .fac_hi = 5.0,
                .start_order = 2.0},
    .tableau = &tableau,
};
