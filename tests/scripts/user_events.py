"""user_events.py — events a user defines by an expression (poincare.event: function).

The harmonic oscillator x' = v, v' = -w^2 x (model.equations, w = 1) from (x0, v0) has
x(t) = x0 cos t + v0 sin t, v(t) = v0 cos t - x0 sin t, so the event function
g = x + v = A cos t + B sin t (A = x0 + v0, B = v0 - x0) = R cos(t - d), d = atan2(B, A),
crosses zero upwards (g' = -R sin(t - d) > 0) at t = d - pi/2 + 2 k pi, and downwards at
t = d + pi/2 + 2 k pi.  Computed here in closed form for each member's stored initial state:

* direction up, count 3, t_end 40: each member records its first three upward crossings
  (times to 1e-8, states to 1e-8) and, the count reached, ends there: status ok, t_final the
  third crossing's time (the action "stop");
* direction down over a horizon holding two crossings, count 5: the two crossings, NaN after,
  and the member runs to t_end;
* an event function of t and a parameter, g = x - a cos(t) with a drawn per member
  (model.sample), direction both, action log, count 3: every recorded state has x = a cos(t)
  to 1e-8, three are recorded and the members run on to t_end;
* the action `reset` on a bouncing ball written as a plain flow (the same model with w = 0), x' = v, v' = -g, event x = 0 downward,
  reset v -> -r v with r drawn per member: from (x0, v0) the ball lands at
  t_1 = (v0 + V) / g with speed V = sqrt(v0^2 + 2 g x0), leaves the k-th landing with speed
  r^k V and flies 2 r^k V / g, so the landings are at t_k = t_1 + (2 V / g) r (1 - r^(k-1)) /
  (1 - r) (a geometric series); the first ten are recorded after their resets (x = 0,
  v = r^k V), the resets go on, and the member ends as zeno just before the accumulation
  t_1 + (2 V / g) r / (1 - r); a reset to NaN fails the member with the reason;
* a Filippov model (scan, quantity poincare): x' = -k sign(x), (y, z) rotating, x0 = 1, y0 = 1,
  z0 = 0, so x = max(1 - k t, 0) (slip+ until t = 1/k, then sliding on x = 0), y = cos t,
  z = -sin t; the crossings of g = y + c x (both directions) are found here by brentq on that
  closed form, with the mode at each (1 slip+, 0 sliding); `stop` with count 1 ends each point
  at its first crossing, so a sliding that starts after it is not logged; `reset` is refused;
* the C-callback form: a plugin (model.source) of the same oscillator whose `outputs` callback
  computes lead = x + v; poincare.function "lead" gives the closed-form crossings of the
  first case;
* bad input is refused with file, line and key.
"""
import math
import os
import subprocess

import h5py
import numpy as np
from scipy.optimize import brentq

import testlib as T

T.setup()
os.environ.setdefault("TWOFOLD_CACHE", os.path.join(T.WORK, "cache"))
os.makedirs(os.environ["TWOFOLD_CACHE"], mode=0o700, exist_ok=True)
MEMBERS = 20


# one model for every flow here (compiled once): the oscillator, and with w = 0 and g > 0 a
# falling ball
OSCILLATOR = """  equations:
    name: oscillator
    state: [x, v]
    parameters: {w: {default: 1.0}, a: {default: 0.5, min: 0, max: 1}, g: {default: 0.0},
                 r: {default: 0.8, min: 0, max: 1}}
    field: {x: "v", v: "-w^2*x - g"}
"""


def config(name, poincare, t_end, extra_model=""):
    return T.write(f"{name}.yaml", f"""job: ensemble
model:
{OSCILLATOR}{extra_model}initial: {{state: [1.0, 0.0], spread: 0.2}}
integrator: {{t_end: {t_end}, rtol: 1.0e-11, atol: 1.0e-13}}
ensemble: {{members: {MEMBERS}, seed: 4}}
poincare:
{poincare}""")


def crossings(x0, v0, up, t_end):
    A, B = x0 + v0, v0 - x0
    d = math.atan2(B, A)
    first = d + (-math.pi / 2 if up else math.pi / 2)
    first -= 2 * math.pi * math.floor(first / (2 * math.pi))  # the first one after t = 0
    return [t for t in first + 2 * math.pi * np.arange(10) if t <= t_end]


def read(path):
    with h5py.File(path, "r") as f:
        return {k: f["members"][k][()] for k in f["members"]}


