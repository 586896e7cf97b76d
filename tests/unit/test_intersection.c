/* test_intersection.c — the analysis at an intersection of switching surfaces (intersection.c)
 * and the engine's arrivals there (evolve.c), against closed forms, also run under the
 * sanitizers:
 *   Antali's Example 2.9 written as a Filippov kernel with h = x1, g = x2: at (0, 0, x3) the
 *     limit directions are phi = 0 (R = x3 - 1) and pi (R = -x3 - 1), so x3 = 2 passes into
 *     h > 0, x3 = 0 rests (every direction attracts and F_s = 0), x3 = 1/2 attracts from all
 *     directions and slides along the intersection with F_s = (0, 0, -2 x3) (eq 2.35);
 *   a flow that reaches the intersection from slip: the arrival is an event at the time of the
 *     closed form, the member comes to rest (x3 frozen at 0) and stays there;
 *   with x3' = x3 instead (F_s = (0, 0, x3)), the member slides along the intersection while
 *     x3 grows as e^t, and leaves along phi = 0 where x3 = 1 makes that direction repelling
 *     (R = x3 - 1), at the closed-form time;
 *   a conewise field with one repelling direction phi = 0 whose angular rate V'/R is chosen:
 *     V'/R < 0 is a pass, V'/R > 0 a fan of departures (trajectories leave tangent to it and
 *     spread as rho^(V'/R)), which is nondeterministic: choice, never pass;
 *   a departure along escaping sliding (a conewise field whose Sigma escapes on both rays
 *     next to I): the engine puts the state at the detach point at once, so its trajectory is
 *     the Filippov one (slide at speed 1/2 to the detach point, then slip) shifted in time by
 *     detach distance / 1/2 — checked to 1e-9 — and differs from it by at most
 *     max |F| times that shift (intersection.escape_distance bounds the effect);
 *   the wheel at full stick: the analysis through the kernel's slip_lanes (the scans of F*
 *     side by side) is the one through slip alone, bit for bit;
 *   a model that refuses its field where x2 < 0: the analysis at I gives no verdict but the
 *     model's code (one by one and side by side), and a member reaching I fails there. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "evolve.h"
#include "intersection.h"
#include "kernel.h"
#include "status.h"

/* F = (-x1/rho + x3, -x2/rho, F3) with F3 = -x1/rho - x3 (Antali 2017, eq 2.19), 0 (x3 a
 * parameter of the flow) or x3 (growing along the intersection). */
static enum { ANTALI, FROZEN, GROWING } third = ANTALI;

static double h_fn(const double *x, const double *p, double *grad) {
  (void)p;
  if (grad) grad[0] = 1, grad[1] = 0, grad[2] = 0;
  return x[0];
}

static double g_fn(const double *x, const double *p, double *grad) {
  (void)p;
  if (grad) grad[0] = 0, grad[1] = 1, grad[2] = 0;
  return x[1];
}

/* refuse_below: the model refuses its field where x2 < 0 (code 5, outside its domain) */
static bool refuse_below;
enum { OUTSIDE = 5 };

static int slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)t, (void)side, (void)p;
  if (refuse_below && x[1] < 0) return OUTSIDE;
  const double rho = hypot(x[0], x[1]);
  dx[0] = -x[0] / rho + x[2];
  dx[1] = -x[1] / rho;
  dx[2] = third == FROZEN ? 0.0 : third == GROWING ? x[2] : -x[0] / rho - x[2];
  return 0;
}

static const tf_filippov_ops example_ops = {TF_OPS_SIZE(tf_filippov_ops), .switching = h_fn,
                                            .slip = slip, .secondary_switching = g_fn};
static const tf_model_def example = {TF_MODEL_HEAD, .name = "example-2.9",
                                     .kind = TF_MODEL_FILIPPOV, .dim = 3, .filippov = &example_ops};

