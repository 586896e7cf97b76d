/* intersection.h — what a Filippov trajectory does where two switching surfaces meet.
 *
 * A Filippov kernel with a second switching function g (twofold/model.h,
 * tf_filippov_ops.secondary_switching) has, inside Sigma = {h = 0}, the intersection I = {h = 0, g
 * = 0}: a codimension-2 set where the field depends on the direction from which (h, g) approaches
 * zero (the wheel's full stick: its tyre law depends on the slip direction through
 * psi(arctan|h/g|)).  This is the extended Filippov setting of Antali (2017, ch. 2), with one
 * difference: the limit field F*(phi) also jumps where the approach runs along Sigma, since the law
 * jumps across h = 0. At a point x0 of I, in the orthonormal frame n1 = grad h/|grad h|, n2 = grad
 * g made orthogonal to n1, with n(phi) = cos(phi) n1 + sin(phi) n2:
 *   - in the sectors h > 0 (|phi| < pi/2) and h < 0, F*(phi) is the slip field's limit, taken
 *     at x0 + eta n(phi) with eta ~ 1e-8 relative; R(phi) = <F*, n(phi)>, V(phi) =
 *     <F*, n(phi + pi/2)> (eq 2.24); limit directions are the roots of V, attracting where
 *     R < 0 and repelling where R > 0 (Definition 2.14);
 *   - along Sigma (phi = pi/2: g > 0, phi = -pi/2: g < 0) the motion is Filippov's on Sigma:
 *     where Sigma slides there, the sliding field is tangent to Sigma and its rate along n2
 *     is the radial rate of a limit direction; where Sigma is crossing there is none.
 * The verdict is Theorem 2.15's:
 *   rest       every limit direction attracting (the sliding region of I) and the sliding
 *              vector — the combination of limit fields tangent to I, unique where F* spans a
 *              plane (Theorem 2.17) — vanishes: x0 is an equilibrium and the trajectory stays;
 *   slide      the same with a nonzero sliding vector: the trajectory moves along I with it
 *              until a limit direction turns repelling (evolve.h);
 *   pass       attracting and exactly one repelling direction (the crossing region), which
 *              is neither along escaping sliding nor a fan: the trajectory leaves along it;
 *   choice     several repelling directions, or one along Sigma where Sigma escapes, or one
 *              that is a fan (V'/R > 0: trajectories leave I tangent to it and spread, a
 *              continuum of departures): the departure is a nondeterministic choice.  A
 *              direction along escaping sliding is a continuum in itself (slide for a while,
 *              then detach to either side), as at a two-fold; the caller chooses which
 *              departure (evolve.h); from a fan the engine leaves along its ray;
 *   undefined  anything the theory does not settle here: no limit direction (spiral), a
 *              neutral one (R = 0), a sliding region whose sliding vector is missing or not
 *              unique.  The member stops with status codim2 and the state is logged.
 * Also reported where no direction repels: whether 0 is inside the convex hull of the normal
 * parts of F*, i.e. whether Filippov's inclusion admits rest at x0. */
#ifndef TF_INTERSECTION_H
#define TF_INTERSECTION_H

#include <stdbool.h>

#include "filippov.h"
#include "kernel.h"
#include "smooth.h"

enum { TF_MEET_MAX_DIRECTIONS = 16 };

typedef enum tf_meet_verdict {
  TF_MEET_REST,
  TF_MEET_SLIDE,
  TF_MEET_PASS,
  TF_MEET_CHOICE,
  TF_MEET_UNDEFINED
} tf_meet_verdict;

const char *tf_meet_verdict_name(tf_meet_verdict v);

typedef struct tf_meet_direction {
  double phi;     /* in the frame (n1, n2) */
  double R;       /* radial rate: < 0 attracting, > 0 repelling */
  int side;       /* +1: into h > 0, -1: into h < 0, 0: along Sigma */
  bool escaping;  /* along Sigma where it escapes: a continuum of departures (below) */
  double angular; /* V'(phi) / R(phi) (0 along Sigma): nearby trajectories make an angle
                     delta ~ rho^angular with the direction, so where it is > 0 a whole fan of
                     them meets I tangent to it (a repelling fan: many departures) */
  bool fan;       /* repelling with angular > 0 */
} tf_meet_direction;