def check_events(path, up, count, t_end):
    r = read(path)
    worst_t = worst_x = 0.0
    ok = True
    for m in range(MEMBERS):
        x0, v0 = r["initial_state"][m]
        want = crossings(x0, v0, up, t_end)[:count]
        rows = r["poincare"][m].reshape(-1, 3)
        got = rows[~np.isnan(rows[:, 0])]
        ok &= len(got) == len(want) and int(r["poincare_recorded"][m]) == len(want)
        if len(got) != len(want):
            continue
        for (t, x, v), tw in zip(got, want):
            worst_t = max(worst_t, abs(t - tw))
            worst_x = max(worst_x, abs(x - (x0 * math.cos(tw) + v0 * math.sin(tw))),
                          abs(v - (v0 * math.cos(tw) - x0 * math.sin(tw))))
        stopped = len(want) == count
        t_final = r["t_final"][m]
        ok &= r["status"][m] == 1 and (abs(t_final - want[-1]) < 1e-8 if stopped else
                                       t_final == t_end)
    T.check(ok and worst_t < 1e-8 and worst_x < 1e-8,
            f"{path}: {'up' if up else 'down'}ward crossings of x + v = 0 against the closed "
            f"form: times within {worst_t:.1e}, states within {worst_x:.1e}; "
            f"{'ends at the last one' if count <= 2 or up else 'runs to t_end'}")


up = config("up", "  event: function\n  function: \"x + v\"\n  direction: up\n  count: 3\n", 40)
T.run(up, "up.h5")
check_events("up.h5", True, 3, 40.0)
down = config("down", "  event: function\n  function: \"x + v\"\n  direction: down\n  count: 5\n",
              10)
T.run(down, "down.h5")
check_events("down.h5", False, 5, 10.0)

timed = config("timed", "  event: function\n  function: \"x - a*cos(w*t)\"\n  count: 3\n"
               "  action: log\n", 15,
               "  sample:\n    a: {dist: uniform, lo: 0.2, hi: 0.8}\n")
T.run(timed, "timed.h5")
r = read("timed.h5")
rows = r["poincare"].reshape(MEMBERS, -1, 3)
a = r["parameters"].ravel()
resid = np.abs(rows[:, :, 1] - a[:, None] * np.cos(rows[:, :, 0]))
T.check(np.all(r["poincare_recorded"] == 3) and np.nanmax(resid) < 1e-8 and
        np.all(r["t_final"] == 15) and np.all(r["status"] == 1),
        f"g = x - a cos(w t) with a drawn per member: every recorded state has x = a cos(t) "
        f"(largest residual {np.nanmax(resid):.1e}); action log: three recorded, the members "
        f"run on to t_end")


# --- poincare.action: reset, a bouncing ball as a plain flow -----------------------------------
G = 9.81


def ball(name, t_end, action="reset", count=40, extra=""):
    return T.write(f"{name}.yaml", f"""job: ensemble
model:
{OSCILLATOR}  params: {{w: 0, g: {G}}}
  sample:
    r: {{dist: uniform, lo: 0.7, hi: 0.9}}
initial: {{state: [1.0, 0.0], spread: 0.2}}
integrator: {{t_end: {t_end}, rtol: 1.0e-11, atol: 1.0e-13}}
ensemble: {{members: {MEMBERS}, seed: 7}}
poincare:
  event: function
  function: "x"
  direction: down
  action: {action}
  count: {count}
{extra}""")


def landings(x0, v0, r):
    """Landing times, speeds after the reset, and the accumulation time (closed form)."""
    V = math.sqrt(v0 * v0 + 2 * G * x0)
    k = np.arange(1, 200)
    t = (v0 + V) / G + 2 * V / G * r * (1 - r ** (k - 1)) / (1 - r)
    return t, r ** k * V, (v0 + V) / G + 2 * V / G * r / (1 - r)


RESET = "  reset: {v: \"-r*v\"}\n"
T.run(ball("bounce", 12, count=10, extra=RESET), "bounce.h5", code=4)
r = read("bounce.h5")
worst_t = worst_v = worst_x = 0.0
gap = np.zeros(MEMBERS)
ok = True
for m in range(MEMBERS):
    x0, v0 = r["initial_state"][m]
    t, v, gap[m] = landings(x0, v0, np.atleast_1d(r["parameters"][m])[-1])
    gap[m] -= r["t_final"][m]
    got = r["poincare"][m].reshape(-1, 3)
    ok &= r["poincare_recorded"][m] == 10
    worst_t = max(worst_t, np.abs(got[:, 0] - t[:10]).max())
    worst_v = max(worst_v, np.abs(got[:, 2] - v[:10]).max())
    worst_x = max(worst_x, np.abs(got[:, 1]).max())
