#!/usr/bin/python3
"""lanes.py — members integrated side by side (integrator.lanes) give every member the numbers
it gets alone, bit for bit: the results files' datasets are byte-equal for lanes 1, 4, 8 and
16 (8: the chunk and rank runs, and the default on a CPU with AVX-512), on 1 and 2 ranks, and when the members sharing lanes change (ensemble.chunk: a chunk is
the queue the lanes take members from, so chunks of 1 and 13 members put each member in
another lane beside other members).  Checked on the Lorenz system (the model's own lanes
field, with trajectory samples from the lanes' dense output) under DOPRI5 and DOP853 (whose
samples build the 7th-order extension from the lane's step), and on the smoothed Jeffrey
oscillator under DOPRI5 (its lanes field, with hysteresis and without), and on a model.equations flow
whose field uses every kind of operation and function (the lanes field the expression compiler
emits beside the scalar one), on a short scan of the pressure-relief valve (impacts and
extrema under DOP853: the events leave the lanes for each member's own event loop), and on the
wheel's Fig. 5 ensemble (event-driven Filippov members: crossings, sliding, two-fold exits and
draws at full stick, each accepted step handed to the member's own event loop; also with its slip
fields continued past Sigma, model.params.continuation: 1), and on the relay kernel's and a
model.equations Filippov model's ensembles (their lanes slip fields).  One Lorenz member is also
held against scipy's DOP853 at tight tolerance, so the identity is one of right numbers.
The opt-in column rejected_steps (output.columns) is the same on lanes 1 and 4, and every
member's steps and rejected attempts are those of DOPRI5 and its PI controller written out
here from their definition (a forced start, h0 = 2 on x' = -3x + 10 sin 3t, and the
rejections the forcing brings later); a run that does not name the column does not write it."""
import math
import os
import subprocess

import h5py
import numpy as np
from scipy.integrate import solve_ivp

import testlib as t

t.setup()
os.environ.setdefault("TWOFOLD_CACHE", os.path.join(t.WORK, "cache"))

LORENZ = t.write("lorenz.yaml", t.lorenz_ensemble(120))

JEFFREY = t.write("jeffrey.yaml", t.JEFFREY_SMOOTHED)


LORENZ853 = t.write("lorenz853.yaml", open(LORENZ).read().replace("  t_end: 4", "  method: dop853\n  t_end: 4"))
JEFFREY0 = t.write("jeffrey0.yaml", open(JEFFREY).read().replace("beta: 0.01", "beta: 0"))
EQUATIONS = t.write("equations.yaml", """job: ensemble
model:
  equations:
    name: lane-check
    state: [x, y, z]
    parameters: {a: {default: 1.3}, b: {default: 0.7}}
    field:
      x: "a*(y - x) + sin(x*y)^2 - atan2(y, x) + min(x, y) - max(0.1, z)/(2 + abs(z))"
      y: "x*(b - z) - y/(1 + z^2) + exp(-t*x)*cosh(z/10) + sign(x)*0.01"
      z: "x*y - b*z + sqrt(1 + x^2)*log(2 + y^2) + tanh(a*z) - z^3/100 + pow(abs(x) + 1, b)/10"
initial:
  state: [0.5, 0.2, 0.3]
  spread: 0.1
integrator:
  t_end: 1
  rtol: 1.0e-9
  atol: 1.0e-9
ensemble:
  members: 40
""")
EQUATIONS853 = t.write("equations853.yaml",
                       open(EQUATIONS).read().replace("  t_end: 1", "  method: dop853\n  t_end: 1"))
shown = subprocess.run([t.TWOFOLD, "model", "show", EQUATIONS], capture_output=True, text=True)
t.check("rhs_lanes};" in shown.stdout,
        "model.equations: the generated flow has a lanes field (rhs_lanes in its ops)")


# Filippov members whose field is a lanes slip field of their own: the relay kernel's, and the
# one the expression compiler emits for a model.equations Filippov model (the third-order relay
# feedback system at lam 5, crossings and slides); auto takes lanes for both.
RELAY = t.write("relay.yaml", """job: ensemble
model:
  name: relay
  params: {a: 1, b: 0.2}
initial:
  state: [0.3, -2.0]
  spread: 0.2
integrator:
  t_end: 8
  rtol: 1.0e-10
  atol: 1.0e-12
ensemble:
  members: 40
""")
RELAY3 = t.write("relay3.yaml", "job: ensemble\nmodel:\n" + t.relay3_equations(0.05, 3, 5, 1, 1, 1)
                 + """initial:
  state: [0, 0.5, 0]
  spread: 0.1
integrator:
  t_end: 20
  rtol: 1.0e-10
  atol: 1.0e-12
ensemble:
  members: 40
""")
shown = subprocess.run([t.TWOFOLD, "model", "show", RELAY3], capture_output=True, text=True)
t.check(".slip_lanes = slip_lanes};" in shown.stdout,
        "model.equations: the generated Filippov model has a lanes slip field (slip_lanes in its ops)")