typedef struct tf_meet {
  tf_meet_verdict verdict;
  const char *reason; /* why undefined; NULL otherwise */
  int model_code;     /* undefined because the model refused its slip field there: its code */
  int count, repelling;
  tf_meet_direction dir[TF_MEET_MAX_DIRECTIONS];
  bool rest_admissible;       /* 0 in the hull of the normal parts of F* (tested only where no
                                 direction repels: the rest verdict needs it) */
  double sliding[TF_MAX_DIM]; /* the sliding vector on I (NaN if none) */
  double n1[TF_MAX_DIM], n2[TF_MAX_DIM];
} tf_meet;

/* Distance of x from I to first order: |(h/|grad h|, g/|grad g|)|. */
double tf_meet_distance(const tf_kernel *k, const double *p, const double *x);

/* Newton onto I (min-norm corrections along both gradients). */
void tf_meet_project(const tf_kernel *k, const double *p, double *x);

/* The analysis at x (a point of I). */
void tf_meet_classify(const tf_kernel *k, const double *p, double t, const double *x, tf_meet *out);

/* Theorem 2.17's sliding vector at x (a point of I) into Fs: the field of motion along I, NaN
 * where it is not unique or not determined.  Returns 0, or the model's code where it refused
 * the slip field in a direction the construction samples (Fs is NaN then too). */
int tf_meet_sliding_vector(const tf_kernel *k, const double *p, double t, const double *x,
                           double *Fs);

/* The state a distance eta from x along direction `which` of m (on Sigma for a direction
 * along it), and the side it points to (+1: h > 0, -1: h < 0, 0: along Sigma). */
void tf_meet_departure(const tf_kernel *k, const double *p, const tf_meet *m, int which, double eta,
                       double *x, int *side);

/* An arrival whose verdict is choice, as a departure rule sees it (intersection_policy.h). */
typedef struct tf_meet_arrival {
  const tf_kernel *k;
  const double *p;
  double t;
  const double *x;  /* the point of I */
  const tf_meet *m; /* the analysis there */
  double phi_in;    /* the direction it arrived along (tf_meet_arrival_direction) */
} tf_meet_arrival;

/* The departure the regularised system selects (sign(h) replaced by the sigmoid of `law`, eps ->
 * 0) for an arrival at x along the limit direction phi_in of m (an attracting direction, or
 * +-pi/2 for sticking along Sigma): an index into m->dir (a repelling direction), or -1 where
 * the limit does not settle.  In the blow-up (h, g) = eps z about x the smoothed field is, to
 * leading order, the autonomous planar field
 *   z' = P [(1 + Lambda(|grad h| z1)) / 2 slip(+1) + (1 - Lambda) / 2 slip(-1)](direction z),
 * independent of eps; the arriving trajectory enters it from infinity along phi_in, and where
 * it leaves to (|h| / eps -> infinity on one side: slip there; g / eps -> infinity at bounded
 * h / eps: the sticking flow along Sigma) is the eps -> 0 departure.  The entry radius stands
 * in for 1 / eps: the verdict is taken where entries at 1e2 and 1e3 (else 1e3 and 1e4) agree. */
int tf_meet_regularised(const tf_kernel *k, const double *p, double t, const double *x,
                        const tf_meet *m, double phi_in, const tf_smoothing *law);

/* The limit direction of m along which a trajectory in mode `from` (-1, 0 sliding, +1)
 * arrives: sliding on the side g_sign of I, +-pi/2; from slip, the attracting direction of
 * that sector, a fan (angular > 0: the directions that generic trajectories arrive along)
 * first, the one closest in angle to `before` (the arrival state before projection onto I)
 * among equals.  NAN if m has none. */
double tf_meet_arrival_direction(const tf_meet *m, int from, double g_sign, const double *x,
                                 const double *before, size_t n);

#endif