T.check(ok and worst_t < 1e-8 and worst_v < 1e-8 and worst_x < 1e-10,
        f"reset v -> -r v at x = 0 against the geometric series: the first ten landings "
        f"(times within {worst_t:.1e}, speeds after the reset within {worst_v:.1e}, "
        f"|x| <= {worst_x:.1e})")
T.check(np.all(r["status"] == 5) and np.all((gap > 0) & (gap < 1e-3)),
        f"the resets go on after the tenth: every member ends as zeno just before the "
        f"accumulation of its landings ({gap.min():.1e} to {gap.max():.1e} before the closed "
        f"form)")

nan = ball("nan", 2, extra="  reset: {v: \"sqrt(-1)*v\"}\n")
summary = T.run(nan, "nan.h5", "job=trajectory")
T.check(summary["member_status"] == "failed" and
        "reset map (poincare.reset) gives v = " in summary.get("failure", ""),
        f"a reset to NaN fails the member with its reason: {summary.get('failure')}")

T.refused(ball("badkey", 2, extra="  reset: {q: \"0\"}\n"), [],
          "key 'poincare.reset.q': model 'oscillator' has no state component 'q' (components: x,v)")
T.refused(ball("badexpr", 2, extra="  reset: {v: \"-r*\"}\n"), [], "badexpr.yaml:21: key "
          "'poincare.reset.v': column 4")
T.refused(ball("noaction", 2, action="log", extra=RESET), [],
          "noaction.yaml:21: key 'poincare.reset' is a reset map, used only with "
          "poincare.action: reset")


# --- the C-callback form: a plugin's output as the whole event function ------------------------
T.write("lead.c", r"""#include <math.h>

#include "twofold/model.h"

static const tf_param params[] = {{"w", 1.0, 0.0, INFINITY, "angular frequency", false}};
static const char *const names[] = {"x", "v"};
static const char *const output_names[] = {"lead"};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = x[1], dx[1] = -p[0] * p[0] * x[0];
  return 0;
}

/* the event function, in C: x + v */
static void lead(const double *x, const double *p, double *out) {
  (void)p;
  out[0] = x[0] + x[1];
}

static const tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs};

static const tf_model_def oscillator = {
    TF_MODEL_HEAD,
    .name = "lead-oscillator",
    .doc = "harmonic oscillator with the output lead = x + v",
    .kind = TF_MODEL_FLOW,
    .dim = 2,
    .state_names = names,
    .nparams = 1,
    .params = params,
    .noutputs = 1,
    .output_names = output_names,
    .outputs = lead,
    .flow = &ops,
};

TWOFOLD_MODELS(&oscillator);
""")
text = open(up).read()
plugin = T.write("plugin.yaml", text.replace(text.split("initial:")[0].split("model:")[1],
                                             "\n  source: lead.c\n").replace('"x + v"', "lead")
                 + "  action: stop\n")
T.run(plugin, "plugin.h5")
check_events("plugin.h5", True, 3, 40.0)


# --- a Filippov model: function events with the mode at each, log and stop ---------------------
SLIDE3 = """    name: slide3
    state: [x, y, z]
    parameters: {k: {default: 1.0, min: 0.1, max: 10}, c: {default: 0.5}}
    switching: x
    slip:
      plus: {x: "-k", y: "z", z: "-y"}
      minus: {x: "k", y: "z", z: "-y"}
"""
# two switching functions (the engine of several): u' = -2 k sign(u) from u = 1 as well, which
# sticks at t = 1 / (2 k); mode code (s_x + 1) + 3 (s_u + 1)
SLIDE4 = """    name: slide4
    state: [x, u, y, z]
    parameters: {k: {default: 1.0, min: 0.1, max: 10}, c: {default: 0.5}}
    switching: {s1: x, s2: u}
    field: {x: "-k*s1", u: "-2*k*s2", y: "z", z: "-y"}
"""