static void classify_cases(void) {
  tf_meet m;
  const double x_pass[3] = {0, 0, 2};
  tf_meet_classify(&example, NULL, 0, x_pass, &m);
  CHECK(m.verdict == TF_MEET_PASS, "x3 = 2: %s", tf_meet_verdict_name(m.verdict));
  CHECK(m.count == 2 && m.repelling == 1, "%d directions, %d repelling", m.count, m.repelling);
  for (int i = 0; i < m.count; i++) {
    const bool ahead = fabs(m.dir[i].phi) < 1e-6;
    CHECK(ahead || fabs(m.dir[i].phi - M_PI) < 1e-6, "direction at %g", m.dir[i].phi);
    CHECK_CLOSE(m.dir[i].R, ahead ? 2 - 1 : -2 - 1, 1e-6, "R of Example 2.16");
    CHECK(m.dir[i].side == (ahead ? 1 : -1), "side %d", m.dir[i].side);
  }

  const double x_rest[3] = {0, 0, 0};
  tf_meet_classify(&example, NULL, 0, x_rest, &m);
  CHECK(m.verdict == TF_MEET_REST, "x3 = 0: %s (%s)", tf_meet_verdict_name(m.verdict),
        m.reason ? m.reason : "");
  CHECK(m.rest_admissible, "x3 = 0: 0 is inside the unit circle of limit fields");
  for (int i = 0; i < 3; i++) CHECK(fabs(m.sliding[i]) < 1e-7, "F_s[%d] = %g", i, m.sliding[i]);

  const double x_slide[3] = {0, 0, 0.5};
  tf_meet_classify(&example, NULL, 0, x_slide, &m);
  CHECK(m.verdict == TF_MEET_SLIDE, "x3 = 1/2: %s (%s)", tf_meet_verdict_name(m.verdict),
        m.reason ? m.reason : "");
  CHECK_CLOSE(m.sliding[2], -1.0, 1e-6, "F_s = (0, 0, -2 x3) (eq 2.35)");
  CHECK(m.rest_admissible, "x3 = 1/2: the circle about (1/2, 0) still holds 0");

  const double x_far[3] = {0, 0, 0.5};
  double y[3];
  memcpy(y, x_far, sizeof y);
  y[0] = 3e-9, y[1] = -4e-9;
  CHECK_CLOSE(tf_meet_distance(&example, NULL, y), 5e-9, 1e-20, "distance to the intersection");
  tf_meet_project(&example, NULL, y);
  CHECK(y[0] == 0 && y[1] == 0 && y[2] == 0.5, "projection (%g, %g, %g)", y[0], y[1], y[2]);
}

/* In h > 0: F = R n + V n_perp with R = 2 cos(phi) - 3/2 and V = sin(phi) (c cos(phi) - 1), so
 * phi = 0 is a limit direction with R = 1/2 and V'(0) / R(0) = 2 (c - 1); for c > 1 also
 * cos(phi) = 1/c are (attracting: R = 2/c - 3/2 < 0 for c > 4/3).  In h < 0: F = (1, 0), which
 * arrives along phi = pi (R = -1).  Sigma is crossed upwards on both of its rays (V(+-pi/2) =
 * -+1), so no direction runs along it. */
static double fan_c;

static int fan_slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)t, (void)p;
  const double rho = hypot(x[0], x[1]), c = x[0] / rho, s = x[1] / rho;
  if (side < 0 || rho == 0) {
    dx[0] = 1, dx[1] = 0, dx[2] = 0;
    return 0;
  }
  const double R = 2 * c - 1.5, V = s * (fan_c * c - 1);
  dx[0] = R * c - V * s;
  dx[1] = R * s + V * c;
  dx[2] = 0;
  return 0;
}

static const tf_filippov_ops fan_ops = {TF_OPS_SIZE(tf_filippov_ops), .switching = h_fn,
                                        .slip = fan_slip, .secondary_switching = g_fn};
static const tf_model_def fan_field = {TF_MODEL_HEAD, .name = "conewise-fan",
                                       .kind = TF_MODEL_FILIPPOV, .dim = 3, .filippov = &fan_ops};

