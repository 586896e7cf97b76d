/* lyapunov.h — Lyapunov spectra by the method of Benettin et al. (1980).
 *
 * Flows: the variational equations dQ/dt = J(x) Q are integrated with the trajectory by
 * DOPRI5 as one augmented system (so the tangent vectors see the same adaptive steps), and
 * Q is re-orthonormalised by a Householder QR (GSL) every `interval` time units; the
 * exponents are the time averages of log |R_ii|.  Maps: Q <- J(x_k) Q every step, QR every
 * `interval` steps.  J comes from the kernel, or from central differences.  The tangent vectors
 * start from one fixed generic frame (tf_event_loop_generic_frame: a coordinate frame can miss
 * a direction for ever) and run, re-orthonormalised, through the transient too, whose log
 * growth is dropped: averaging starts from a frame already aligned with the flow, so no
 * exponent carries the start frame's alignment, about ln(c) / duration.  The time is cut
 * into blocks of one computation: the tangent vectors run on across block boundaries (on
 * every route; the event-driven engines hand their frame from block to block, event_loop.h),
 * so the blocks' sum is the estimate of the whole run, whatever their number, and the spread
 * of the block averages gives its error (their standard error).  Alongside, the
 * time average of tr J (flows) or log |det J| (maps) is accumulated: with all exponents it
 * must equal their sum, an independent check of the computation. */
#ifndef TF_LYAPUNOV_H
#define TF_LYAPUNOV_H

#include <stdbool.h>

#include "config.h"
#include "kernel.h"
#include "max_dim.h"
#include "ode.h"

typedef struct tf_lyapunov_options {
  int exponents;    /* how many (1..dim) */
  double transient; /* time (flows) or iterations (maps) before averaging: the tangent vectors
                       run through it, their growth dropped */
  double duration;  /* averaging time (flows) or iterations (maps) */
  double interval;  /* between re-orthonormalisations: time (flows) or iterations (maps) */
  int blocks;       /* for the error estimate, >= 2 */
  bool finite_differences; /* ignore the kernel's Jacobian */
  /* Where a run may stop between or inside blocks (checkpoint.h; NULL: never).
   * The engines of event-driven runs take theirs from the integrator options (ode.h). */
  struct tf_stop_token *stop;
  /* A flow or an impact kernel with a section reset (poincare.action reset), run on the
   * impact engine: its options, the section and reset included (NULL: none) */
  const struct tf_impact_options *events;
} tf_lyapunov_options;

typedef struct tf_lyapunov_result {
  double spectrum[TF_MAX_DIM]; /* descending */
  double error[TF_MAX_DIM];    /* standard error from the block spread */
  double kaplan_yorke;
  double volume_rate; /* time average of tr J (flows) or log |det J| (maps) */
  double *blocks;     /* blocks x exponents block averages (caller frees) */
  double *running;    /* blocks x exponents running averages after each block (caller frees) */
  double final_state[TF_MAX_DIM];
  long steps;
  int segments; /* Filippov: deterministic segments (two-fold passages + blocks) */
  /* Filippov with the whole spectrum: directions the flow collapsed (an arrival in sliding
   * maps every tangent vector into T Sigma, so the time-T map is singular); their exponents
   * are -inf, in the blocks from the first arrival on */
  int collapsed;
  /* a failed status the engine can explain (a limit of the method, not of the trajectory);
   * empty otherwise.  An array, not a pointer: the result is broadcast as bytes */
  char why[256];
  int status;       /* tf_member_status */
  int blocks_done;  /* blocks finished (all of them unless interrupted) */
  bool interrupted; /* stopped at a block boundary (checkpoint.h's stop point) */
} tf_lyapunov_result;

int tf_lyapunov_flow(const tf_kernel *k, const double *p, const double *x0,
                     const tf_ode_options *ode, const tf_lyapunov_options *o, tf_lyapunov_result *r,
                     tf_error *err);
/* A Filippov kernel run smoothed (smooth.h: sign(h) -> Lambda_eps(h)): the same Benettin
 * computation on the smoothed field, with its chain-rule Jacobian where the smoothing has one
 * (else central differences).  smoothing NULL is tf_lyapunov_flow.  Explicit DOPRI5 carries the
 * variational system, so very small eps (stiff) costs many steps. */
