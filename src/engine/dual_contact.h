/* dual_contact.h — event-driven integration of a rigid body in contact with two surfaces
 * under spatial Coulomb friction (Antali 2017, chapter 3): four kinematic cases
 *   SS  slipping at both contacts: F_SS, an extended Filippov system with two codimension-2
 *       discontinuity sets Sigma_SR = {u1- = u_a = 0} and Sigma_RS = {u1+ = u_a = 0};
 *   SR  rolling at P-, slipping at P+: on Sigma_SR, the sliding vector of F_SS there
 *       (Theorem 2.17; compatibility (a) of Definition 3.2), a Filippov system in u1+;
 *   RS  the mirror case on Sigma_RS;
 *   RR  rolling at both: on Sigma_RR, Filippov's sliding vector of F_SR (2.9-2.10).
 * Everything is derived from the kernel's F_SS(x, d+, d-) with the slip directions d± given
 * (twofold/model.h tf_two_contact_ops); no contact force is computed in case RR, as the thesis
 * insists.
 *
 * Transitions, each an event located on DOPRI5's dense output (GSL Brent):
 *   SS -> SR/RS   arrival at Sigma_SR / Sigma_RS along a limit direction in its sliding
 *                 region (else the trajectory crosses it and stays SS);
 *   SR -> SS      the sliding condition of Sigma_SR fails (max R of its limit directions = 0);
 *   SR -> RR      u1+ reaches 0 in the attracting sliding region of F_SR (else u1+ crosses);
 *   RR -> SR      the rolling state acquires an alpha-trajectory of F_SR (Proposition 3.3 b:
 *                 the codim-1 sliding region of F_SR at Sigma_RR stops being attracting),
 *                 provided the departure lies in the sliding region of Sigma_SR;
 *   RR -> SS      a repelling limit direction of the double discontinuity appears (3.42-3.43:
 *                 zeros of (V+^, V-^) over (phi+, phi-) with sgn sin phi+ = sgn sin phi-,
 *                 found by a grid and 2-D Newton; Proposition 3.3 a);
 * and the mirror images for RS.  A departure where R = 0 relaxes its slip direction at a
 * rate |V'|/|h| (evolve2.h), so near a discontinuity set the slip direction is slaved to the
 * limit direction (options.slave_radius).  With both contacts slipping slowly (near Sigma_RR,
 * or a stationary X_SS of small slip) both directions are slaved to the slow manifold at
 * finite slip while the lag that leaves is below options.slave_lag (see dual_contact.c). */
#ifndef TF_DUAL_CONTACT_H
#define TF_DUAL_CONTACT_H

#include "evolve2.h"

typedef enum tf_dc_case { TF_DC_SS, TF_DC_SR, TF_DC_RS, TF_DC_RR, TF_DC_CASE_COUNT } tf_dc_case;

typedef enum tf_dc_event_kind {
  TF_DC_TO_SS,
  TF_DC_TO_SR,
  TF_DC_TO_RS,
  TF_DC_TO_RR,
  TF_DC_CROSSING, /* passed a discontinuity set without changing case */
  TF_DC_EVENT_KIND_COUNT
} tf_dc_event_kind;

const char *tf_dc_case_name(tf_dc_case c);
const char *tf_dc_event_kind_name(tf_dc_event_kind k);

typedef struct tf_dc_event {
  tf_dc_event_kind kind;
  double t;
  const double *x;
  tf_dc_case from, to;
} tf_dc_event;

typedef struct tf_dual_result {
  int status; /* tf_member_status */
  double t;
  tf_dc_case final_case;
  tf_counts work; /* the event loop's (counts.h) */
  long events;
  long counts[TF_DC_EVENT_KIND_COUNT];
  double time_in[TF_DC_CASE_COUNT]; /* time spent in each case */
  const char *failure;
} tf_dual_result;

typedef struct tf_dual tf_dual;
typedef void (*tf_dc_event_fn)(void *ctx, const tf_dc_event *ev);
typedef void (*tf_dc_step_fn)(void *ctx, const tf_dual *d, double t0, double t1);

/* NULL unless the model is a body with two contacts (its dimension is within TF_MAX_DIM:
 * model.c checks every model at setup). */
tf_dual *tf_dual_create(const tf_kernel *k, const double *params, const tf_evolve2_options *opts);
void tf_dual_destroy(tf_dual *d);
void tf_dual_set_callbacks(tf_dual *d, tf_dc_event_fn on_event, tf_dc_step_fn on_step, void *ctx);
tf_dual_result tf_dual_run(tf_dual *d, double t0, double *x, double t_end);
void tf_dual_dense(const tf_dual *d, double t, double *x);
tf_dc_case tf_dual_case(const tf_dual *d);
/* From a step callback: the run ends after this step, pending (tf_event_loop_request_stop). */
void tf_dual_request_stop(tf_dual *d);

/* Analysis at a point of Sigma_RR (for tests and figures): the Filippov tangencies of F_SR
 * (lp_sr = e1+ . F_SR(u1+ -> 0+), lm_sr) and of F_RS, and the largest R^ over the limit
 * directions of the double discontinuity (-INFINITY if there is none) with its (phi+, phi-). */
typedef struct tf_dc_rr_point {
  double lp_sr, lm_sr, lp_rs, lm_rs;
  double R_max, phi_plus, phi_minus;
  int directions;
  double F_rr[TF_MAX_DIM];
} tf_dc_rr_point;
void tf_dual_rr_analysis(tf_dual *d, double t, const double *x, tf_dc_rr_point *out);

#endif