def filippov(name, extra, equations=SLIDE3, start="1.0, 1.0, 0.0"):
    return T.write(f"{name}.yaml", f"""job: scan
model:
  equations:
{equations}initial: {{state: [{start}]}}
integrator: {{t_end: 10, rtol: 1.0e-11, atol: 1.0e-13}}
poincare: {{event: function, function: "y + c*x", {extra}}}
scan:
  quantity: poincare
  x: {{param: k, min: 0.3, max: 2.1, points: 7}}
""")


def sliding_crossings(k, c=0.5, t_end=10.0):
    g = lambda t: math.cos(t) + c * max(1 - k * t, 0.0)
    ts = np.linspace(0, t_end, 20001)
    gs = np.array([g(t) for t in ts])
    roots = [brentq(g, a, b, xtol=1e-15) for a, b, ga, gb in
             zip(ts[:-1], ts[1:], gs[:-1], gs[1:]) if ga * gb < 0]
    return [(t, max(1 - k * t, 0.0), math.cos(t), -math.sin(t), 1.0 if t < 1 / k else 0.0)
            for t in roots]


T.run(filippov("fil", "count: 5"), "fil.h5")
r = read("fil.h5")
worst = 0.0
ok = True
for i, k in enumerate(r["grid"][:, 0]):
    want = sliding_crossings(k)[:5]
    rows = r["poincare"][i].reshape(-1, 4)
    got = rows[~np.isnan(rows[:, 0])]
    modes = r["poincare_mode"][i][:len(got)]
    ok &= len(got) == len(want) and r["status"][i] == 1
    if len(got) == len(want):
        worst = max(worst, np.abs(got - np.array(want)[:, :4]).max())
        ok &= np.array_equal(modes, np.array(want)[:, 4])
T.check(ok and worst < 1e-8,
        f"Filippov, g = y + c x: every crossing against the closed form (within {worst:.1e}) "
        f"with its mode (slip+ before the sliding, sliding after), 7 values of k")

T.run(filippov("filstop", "action: stop, count: 1"), "filstop.h5")
s = read("filstop.h5")
first = np.array([sliding_crossings(k)[0][0] for k in s["grid"][:, 0]])
slides_before = (1 / s["grid"][:, 0] < first).astype(int)
T.check(np.all(s["poincare_recorded"] == 1) and np.all(s["status"] == 1) and
        np.abs(s["poincare"][:, 0] - first).max() < 1e-8 and
        np.array_equal(s["events"][:, 1], slides_before) and
        np.all(r["events"][:, 1] == 1) and np.all(s["work"][:, 0] < r["work"][:, 0]),
        f"action stop, count 1: each point ends at its first crossing; the sliding that "
        f"starts after it (k = {', '.join(f'{k:g}' for k in s['grid'][slides_before == 0, 0])}) "
        f"is not logged")
two = filippov("two", "action: stop, count: 1", SLIDE4, "1.0, 1.0, 1.0, 0.0")
T.run(two, "two.h5")
w = read("two.h5")
k = w["grid"][:, 0]
first = np.array([sliding_crossings(kk)[0] for kk in k])
code = np.where(first[:, 0] < 1 / k, 2, 1) + 3 * np.where(first[:, 0] < 1 / (2 * k), 2, 1)
sticks = (1 / k < first[:, 0]).astype(int) + (1 / (2 * k) < first[:, 0]).astype(int)
T.check(np.all(w["status"] == 1) and np.all(w["poincare_recorded"] == 1) and
        np.abs(w["poincare"][:, [0, 1, 3, 4]] - first[:, :4]).max() < 1e-8 and
        np.array_equal(w["poincare_mode"].ravel(), code) and
        np.array_equal(w["events"][:, 1], sticks),
        f"two switching functions, action stop: the first crossing and its mode code "
        f"({', '.join(str(int(c)) for c in w['poincare_mode'].ravel())}) against the closed form; "
        f"only the sticking before it is logged")
T.refused(filippov("filreset", "action: reset, reset: {y: \"0\"}"), [],
          "key 'poincare.action': reset is not defined for a Filippov model ('slide3')")


T.refused(up, ["poincare.function=x + q"],
        "key 'poincare.function': column 5: unknown name 'q' (known: x, v, w, a, g, r, t)")
nofn = config("nofn", "  event: function\n", 10)
T.refused(nofn, [], "nofn.yaml:12: missing required key 'poincare.function'")
T.refused(config("level", "  event: level\n  function: \"x\"\n", 10), [],
        "unknown key 'poincare.function'")
T.finish()