static void fan_case(double c, tf_meet_verdict expected) {
  fan_c = c;
  tf_meet m;
  const double x[3] = {0, 0, 0.25};
  tf_meet_classify(&fan_field, NULL, 0, x, &m);
  int ahead = -1;
  for (int i = 0; i < m.count; i++)
    if (fabs(m.dir[i].phi) < 1e-6) ahead = i;
  CHECK(ahead >= 0 && m.repelling == 1, "c = %g: phi = 0 found, %d repelling", c, m.repelling);
  if (ahead < 0) return;
  CHECK_CLOSE(m.dir[ahead].R, 0.5, 1e-7, "R(0)");
  CHECK_CLOSE(m.dir[ahead].angular, 2 * (c - 1), 1e-5, "V'(0)/R(0) = 2 (c - 1)");
  CHECK(m.dir[ahead].fan == (c > 1), "c = %g: fan flag %d", c, m.dir[ahead].fan);
  CHECK(m.verdict == expected, "c = %g: verdict %s, expected %s", c,
        tf_meet_verdict_name(m.verdict), tf_meet_verdict_name(expected));
}

typedef struct log_t {
  int n, kind[16];
  double t[16];
  int to[16];
} log_t;

static void record(void *ctx, const tf_event *ev) {
  log_t *l = ctx;
  if (l->n < 16) l->kind[l->n] = ev->kind, l->t[l->n] = ev->t, l->to[l->n] = ev->to, l->n++;
}

/* An engine on the example at tolerance rtol that logs its events into l. */
static tf_evolve *logging_engine(double rtol, log_t *l) {
  tf_evolve_options o = tf_evolve_default_options();
  o.ode.rtol = rtol, o.ode.atol = rtol / 100;
  tf_evolve *e = tf_evolve_create(&example, NULL, &o);
  tf_evolve_set_callbacks(e, record, NULL, l);
  return e;
}

/* With x3 frozen, from (a, 0, x3) in slip+ (a > 0): x1' = -1 + x3 along the axis, so the
 * intersection is reached at t = a / (1 - x3) for x3 < 1, at x1 = x2 = 0. */
static void arrival_case(double x3, tf_event_kind expected, const char *what) {
  third = FROZEN;
  log_t l = {0};
  tf_evolve *e = logging_engine(1e-10, &l);
  const double a = 0.3;
  double x[3] = {a, 0, x3};
  const tf_evolve_result r = tf_evolve_run(e, 0, x, 2.0, 0);
  CHECK(r.status == TF_MEMBER_OK, "%s: status %d", what, r.status);
  CHECK(l.n >= 1 && l.kind[0] == (int)expected, "%s: first event %s", what,
        l.n ? tf_event_kind_name(l.kind[0]) : "none");
  if (l.n >= 1) CHECK_CLOSE(l.t[0], a / (1 - x3), 1e-9, what);
  if (expected == TF_EVENT_MEET_REST) {
    CHECK(l.n == 1 && r.mode == TF_MODE_REST, "%s: %d events, final mode %s", what, l.n,
          tf_mode_name(r.mode));
    CHECK(x[0] == 0 && x[1] == 0 && x[2] == x3, "%s: at rest at (%g, %g, %g)", what, x[0], x[1],
          x[2]);
    CHECK(r.t == 2.0, "%s: run ends at t = %g", what, r.t);
  }
  tf_evolve_destroy(e);
  third = ANTALI;
}

/* x3' = x3 along the intersection: from (a, 0, x3_0) in slip+ (x1' = -1 + x3, x3' = x3) the
 * arrival is where x1 = a - t + x3_0 (e^t - 1) = 0; then x3 = x3(t_a) e^(t - t_a) slides until
 * it reaches 1, where phi = 0 turns repelling and the member leaves into h > 0. */
