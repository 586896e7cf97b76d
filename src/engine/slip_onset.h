/* slip_onset.h — does a body rolling at both contacts start to slip, when, and at which
 * contact; and the largest initial condition (an oscillation amplitude, say) for which it
 * keeps rolling (Antali 2017, ch. 3 and §5.4).
 *
 * Why a file of its own: in dual-point rolling the contact forces are undetermined, so the
 * condition of slipping cannot be read off a force; it is the first departure from case RR
 * of the dual-contact engine (Proposition 3.3: an alpha-trajectory of F_SR, F_RS or F_SS
 * appears).  "Maximum amplitude without slipping" is then a question about whole runs: the
 * largest value of a scalar that places the start on Sigma_RR such that no departure
 * happens before t_end.  That is found here by bisection on simulations, so it needs no
 * closed form and serves any two-contact kernel (twofold/model.h tf_two_contact_ops). */
#ifndef TF_SLIP_ONSET_H
#define TF_SLIP_ONSET_H

#include <stdbool.h>

#include "dual_contact.h"

typedef struct tf_slip_onset {
  int status;           /* tf_member_status of the run (ok also when it stopped at the departure) */
  bool slipped;         /* left dual rolling before t_end */
  double t;             /* time of the departure (NaN if none) */
  tf_dc_case to;        /* the case it left for: SS (both contacts), SR (P+), RS (P-) */
  double x[TF_MAX_DIM]; /* state at the departure (at t_end if none) */
  long steps, rhs_evals;
  const char *failure;
} tf_slip_onset;

/* Runs the dual-contact engine from x0 (which must roll at both contacts: its slips within
 * opts->sigma_tol of zero) until the first departure from case RR or t_end, and stops
 * there.  Returns 0, or -1 if x0 is not on Sigma_RR or the engine cannot take the kernel. */
int tf_slip_onset_run(const tf_kernel *k, const double *params, const tf_evolve2_options *opts,
                      double t0, const double *x0, double t_end, tf_slip_onset *out);

/* The start for value s of the bisected quantity (e.g. x0 on the rolling ellipse of
 * amplitude s); fills x (kernel dim values). */
typedef void (*tf_slip_start_fn)(void *ctx, double s, double *x);

typedef struct tf_slip_threshold {
  double low, high;     /* final bracket: rolls throughout at low, slips at high */
  double threshold;     /* their midpoint */
  tf_slip_onset above;  /* the run at `high` (where slipping starts, which contact) */
  int iterations, runs; /* bisection steps, simulations */
  const char *failure;  /* NULL, or why there is no threshold (bracket not valid, run failed) */
  bool interrupted;     /* stopped before a bisection run (checkpoint.h's stop point) */
} tf_slip_threshold;

/* Bisection on s in [low, high] until high - low <= rel_tol * high + abs_tol: requires a run
 * that keeps rolling at `low` and one that slips at `high`.  Returns 0, or -1 with
 * out->failure set. */
int tf_slip_threshold_find(const tf_kernel *k, const double *params, const tf_evolve2_options *opts,
                           double t0, double t_end, tf_slip_start_fn start, void *ctx, double low,
                           double high, double rel_tol, double abs_tol, tf_slip_threshold *out);

#endif