datasets, same_files = t.datasets, t.same_files


# (model, config, widths, chunks, also the default): each run is about 0.3 s
CASES = (("lorenz", LORENZ, (4, 16), (1, 13), True), ("jeffrey", JEFFREY, (16,), (1,), False),
         ("jeffrey0", JEFFREY0, (4,), (), False),
         ("equations", EQUATIONS, (4, 16), (13,), False),
         ("lorenz853", LORENZ853, (4, 16), (), False),
         ("equations853", EQUATIONS853, (4,), (), False),
         ("relay", RELAY, (4, 16), (7,), True), ("relay3", RELAY3, (8,), (13,), True))
for name, cfg, widths, chunks, default in CASES:
    one = t.run(cfg, f"{name}-1.h5", "integrator.lanes=1")
    t.check(one["lanes"] == 1 and one["failed"] == 0, f"{name}: lanes 1 run member by member")
    for width in widths:
        s = t.run(cfg, f"{name}-{width}.h5", f"integrator.lanes={width}")
        t.check(s["lanes"] == width, f"{name}: lanes {width} ran {s['lanes']} wide")
        same_files(name, f"{name}-1.h5", f"{name}-{width}.h5")
    for chunk in chunks:
        t.run(cfg, f"{name}-c{chunk}.h5", "integrator.lanes=8", f"ensemble.chunk={chunk}")
        same_files(name, f"{name}-1.h5", f"{name}-c{chunk}.h5")
    if name != "equations853":  # its 2-rank run would add nothing to equations' and lorenz853's
        t.run(cfg, f"{name}-r2.h5", "integrator.lanes=8", ranks=2)
        same_files(name, f"{name}-1.h5", f"{name}-r2.h5")
    if default:
        t.run(cfg, f"{name}-auto.h5")
        same_files(name, f"{name}-1.h5", f"{name}-auto.h5")
        s = t.run(cfg, f"{name}-auto.h5", "integrator.lanes=auto")  # the same, and says its width
        t.check(s["lanes"] > 1, f"{name}: auto ran {s['lanes']} wide")
for name in ("relay", "relay3"):  # the identity covers crossings and sliding
    with h5py.File(f"{name}-1.h5") as f:
        kinds = [str(k) for k in f["members/events"].attrs["kinds"]]
        totals = dict(zip(kinds, f["members/events"][()].sum(axis=0)))
    t.check(totals["crossing"] > 0 and totals["slide_start"] > 0, f"{name}: events {totals}")

def lorenz(_, x, s=10.0, r=28.0, b=8.0 / 3.0):
    return [s * (x[1] - x[0]), x[0] * (r - x[2]) - x[1], x[0] * x[1] - b * x[2]]


# The valve's bifurcation scan (impacts and extrema, DOP853): the lanes take the steps with the
# valve's lanes field and screen its events on their own samples, a step with a sign change goes
# to the member's own event loop, and every point's record (samples, counts, steps and
# evaluations) is the one-by-one run's, for any width, on 2 ranks, and under auto (which takes
# lanes for the valve, whose kernel has the lane callbacks, and none for a section expression,
# which the lanes cannot screen).
VALVE = t.write("valve.yaml", t.valve_scan(1500, 64, 16, 12))
t.check(t.run(VALVE, "valve-1.h5", "integrator.lanes=1")["lanes"] == 1, "valve: lanes 1 is off")
for width in (4, 8, 16):
    s = t.run(VALVE, f"valve-{width}.h5", f"integrator.lanes={width}")
    t.check(s["lanes"] == width, f"valve: lanes {width} ran {s['lanes']} wide")
    same_files("valve", "valve-1.h5", f"valve-{width}.h5")
t.run(VALVE, "valve-r2.h5", "integrator.lanes=8", "ensemble.chunk=7", ranks=2)
same_files("valve", "valve-1.h5", "valve-r2.h5")
s = t.run(VALVE, "valve-auto.h5", "integrator.lanes=auto")
t.check(s["lanes"] in (8, 16), f"valve: auto ran {s['lanes']} wide, not 8 or 16")
same_files("valve", "valve-1.h5", "valve-auto.h5")
s = t.run(VALVE, "valve-function.h5", "integrator.lanes=auto", "poincare.event=function",
          "poincare.function=x - 0.5", "scan.x.points=2")