static void slide_and_leave(void) {
  third = GROWING;
  log_t l = {0};
  tf_evolve *e = logging_engine(1e-11, &l);
  const double a = 0.1, x30 = 0.3;
  double ta = 0.1;
  for (int it = 0; it < 50; it++) ta -= (a - ta + x30 * (exp(ta) - 1)) / (-1 + x30 * exp(ta));
  const double t_leave = ta - log(x30 * exp(ta));
  double x[3] = {a, 0, x30};
  const tf_evolve_result r = tf_evolve_run(e, 0, x, t_leave + 0.2, 0);
  CHECK(r.status == TF_MEMBER_OK, "slide: status %d", r.status);
  CHECK(l.n >= 2 && l.kind[0] == TF_EVENT_MEET_SLIDE && l.to[0] == TF_MODE_ALONG_MEET,
        "slide: first event %s", l.n ? tf_event_kind_name(l.kind[0]) : "none");
  CHECK(l.n >= 2 && l.kind[1] == TF_EVENT_MEET_PASS && l.to[1] == TF_MODE_SLIP_PLUS,
        "slide: then leaves into h > 0 (%s)", l.n > 1 ? tf_event_kind_name(l.kind[1]) : "none");
  if (l.n >= 2) {
    CHECK_CLOSE(l.t[0], ta, 1e-8, "arrival at the intersection");
    CHECK_CLOSE(l.t[1], t_leave, 1e-6, "departure where x3 = 1");
  }
  CHECK(x[0] > 0 && fabs(x[1]) < 1e-6, "slips away along phi = 0: (%g, %g)", x[0], x[1]);
  tf_evolve_destroy(e);
  third = ANTALI;
}

/* h > 0: F = R n + V n_perp with R = -1 + 2 sin^2(phi), V = -sin(phi) (cos(phi) + 1): one
 * limit direction, phi = 0, attracting with V'/R = 2 (every trajectory nearby arrives along it);
 * on Sigma F = (1, +-1).  h < 0: F = (-1, 0), repelling along phi = pi.  Sigma escapes on both
 * rays (h' = 1 above, -1 below), its sliding field (0, +-1/2) moving away from I on each. */
static int escape_slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)t, (void)p;
  const double rho = hypot(x[0], x[1]), c = rho > 0 ? x[0] / rho : 1, s = rho > 0 ? x[1] / rho : 0;
  dx[2] = 0;
  if (side < 0) {
    dx[0] = -1, dx[1] = 0;
    return 0;
  }
  const double R = -1 + 2 * s * s, V = -s * (c + 1);
  dx[0] = R * c - V * s;
  dx[1] = R * s + V * c;
  return 0;
}

static const tf_filippov_ops escape_ops = {TF_OPS_SIZE(tf_filippov_ops), .switching = h_fn,
                                           .slip = escape_slip, .secondary_switching = g_fn};
static const tf_model_def escape_field = {TF_MODEL_HEAD, .name = "conewise-escaping",
                                          .kind = TF_MODEL_FILIPPOV, .dim = 3,
                                          .filippov = &escape_ops};

/* u = 5/12: the second of three departures (slip-, Sigma g > 0, Sigma g < 0), at 1/4 of its
 * share: into h < 0, detaching at margin + (1 - 2 margin) / 2 = 1/2 of the escape distance. */
static int escape_choice(void *ctx, const tf_meet_arrival *a, double *u) {
  (void)ctx, (void)a;
  *u = 5.0 / 12;
  return 0;
}

/* The Filippov solution slides from I at speed 1/2 to (0, detach), reached `shift` = 2 detach
 * after the arrival at t = a, and moves with (-1, 0) from there: at T it is at
 * (-(T - a - shift), detach).  The engine starts the slip at the arrival time instead. */
static void escape_departure(double distance) {
  tf_evolve_options o = tf_evolve_default_options();
  o.ode.rtol = 1e-12, o.ode.atol = 1e-14;
  o.meet_escape_distance = distance, o.meet_escape_margin = 0.05;
  tf_evolve *e = tf_evolve_create(&escape_field, NULL, &o);
  log_t l = {0};
  tf_evolve_set_callbacks(e, record, NULL, &l);
  tf_evolve_set_choice(e, escape_choice);
  const double a = 0.25, T = 1.0, detach = 0.5 * distance, shift = detach / 0.5;
  double x[3] = {a, 0, 0};
  const tf_evolve_result r = tf_evolve_run(e, 0, x, T, 0);
  CHECK(r.status == TF_MEMBER_OK && l.n == 1 && l.kind[0] == TF_EVENT_MEET_CHOICE &&
            l.to[0] == TF_MODE_SLIP_MINUS,
        "escaping: one choice, into slip- (%d events, status %d)", l.n, r.status);
  CHECK_CLOSE(l.t[0], a, 1e-10, "escaping: arrival along phi = 0 at t = a");
  CHECK_CLOSE(x[1], detach, 1e-12, "escaping: detached at half the escape distance");
  const double ahead = hypot(x[0] + (T + shift - a - shift), x[1] - detach);
  CHECK(ahead < 1e-9, "escaping, distance %g: the state = the Filippov one %g later (%.1e)",
        distance, shift, ahead);
  const double off = hypot(x[0] + (T - a - shift), x[1] - detach);
  CHECK(off > 0.99 * shift && off <= shift * (1 + 1e-6),
        "escaping, distance %g: %.3e from the Filippov state, max|F| x shift = %.3e", distance, off,
        shift);
  tf_evolve_destroy(e);
}

