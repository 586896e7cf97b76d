"""reset_saltation.py — Lyapunov spectra through the reset of an event of the user's own
(poincare.action: reset with the lyapunov job and scan.quantity: lyapunov).

At a reset x -> R(t, x) on the event g(t, x) = 0 the tangent vectors jump by the saltation
matrix S = R_x + (f+ - R_t - R_x f-) g_x / (g_x f- + g_t).  Each expectation below comes
without that formula: from the closed-form flow and the return map it induces, whose
Floquet multipliers give the exponents (a time-T map of a periodic orbit has the multipliers
of its return map, and 1 along the flow for an autonomous one).

1. A bouncing ball as a plain flow, x' = v, v' = -g, reset v -> -r v + c at x = 0 (down): the
   impact speeds obey V' = r V + c, so the orbit of speed V* = c / (1 - r) and period
   T = 2 V* / g attracts.  sympy differentiates the closed-form time-T map from the apex
   (flight, landing time from the quadratic, reset, flight): its eigenvalues are 1 and r, so
   the spectrum is (0, ln(r) / T), and its determinant r is the volume each bounce takes
   (the field is divergence-free).  A scan over r: (0, ln(r) / T(r)) at every point.
2. A damped oscillator x' = v, v' = -x - 2 z v, kicked at x = 0 (level, up) by
   v -> sqrt(v^2 + c).  From (0, v) it returns to x = 0 upwards after T = 2 pi / sqrt(1 - z^2)
   whatever v, with speed v e^(-z T): the return map P(v) = sqrt(v^2 e^(-2 z T) + c) has the
   fixed point v*^2 = c / (1 - e^(-2 z T)) and P'(v*) = e^(-2 z T), so the spectrum is
   (0, -2 z).  Without the correction term (S = R_x) the tangent map over a period would be
   R_x e^(A T) = e^(-z T) diag(1, e^(-z T)): (-z, -2 z), computed here and shown to miss.
3. The ball on a table moving as A sin(w t): g = x - A sin(w t) (down), the reset
   v -> -r v + (1 + r) A w cos(w t) (time in both).  The period-one orbit (one bounce per
   table period 2 pi / w) is found by brentq on the closed-form flight; the Jacobian of its
   impact map (impact time, speed after) by central differences of that closed form gives
   the two multipliers.  Leaving out the time derivatives g_t and R_t, or the whole
   correction, gives other spectra, computed here and shown to miss.
4. Sections whose saltation has no exact derivative are refused with file, line and key: an
   extremum, and a model's output computed by a C callback; so are recording keys.
"""
import math
import os

import h5py
import numpy as np
import sympy as sp
from scipy.linalg import expm
from scipy.optimize import brentq

import testlib as T

T.setup()
os.environ.setdefault("TWOFOLD_CACHE", os.path.join(T.WORK, "cache"))
os.makedirs(os.environ["TWOFOLD_CACHE"], mode=0o700, exist_ok=True)


def lyapunov(name, equations, state, poincare, period, hmax=""):
    """A lyapunov job over whole periods of its orbit, 40 in the transient (aligning the frame)
    and 160 averaged in blocks of 8 (the tangent map of a period's part would add a boundary
    term to the exponents)."""
    return T.write(f"{name}.yaml", f"""job: lyapunov
model:
  equations:
{equations}initial: {{state: {state}}}
integrator: {{rtol: 1.0e-11, atol: 1.0e-13{hmax}}}
lyapunov: {{transient: {40 * period!r}, duration: {160 * period!r}, interval: {period / 8!r}}}
poincare:
{poincare}""")


# --- 1. the bouncing ball with an affine reset ------------------------------------------------
G, R, C = 1.0, 0.5, 1.0
BALL = f"""    name: ball
    state: [x, v]
    parameters: {{g: {G}, r: {{default: {R}, min: 0.1, max: 0.9}}, c: {C}}}
    field: {{x: "v", v: "-g"}}
"""
BALL_RESET = """  event: function
  function: "x"
  direction: down
  action: reset
  reset: {v: "-r*v + c"}
"""


def ball_multipliers(r):
    """Eigenvalues and determinant of the closed-form time-T map at the apex (sympy)."""
    x, v, g, rr, c = sp.symbols("x v g r c", real=True)
    tau = (v + sp.sqrt(v**2 + 2 * g * x)) / g  # landing
    vplus = -rr * (v - g * tau) + c
    V = c / (1 - rr)
    T_ = 2 * V / g
    s = T_ - tau  # flight after the bounce
    F = sp.Matrix([vplus * s - g * s**2 / 2, vplus - g * s])
    params = {g: G, rr: r, c: C}
    at = {x: (V**2 / (2 * g)).subs(params), v: 0, **params}  # the apex
    J = np.array(F.jacobian([x, v]).subs(at).evalf(30), dtype=float)
    return np.sort(np.abs(np.linalg.eigvals(J)))[::-1], np.linalg.det(J), float(T_.subs(params))