t.check(s["lanes"] == 1, f"valve: auto ran {s['lanes']} wide on a section expression, not 1")
# The wheel's Fig. 5 ensemble (event-driven Filippov, DOPRI5): the lanes take the members' steps
# with the wheel's lanes slip field in slip modes and each member's own field while it sticks;
# every accepted step goes to the member's own event loop (crossings, sliding, two-fold exits
# and the draws at full stick).  Lanes 1, 4 and 8, chunks of 7 (other members side by side),
# 2 ranks, auto (lanes: the wheel has slip_lanes), and DOP853 (its extension from the lane's step).
WHEEL = t.write("wheel.yaml", open(os.path.join(t.CONFIGS, "wheel-fig5.yaml")).read()
                .replace("  t_end: 300", "  t_end: 70").replace("members: 500", "members: 40")
                .replace("trajectory_samples: 600", "trajectory_samples: 50"))
t.check(t.run(WHEEL, "wheel-1.h5", "integrator.lanes=1")["lanes"] == 1, "wheel: lanes 1 is off")
for width in (4, 8):
    s = t.run(WHEEL, f"wheel-{width}.h5", f"integrator.lanes={width}")
    t.check(s["lanes"] == width, f"wheel: lanes {width} ran {s['lanes']} wide")
    same_files("wheel", "wheel-1.h5", f"wheel-{width}.h5")
t.run(WHEEL, "wheel-c7.h5", "integrator.lanes=8", "ensemble.chunk=7")
same_files("wheel", "wheel-1.h5", "wheel-c7.h5")
t.run(WHEEL, "wheel-r2.h5", "integrator.lanes=8", ranks=2)
same_files("wheel", "wheel-1.h5", "wheel-r2.h5")
s = t.run(WHEEL, "wheel-auto.h5", "integrator.lanes=auto")
t.check(s["lanes"] in (4, 8), f"wheel: auto ran {s['lanes']} wide, not 4 or 8")
same_files("wheel", "wheel-1.h5", "wheel-auto.h5")
t.run(WHEEL, "wheel853-1.h5", "integrator.lanes=1", "integrator.method=dop853")
t.run(WHEEL, "wheel853-4.h5", "integrator.lanes=4", "integrator.method=dop853")
same_files("wheel dop853", "wheel853-1.h5", "wheel853-4.h5")
# the slip fields continued past Sigma (model.params.continuation: 1): lanes and the members' own
# loops take the continuation alike (slip_lanes and slip bit for bit), and it is in effect
CONTINUED = "model.params.continuation=1"
t.run(WHEEL, "wheelc-1.h5", "integrator.lanes=1", CONTINUED)
t.run(WHEEL, "wheelc-8.h5", "integrator.lanes=8", "ensemble.chunk=7", CONTINUED)
same_files("wheel continued", "wheelc-1.h5", "wheelc-8.h5")
with h5py.File("wheel-1.h5") as f0, h5py.File("wheelc-1.h5") as f1:
    t.check(f0["members/rhs_evals"][()].sum() > f1["members/rhs_evals"][()].sum(),
            "wheel: the continuation is in effect (fewer evaluations)")
with h5py.File("wheel-1.h5") as f:
    kinds = f["members/events"].attrs["kinds"]
    kinds = kinds.split(",") if isinstance(kinds, str) else [str(k) for k in kinds]
    totals = dict(zip(kinds, f["members/events"][()].sum(axis=0)))
# the identity covers every route through a member's loop: slip, sliding, the two-fold, full stick
for kind in ("crossing", "slide_start", "twofold", "intersection_choice"):
    t.check(totals.get(kind, 0) > 0, f"wheel: the members' events include {kind} ({totals})")

with h5py.File("valve-1.h5") as f:
    recorded, impacts = f["members/poincare_recorded"][()], f["members/impacts"][()]
    seat = f["members/poincare"][()].reshape(len(recorded), -1, 4)
t.check(recorded.min() > 0 and impacts[:, 0].max() > 0 and impacts[:, 3].min() > 0,
        f"valve: every point recorded events, impacts and extrema ({recorded.min()} .. "
        f"{recorded.max()} recorded, up to {impacts[:, 0].max()} impacts)")
# an impact is on the seat (x = 0): the recorded x of every point is >= 0 and some are 0
xs = seat[:, :, 1][np.isfinite(seat[:, :, 1])]
t.check(xs.min() >= -1e-8 and np.any(np.abs(xs) < 1e-8),
        f"valve: recorded lifts are on or above the seat (min {xs.min():.2e})")