/* Whether two analyses agree in every field, bit for bit. */
static bool same_meet(const tf_meet *a, const tf_meet *b) {
  bool same = a->verdict == b->verdict && a->count == b->count && a->repelling == b->repelling &&
              a->rest_admissible == b->rest_admissible && a->reason == b->reason &&
              memcmp(a->sliding, b->sliding, sizeof a->sliding) == 0;
  for (int i = 0; same && i < a->count; i++) {
    const tf_meet_direction *u = &a->dir[i], *v = &b->dir[i];
    same = memcmp(&u->phi, &v->phi, sizeof u->phi) == 0 && memcmp(&u->R, &v->R, sizeof u->R) == 0 &&
           memcmp(&u->angular, &v->angular, sizeof u->angular) == 0 && u->side == v->side &&
           u->escaping == v->escaping && u->fan == v->fan;
  }
  return same;
}

/* The kernel as it is and a copy without slip_lanes: the scans of F* side by side against one
 * after another. */
static void lanes_same(const tf_kernel *k, const double *p, const double *x, const char *what,
                       tf_meet *out) {
  tf_filippov_ops scalar_ops = *k->filippov;
  scalar_ops.slip_lanes = NULL;
  tf_kernel scalar = *k;
  scalar.filippov = &scalar_ops;
  tf_meet b;
  tf_meet_classify(k, p, 0.0, x, out);
  tf_meet_classify(&scalar, p, 0.0, x, &b);
  CHECK(same_meet(out, &b), "%s: verdict %s/%s, %d/%d directions", what,
        tf_meet_verdict_name(out->verdict), tf_meet_verdict_name(b.verdict), out->count, b.count);
}

/* slip lane by lane for Example 2.9 (model.h's layout: no parameters, each lane's side at p[l]),
 * so that its analysis runs the side-by-side scans: those of a rest and of a slide take the
 * hull test too. */
static void example_slip_lanes(int lanes, const double *t, const double *x, const double *p,
                               double *dx, int *code) {
  for (int l = 0; l < lanes; l++) {
    const double y[3] = {x[l], x[lanes + l], x[2 * lanes + l]};
    double f[3] = {NAN, NAN, NAN}; /* a refused lane's */
    CHECK(p[l] == 1 || p[l] == -1, "lane %d's side %g", l, p[l]);
    code[l] = slip(t[l], y, (int)p[l], NULL, f);
    for (int i = 0; i < 3; i++) dx[i * lanes + l] = f[i];
  }
}

static void side_by_side_scans(void) {
  tf_filippov_ops ops = example_ops;
  ops.slip_lanes = example_slip_lanes;
  tf_kernel k = example;
  k.filippov = &ops;
  const double x3s[3] = {2.0, 0.0, 0.5}; /* pass, rest, slide */
  const tf_meet_verdict expected[3] = {TF_MEET_PASS, TF_MEET_REST, TF_MEET_SLIDE};
  for (int c = 0; c < 3; c++) {
    const double x[3] = {0, 0, x3s[c]};
    tf_meet m;
    lanes_same(&k, NULL, x, "example 2.9", &m);
    CHECK(m.verdict == expected[c], "example 2.9 x3 = %g side by side: %s", x3s[c],
          tf_meet_verdict_name(m.verdict));
  }
  /* the wheel (Fig. 5 parameters) at points of I: its slip_lanes take the parameters and sides
   * in structure of arrays */
  const tf_kernel *w = tf_kernel_find("wheel");
  CHECK(w && w->filippov->slip_lanes, "the wheel kernel with slip_lanes");
  if (!w || !w->filippov->slip_lanes) return;
  double p[32];
  tf_error err = {0};
  for (size_t i = 0; i < w->nparams; i++) p[i] = w->params[i].def;
  CHECK(w->prepare(p, &err) == 0, "%s", err.msg);
  const double omega0 = p[6];
  const double xs[3][3] = {{0.1859, 0.0, omega0}, {0.25, 0.0, omega0}, {0.7, 0.0, omega0}};
  for (int c = 0; c < 3; c++) {
    tf_meet m;
    lanes_same(w, p, xs[c], "wheel", &m);
    CHECK(m.count > 0, "wheel point %d: limit directions found", c);
  }
}