mult, det, period = ball_multipliers(R)
want = np.log(mult) / period
T.check(abs(mult[0] - 1) < 1e-12 and abs(mult[1] - R) < 1e-12 and abs(det - R) < 1e-12,
        f"the ball's time-T map (sympy, closed form): multipliers {mult[0]:.12f}, "
        f"{mult[1]:.12f} = 1, r and determinant {det:.12f} = r")
apex = f"[{(C / (1 - R))**2 / (2 * G)}, 0.0]"  # on the orbit
s = T.run(lyapunov("ball", BALL, apex, BALL_RESET, period), "ball.h5")
got = np.array(s["spectrum"])
T.check(s["member_status"] == "ok" and np.abs(got - want).max() < 1e-10 and
        abs(s["spectrum_sum"] - math.log(R) / period) < 1e-10,
        f"ball, reset v -> -r v + c: spectrum {got[0]:.2e}, {got[1]:.10f} against (0, ln(r)/T = "
        f"{want[1]:.10f}), sum = ln(det S)/T, det S = r (within "
        f"{np.abs(got - want).max():.1e})")

ball = open("ball.yaml").read()
scan = T.write("ballscan.yaml", ball.replace("job: lyapunov", "job: scan").replace(
    ball.split("lyapunov: ")[1].split("\n")[0], "{transient: 100, duration: 1000}") +
    "scan:\n  quantity: lyapunov\n  x: {param: r, min: 0.3, max: 0.7, points: 3}\n")
T.run(scan, "ballscan.h5")
with h5py.File("ballscan.h5") as f:
    grid, spectra = f["members/grid"][:, 0], f["members/spectrum"][()]
want = np.array([[0.0, math.log(r) * (1 - r) * G / (2 * C)] for r in grid])
worst = np.abs(spectra - want).max()
# the orbit of speed c/(1-r) is reached in the transient; a duration of no whole number of
# periods leaves a boundary term up to ln(|f| range)/duration (about 1e-3)
T.check(worst < 3e-3, f"scan over r = {', '.join(f'{r:g}' for r in grid)}: spectra against "
        f"(0, ln(r)(1-r)g/2c) within {worst:.1e}")


# --- 2. a kicked damped oscillator: the correction term is everything ----------------------
Z, KICK = 0.1, 1.0
OSC = f"""    name: kicked
    state: [x, v]
    parameters: {{z: {Z}, c: {KICK}}}
    field: {{x: "v", v: "-x - 2*z*v"}}
"""
KICKS = """  event: level
  component: x
  level: 0
  direction: up
  action: reset
  reset: {v: "sqrt(v^2 + c)"}
"""
Tk = 2 * math.pi / math.sqrt(1 - Z * Z)
vstar = math.sqrt(KICK / (1 - math.exp(-2 * Z * Tk)))
want = np.array([0.0, -2 * Z])
A = np.array([[0.0, 1.0], [-1.0, -2 * Z]])
vminus = vstar * math.exp(-Z * Tk)
no_correction = np.sort(np.log(np.abs(np.linalg.eigvals(
    np.diag([1.0, vminus / vstar]) @ expm(A * Tk)))) / Tk)[::-1]
quarter = expm(A * Tk / 4) @ [0.0, vstar]  # on the orbit, a quarter period after a kick
s = T.run(lyapunov("kicked", OSC, f"[{quarter[0]!r}, {quarter[1]!r}]", KICKS, Tk), "kicked.h5")
got = np.array(s["spectrum"])
T.check(s["member_status"] == "ok" and np.abs(got - want).max() < 1e-9 and
        np.abs(no_correction - want).max() > 0.05,
        f"kicked damped oscillator, v -> sqrt(v^2 + c) at x = 0: spectrum {got[0]:.2e}, "
        f"{got[1]:.6f} against (0, -2 z) within {np.abs(got - want).max():.1e}; without the "
        f"correction term it would be ({no_correction[0]:.3f}, {no_correction[1]:.3f})")


# --- 3. the ball on a moving table: time in the event and in the reset --------------------
RT, AT, WT = 0.5, 1.5, 1.0
Tf = 2 * math.pi / WT
TABLE = f"""    name: table
    state: [x, v]
    parameters: {{g: {G}, r: {RT}, a: {AT}, w: {WT}}}
    field: {{x: "v", v: "-g"}}
"""
TABLE_RESET = """  event: function
  function: "x - a*sin(w*t)"
  direction: down
  action: reset
  reset: {v: "-r*v + (1 + r)*a*w*cos(w*t)"}
"""


def next_impact(t0, v0):
    """The impact after one at t0 with speed v0 after it (closed-form flight, brentq)."""
    y0 = AT * math.sin(WT * t0)
    h = lambda t: y0 + v0 * (t - t0) - G * (t - t0)**2 / 2 - AT * np.sin(WT * t)
    ts = t0 + np.linspace(1e-6, 3 * Tf, 30001)
    hs = h(ts)
    i = np.nonzero((hs[:-1] > 0) & (hs[1:] <= 0))[0][0]
    t1 = brentq(h, ts[i], ts[i + 1], xtol=1e-15, rtol=1e-15)
    return t1, -RT * (v0 - G * (t1 - t0)) + (1 + RT) * AT * WT * math.cos(WT * t1)


