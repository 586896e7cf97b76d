/* rosenbrock.h — the Rosenbrock types' coefficients (rosenbrock.c), for the order-condition test.
 *
 * Hairer & Wanner II, (7.17)-(7.18), in the variables u_i = sum_j gamma_ij k_j of their codes:
 *
 *   (I / (h gamma) - J) u_i = f(t + alpha_i h, x + sum_{j<i} a_ij u_j) + sum_{j<i} (c_ij / h) u_j
 *                             + h gamma_i df/dt
 *   x1 = x + sum_i m_i u_i,  error estimate sum_i e_i u_i
 *
 * with J = df/dx and df/dt at (t, x), one LU factorisation per step and no Newton iteration. */
#ifndef TF_ROSENBROCK_H
#define TF_ROSENBROCK_H

#include <stdbool.h>

#include "ode.h"
#include "stepper_type.h"

enum { TF_ROS_MAX_STAGES = 6, TF_ROS_MAX_DIM = 16 };

typedef struct tf_ros_tableau {
  int stages;
  double gamma;              /* the diagonal gamma_ii */
  const double *a, *c;       /* stages x stages, row-major, strictly lower */
  const double *alpha, *gam; /* stage times alpha_i; gamma_i = sum_{j<=i} gamma_ij */
  const double *m, *e;       /* solution weights; e = m minus the embedded weights */
  const bool *same_field;    /* stage i's field is stage i-1's (same point) */
  const double *dense;       /* 2 x stages (Hairer's d2j, d3j) or NULL: cubic Hermite */
  int order, embedded_order; /* claimed; tested by tests/unit/test_rosenbrock.c */
} tf_ros_tableau;

/* RODAS4's continuous extension at theta th of one component: x0 the step's start, dx its
 * increment, d2 and d3 the sums of the stages with the tableau's dense rows. */
static inline double tf_ros_dense_value(double x0, double dx, double d2, double d3, double th) {
  return x0 + th * (dx + (1.0 - th) * (d2 + th * d3));
}

/* Gustafsson's predictive step control after an accepted step h with error log_err (the
 * controller's memory, rodas.f's PRED), given the step h_new the plain controller proposes,
 * the step before it h_acc (0: none) with its log_err_acc, and whether the step needed a
 * rejection: the step to take next (fast: integrator.controller_math fast's exp, as the
 * controller's). */
double tf_ros_predict(const tf_rk_controller *c, bool fast, double h_new, double h, double log_err,
                      double h_acc, double log_err_acc, bool rejected);

/* The tableau of a Rosenbrock type, or NULL for any other type. */
const tf_ros_tableau *tf_rosenbrock_tableau(const tf_stepper_type *type);

/* LU factorisation with partial pivoting of the n x n row-major matrix m in place (n <=
 * TF_ROS_MAX_DIM; the diagonal holds the reciprocals of U's); false if a pivot is zero or not
 * finite. */
bool tf_ros_lu_factor(int n, double *m, int *piv);
/* Solves (LU) y = b in place of b. */
void tf_ros_lu_solve(int n, const double *lu, const int *piv, double *b);

#endif