# member 7 of each Lorenz ensemble against an independent integration from its initial state
for name, packed in (("lorenz", "lorenz-c13.h5"), ("lorenz853", "lorenz853-16.h5")):
    with h5py.File(packed) as f:
        x0, x1 = f["members/initial_state"][7], f["members/final_state"][7]
        samples = f["members/trajectory"][7] if "members/trajectory" in f else None
    ref = solve_ivp(lorenz, (0, 4), x0, method="DOP853", rtol=1e-13, atol=1e-13,
                    t_eval=np.linspace(0, 4, 5))
    err = np.max(np.abs(x1 - ref.y[:, -1]))
    t.check(err < 1e-5, f"{name} member 7 at t = 4 within 1e-5 of scipy's DOP853 (off by {err:.1e})")
    t.check(samples is not None, f"{name}: trajectory samples written")
    if samples is not None:
        serr = np.nanmax(np.abs(np.asarray(samples).reshape(5, -1)[:, -3:] - ref.y.T))
        t.check(serr < 1e-5, f"{name} member 7's samples (dense output) within 1e-5 (off by {serr:.1e})")

# rejected_steps against DOPRI5 and its controller written out from their definition
C = [0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0]
A = [[], [1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
     [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
     [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
     [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
E = [71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40]


def dopri5_counts(f, x, t_end, h0, rtol, atol):
    """Accepted steps and rejected attempts of Dormand-Prince 5(4) on a scalar x' = f(t, x) from
    t = 0 with first step h0, under Hairer's PI controller (safety 0.9, beta 0.04, exponent
    1/5 - 0.75 beta, step ratio in [1/5, 10]; a rejection shrinks by at most 5), the last step
    cut to end at t_end."""
    expo1, beta, safety, fac_lo, fac_hi = 0.2 - 0.75 * 0.04, 0.04, 0.9, 0.1, 5.0
    t, h_next, log_prev, steps, rejected = 0.0, h0, math.log(1e-4), 0, 0
    k0 = f(t, x)
    while t < t_end:
        steps += 1
        while True:
            h = h_next
            last = t + h >= t_end
            h = t_end - t if last else h
            k = [k0]
            for row in A[1:]:
                acc = 0.0
                for a, kj in zip(row, k):
                    acc += a * kj
                k.append(f(t + C[len(k)] * h, x + h * acc))
            x_new = x + h * acc  # row 6 is b (first same as last)
            v = h * (E[0] * k[0] + E[2] * k[2] + E[3] * k[3] + E[4] * k[4] + E[5] * k[5]
                     + E[6] * k[6])
            err = abs(v / (atol + rtol * max(abs(x), abs(x_new))))
            log_err = math.log(max(err, 1e-16))
            if err <= 1.0:
                fac = min(fac_hi, max(fac_lo, math.exp(expo1 * log_err - beta * log_prev) / safety))
                log_prev = max(log_err, math.log(1e-4))
                if not last or h / fac > h_next:
                    h_next = h / fac
                t = t_end if last else t + h
                x, k0 = x_new, k[6]
                break
            rejected += 1
            h_next = h / min(fac_hi, math.exp(expo1 * log_err) / safety)
    return steps, rejected


FORCED = t.write("forced.yaml", """job: ensemble
model:
  equations:
    name: forced-decay
    state: [x]
    parameters: {lam: {default: 3}}
    field:
      x: "-lam*x + 10*sin(3*t)"
initial:
  state: [1]
  spread: 0.5
integrator:
  t_end: 12
  h0: 2
  rtol: 1.0e-6
  atol: 1.0e-9
ensemble:
  members: 12
output:
  columns: [initial_state, steps, rejected_steps]
""")
t.run(FORCED, "forced-1.h5", "integrator.lanes=1")
t.run(FORCED, "forced-4.h5", "integrator.lanes=4")
same_files("forced", "forced-1.h5", "forced-4.h5")
with h5py.File("forced-1.h5") as f:
    x0 = f["members/initial_state"][()].reshape(-1)
    got = list(zip(f["members/steps"][()], f["members/rejected_steps"][()]))
want = [dopri5_counts(lambda s, y: -3.0 * y + 10.0 * math.sin(3.0 * s), float(x), 12.0, 2.0,
                      1e-6, 1e-9) for x in x0]
t.check(got == want and sum(r for _, r in want) > 3 * len(want),
        f"rejected_steps: (steps, rejected) of every member as DOPRI5's controller gives them "
        f"({sum(r for _, r in got)} rejections in all; got {got[:3]}..., want {want[:3]}...)")
with h5py.File("lorenz-1.h5") as f:
    t.check("members/rejected_steps" not in f, "rejected_steps: written only where named")

# integrator.lanes takes auto, 1, 4, 8 or 16 and names the key otherwise
res = subprocess.run([t.TWOFOLD, "run", LORENZ, "-o", "bad.h5", "--overwrite", "--set",
                      "integrator.lanes=3"], capture_output=True, text=True)
t.check(res.returncode == 2 and "integrator.lanes" in res.stderr,
        f"lanes: 3 is refused naming the key (exit {res.returncode}: {res.stderr.strip()[:120]})")
t.finish()