phase = math.acos((1 - RT) * G * Tf / (2 * (1 + RT) * AT * WT)) / WT  # one bounce a period
v1 = G * Tf / 2
t1, v2 = next_impact(phase, v1)
J = np.zeros((2, 2))
for j, d in enumerate(np.eye(2) * 1e-6):
    J[:, j] = (np.array(next_impact(phase + d[0], v1 + d[1])) -
               np.array(next_impact(phase - d[0], v1 - d[1]))) / 2e-6
want = np.sort(np.log(np.abs(np.linalg.eigvals(J))))[::-1] / Tf


def saltation_spectrum(time_terms, correction=True):
    """The spectrum a saltation missing terms would give: S times the flight's map."""
    tp = phase + Tf
    vm = v1 - G * Tf
    fm, fp = np.array([vm, -G]), np.array([v1, -G])
    Rx = np.diag([1.0, -RT])
    Rt = np.array([0, -(1 + RT) * AT * WT**2 * math.sin(WT * tp)]) * time_terms
    gt = -AT * WT * math.cos(WT * tp) * time_terms
    S = Rx + correction * np.outer(fp - Rt - Rx @ fm, [1, 0]) / (vm + gt)
    return np.sort(np.log(np.abs(np.linalg.eigvals(S @ np.array([[1, Tf], [0, 1]])))))[::-1] / Tf


assert abs(t1 - phase - Tf) < 1e-9 and abs(v2 - v1) < 1e-9  # the period-one orbit
assert np.abs(saltation_spectrum(1) - want).max() < 1e-6  # the formula, as the engine has it
misses = [saltation_spectrum(0), saltation_spectrum(0, False)]
since = Tf - phase  # at t = 0 (where the job starts), on the orbit: in flight since phase - Tf
x0 = [AT * math.sin(WT * phase) + v1 * since - G * since**2 / 2, v1 - G * since]
# the flight is a polynomial the integrator steps over in a few steps, in which the table's
# sine would cross the ball twice unseen: hmax (docs/CONFIG.md, poincare.function)
s = T.run(lyapunov("table", TABLE, f"[{x0[0]!r}, {x0[1]!r}]", TABLE_RESET, Tf, ", hmax: 0.1"),
          "table.h5")
got = np.array(s["spectrum"])
worst = np.abs(got - want).max()
T.check(s["member_status"] == "ok" and worst < 1e-8 and
        min(np.abs(m - want).max() for m in misses) > 0.05,
        f"ball on a table moving as a sin(w t): spectrum {got[0]:.8f}, {got[1]:.8f} against the "
        f"multipliers of the closed-form impact map ({want[0]:.8f}, {want[1]:.8f}) within "
        f"{worst:.1e}; without g_t and R_t it would be ({misses[0][0]:.3f}, {misses[0][1]:.3f}), "
        f"with S = R_x ({misses[1][0]:.3f}, {misses[1][1]:.3f})")


# --- 4. refused ----------------------------------------------------------------------------
T.refused(T.write("extremum.yaml", open("ball.yaml").read().replace("event: function",
                                                                    "event: extremum")),
          [], "extremum.yaml:12: key 'poincare.event': an extremum's event function is the rate "
          "of 'x' along the field")
T.refused("ball.yaml", ["poincare.count=5"],
          "key 'poincare.count': the lyapunov job records no events")
T.refused(T.write("log.yaml", open("ball.yaml").read().split("  action:")[0] + "  action: log\n"),
          [], "log.yaml:15: key 'poincare.action': the lyapunov job records no events")
T.refused("ball.yaml", ["lyapunov.estimator=wolf"],
          "key 'lyapunov.estimator': a series estimator measures no reset of the state")
T.write("lift.c", r"""#include "twofold/model.h"

static const tf_param params[] = {{"g", 1.0, 0.0, 10.0, "gravity", false}};
static const char *const names[] = {"x", "v"};
static const char *const output_names[] = {"height"};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = x[1], dx[1] = -p[0];
  return 0;
}

static void height(const double *x, const double *p, double *out) {
  (void)p;
  out[0] = x[0];
}

static const tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs};

static const tf_model_def ball = {
    TF_MODEL_HEAD,
    .name = "lift",
    .doc = "a falling ball with the output height = x",
    .kind = TF_MODEL_FLOW,
    .dim = 2,
    .state_names = names,
    .nparams = 1,
    .params = params,
    .noutputs = 1,
    .output_names = output_names,
    .outputs = height,
    .flow = &ops,
};

TWOFOLD_MODELS(&ball);
""")
lift = T.write("lift.yaml", """job: lyapunov
model: {source: lift.c}
initial: {state: [2.0, 0.0]}
poincare:
  event: function
  function: "height"
  direction: down
  action: reset
  reset: {v: "1 - 0.5*v"}
""")
T.refused(lift, [], "lift.yaml:6: key 'poincare.function': it names the model's output 'height', "
          "computed by a C callback that gives no derivative")
T.refused(lift, ["poincare.function=x", "poincare.reset.v=1 - 0.5*v*height"],
          "key 'poincare.reset.v': it names the model's output 'height'")
T.finish()