struct tf_smoothing;
int tf_lyapunov_smoothed(const tf_kernel *k, const double *p, const struct tf_smoothing *smoothing,
                         const double *x0, const tf_ode_options *ode, const tf_lyapunov_options *o,
                         tf_lyapunov_result *r, tf_error *err);
/* Filippov flows, event-driven: tangent vectors cross events through saltation matrices
 * (saltation false: plain continuation, which is wrong, for demonstration).  The duration
 * is cut into blocks run one after the other, each continuing the tangent vectors of the one
 * before; each block's exponents come from tf_evolve_run, and segments broken by nondeterministic
 * two-folds are counted in `segments` (the exponent through the singularity is not defined). */
int tf_lyapunov_filippov(const tf_kernel *k, const double *p, const double *x0,
                         const tf_ode_options *ode, const tf_lyapunov_options *o, bool saltation,
                         tf_lyapunov_result *r, tf_error *err);
int tf_lyapunov_map(const tf_kernel *k, const double *p, const double *x0,
                    const tf_lyapunov_options *o, tf_lyapunov_result *r, tf_error *err);
/* Codimension-2 kernels (2-D slip), event-driven on evolve2.c: tangent vectors pass the
 * arrivals at Sigma through its saltation matrices; blocks as for Filippov flows.  Directions
 * off Sigma collapse at an arrival, so while a body rolls their exponents are very negative
 * (bounded only by the floor log 1e-300 of one QR).  `co` carries the codim2.* options; its
 * exponents and interval are taken from `o`.  Bodies with two contacts have no tangent
 * dynamics here and are refused. */
struct tf_contact_options;
int tf_lyapunov_contact(const tf_kernel *k, const double *p, const double *x0,
                        const struct tf_contact_options *co, const tf_lyapunov_options *o,
                        tf_lyapunov_result *r, tf_error *err);

/* Several switching functions (switches.h), through the saltation at every change of mode; the
 * k smallest exponents are -inf once k contacts have stuck at once. */
int tf_lyapunov_switches(const tf_kernel *k, const double *p, const double *x0,
                         const tf_ode_options *ode, const tf_lyapunov_options *o,
                         tf_lyapunov_result *r, tf_error *err);
/* An impact kernel (impact.h): tangent vectors across every impact by the saltation matrix of
 * the reset, a new segment at every chattering completion; impact.* defaults, or o->events
 * (a flow too: its section's reset crossed by its saltation matrix likewise). */
int tf_lyapunov_impact(const tf_kernel *k, const double *p, const double *x0,
                       const tf_ode_options *ode, const tf_lyapunov_options *o,
                       tf_lyapunov_result *r, tf_error *err);

/* True if a Filippov kernel runs event-driven with these parameters (false: the kernel's
 * smoothed flow, e.g. the stick-slip oscillator with eps > 0): its route's
 * lyapunov_segments (routes.h).  A scan over the smoothing parameter crosses from one to the
 * other. */
bool tf_lyapunov_is_filippov(const tf_kernel *k, const double *p);
/* The spectrum of any deterministic kernel by its route's way (routes.h): maps by their
 * derivative, Filippov kernels event-driven (tf_lyapunov_is_filippov), other flows by the
 * variational equations; with o->events, flows and impact kernels on the impact engine. */
int tf_lyapunov_any(const tf_kernel *k, const double *p, const double *x0,
                    const tf_ode_options *ode, const tf_lyapunov_options *o, bool saltation,
                    tf_lyapunov_result *r, tf_error *err);

/* lyapunov.exponents (default: all), transient, duration, interval, blocks, jacobian
 * (auto | finite-differences); defaults differ for flows (time) and maps (iterations). */
int tf_lyapunov_options_from_config(tf_config *cfg, const tf_kernel *k, tf_lyapunov_options *o,
                                    tf_error *err);

/* Kaplan–Yorke dimension of a descending spectrum. */
double tf_kaplan_yorke(const double *spectrum, int n);

#endif