/* A model undefined for x2 < 0: every analysis at I needs F* there, so none decides.  With x3
 * frozen the member from (0.3, 0, 0) stays on x2 = 0 (never refused on its way) and reaches I at
 * t = 0.3, where it fails as the model's failure, with no intersection event. */
static void refusals(void) {
  refuse_below = true;
  third = FROZEN;
  tf_filippov_ops ops = example_ops;
  ops.slip_lanes = example_slip_lanes;
  tf_kernel lanes = example;
  lanes.filippov = &ops;
  const tf_kernel *kinds[2] = {&example, &lanes};
  for (int c = 0; c < 2; c++) {
    const double x[3] = {0, 0, 0.5};
    tf_meet m;
    tf_meet_classify(kinds[c], NULL, 0, x, &m);
    CHECK(m.verdict == TF_MEET_UNDEFINED && m.model_code == OUTSIDE,
          "refused half-plane (%s): verdict %s, code %d", c ? "side by side" : "one by one",
          tf_meet_verdict_name(m.verdict), m.model_code);
    double Fs[3];
    const int rc = tf_meet_sliding_vector(kinds[c], NULL, 0, x, Fs);
    CHECK(rc == OUTSIDE && isnan(Fs[0]) && isnan(Fs[2]), "sliding vector: code %d, Fs3 %g", rc,
          Fs[2]);
  }
  log_t l = {0};
  tf_evolve *e = logging_engine(1e-10, &l);
  double x[3] = {0.3, 0, 0};
  const tf_evolve_result r = tf_evolve_run(e, 0, x, 2.0, 0);
  CHECK(r.status == TF_MEMBER_FAILED && l.n == 0, "refused at I: status %d, %d events", r.status,
        l.n);
  CHECK_CLOSE(r.t, 0.3, 1e-9, "refused at I: the member ends at its arrival");
  tf_evolve_destroy(e);
  refuse_below = false;
  third = ANTALI;
}

int main(void) {
  classify_cases();
  refusals();
  side_by_side_scans();
  fan_case(0.5, TF_MEET_PASS);   /* V'/R = -1: one departure */
  fan_case(0.9, TF_MEET_PASS);   /* V'/R = -0.2 */
  fan_case(1.5, TF_MEET_CHOICE); /* V'/R = +1: a fan */
  fan_case(3.0, TF_MEET_CHOICE); /* V'/R = +4 */
  escape_departure(1e-4);
  escape_departure(1e-6);
  slide_and_leave();
  arrival_case(0.0, TF_EVENT_MEET_REST, "x3 = 0: rest");
  /* x3 = -1: attracting from phi = 0 at rate -2, repelling at pi at rate 0 -> neutral:
   * undefined, the member stops with status codim2 */
  third = FROZEN;
  tf_evolve *e = tf_evolve_create(&example, NULL, NULL);
  log_t l = {0};
  tf_evolve_set_callbacks(e, record, NULL, &l);
  double x[3] = {0.2, 0, -1};
  const tf_evolve_result r = tf_evolve_run(e, 0, x, 1.0, 0);
  CHECK(r.status == TF_MEMBER_CODIM2 && l.n == 1 && l.kind[0] == TF_EVENT_MEET_UNDEFINED,
        "x3 = -1 (neutral direction): status %d, %d events", r.status, l.n);
  CHECK_CLOSE(r.t, 0.1, 1e-9, "x3 = -1: stops at the arrival");
  tf_evolve_destroy(e);
  third = ANTALI;
  return check_report("test_intersection");
}
