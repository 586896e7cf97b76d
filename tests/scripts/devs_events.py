"""devs_events.py — events of the user's own on the measured signal of a DEVS model.

The signal is xbar = X/N (X_i = sum_k x_i^k after each step): /devs/X of the lyapunov job
(divided by N here), the samples of the bifurcation job.  An event is a sign change of
g = xbar - poincare.level (or poincare.function of xbar, the parameters and t = the step)
between consecutive steps in poincare.direction (up: g_{i-1} < 0 <= g_i, down:
g_{i-1} > 0 >= g_i), recorded at step i as (step, xbar_i) after poincare.transient events,
count rows NaN-padded.  numpy finds the events of the series the run wrote to the same file
and holds them against /devs/events (lyapunov) and the members' events (bifurcation)
exactly, for a level and a function with t, for count filled and padded; both jobs' events
are the same bits on 1 and 2 ranks (and the lyapunov job's after a stop and --resume); reset, stop, extremum, poincare.tol, an unknown name in the
function, and the section in the scan job are refused naming file, line and key.
"""
import numpy as np
import h5py

import testlib as T

T.setup()
N = 10


def expected(xbar, first_step, g, direction, transient, count):
    rows = np.full((count, 2), np.nan)
    steps = first_step + np.arange(len(xbar))
    gv = [g(x, s) for x, s in zip(xbar, steps)]
    seen = found = 0
    for i in range(1, len(xbar)):
        up, down = gv[i - 1] < 0 <= gv[i], gv[i - 1] > 0 >= gv[i]
        if not ((direction in ("both", "up") and up) or (direction in ("both", "down") and down)):
            continue
        seen += 1
        if seen <= transient:
            continue
        rows[found] = (steps[i], xbar[i])
        found += 1
        if found == count:
            break
    return rows, found


def same(a, b):
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


LY = T.write("ly.yaml", f"""job: lyapunov
model:
  name: devs-logistic
  params: {{N: {N}, q: 0.5, mu: 3.9, steps: 2000, transient: 100}}
lyapunov:
  blocks: 2
  series: {{samples: 1000}}
poincare:
  event: level
  level: 0.55
  direction: up
  transient: 3
  count: 20
output:
  file: ly.h5
""")

cases = [
    ("level up", [], lambda x, s: x - 0.55, "up", 3, 20),
    ("function with t, both, padded",
     ["poincare.event=function", "poincare.function=xbar - mu/7.8 - 1e-4*t",
      "poincare.direction=both", "poincare.transient=0", "poincare.count=3000"],
     lambda x, s: x - 3.9 / 7.8 - 1e-4 * s, "both", 0, 3000),
    ("level down", ["poincare.direction=down", "poincare.level=0.45"],
     lambda x, s: x - 0.45, "down", 3, 20),
]
for name, sets, g, direction, transient, count in cases:
    T.run(LY, "ly.h5", *sets)
    with h5py.File("ly.h5") as f:
        X = f["devs/X"][:]
        first = int(f["devs"].attrs["first_step"])
        got = f["devs/events"][:]
        recorded = int(f["devs/events"].attrs["recorded"])
    rows, found = expected(X / N, first, g, direction, transient, count)
    T.check(found > 0 and same(got, rows) and recorded == found,
            f"lyapunov, {name}: {found} events, /devs/events equals numpy's ({recorded} recorded)")
    if name.startswith("function"):
        T.check(found < count, f"lyapunov, {name}: {found} < count, the rest NaN")

T.run(LY, "ly2.h5", ranks=2)
T.run(LY, "ly1.h5")
with h5py.File("ly1.h5") as a, h5py.File("ly2.h5") as b:
    T.check(same(a["devs/events"][:], b["devs/events"][:]) and
            same(a["devs/X"][:], b["devs/X"][:]), "lyapunov: 1 and 2 ranks, identical events")

T.run(LY, "part.h5", extra=("--stop-after", "700"), code=3)
with h5py.File("part.h5") as f:
    stopped = "devs/checkpoint" in f and "devs/events" not in f
T.run(LY, "part.h5", extra=("--resume",))
with h5py.File("ly1.h5") as a, h5py.File("part.h5") as b:
    T.check(stopped and b.attrs.get("resumed") == 1 and
            same(a["devs/events"][:], b["devs/events"][:]),
            "lyapunov: stopped at step 700 and resumed, identical events")

BI = T.write("bi.yaml", f"""job: bifurcation
model:
  name: devs-logistic
  params: {{N: {N}, q: 0.5, steps: 300, transient: 100}}
bifurcation:
  x: {{param: mu, min: 3.4, max: 3.9, points: 4}}
poincare:
  event: function
  function: xbar - 0.2*mu + 0.2
  direction: both
  transient: 2
  count: 40
output:
  file: bi.h5
""")
T.run(BI, "bi1.h5")
T.run(BI, "bi2.h5", ranks=2)
with h5py.File("bi1.h5") as a, h5py.File("bi2.h5") as b:
    samples, grid, ev = a["members/samples"][:], a["members/grid"][:], a["members/events"][:]
    T.check(same(ev, b["members/events"][:]), "bifurcation: 1 and 2 ranks, identical events")
ok, total = True, 0
for m in range(len(samples)):
    mu = grid[m][0]
    rows, found = expected(samples[m], 0, lambda x, s: x - 0.2 * mu + 0.2, "both", 2, 40)
    ok = ok and same(ev[m].reshape(40, 2), rows)
    total += found
T.check(ok and total > 0, f"bifurcation: every point's events equal numpy's ({total} in all)")



def variant(name, base, old, new):
    """A copy of config `base` with one line changed, so that the refusal names its line."""
    with open(base) as f:
        text = f.read()
    assert old in text
    return T.write(name, text.replace(old, new))


for key, line, needle in [
        ("action", "  action: reset", "reset is not defined for a DEVS model"),
        ("action", "  action: stop", "stop is not defined for a DEVS model"),
        ("tol", "  tol: 1.0e-6", "a DEVS records its events without the early stop")]:
    cfg = variant(f"bad_{key}.yaml", LY, "  count: 20\n", f"  count: 20\n{line}\n")
    T.refused(cfg, [], f"bad_{key}.yaml:14: key 'poincare.{key}': {needle}")
cfg = variant("bad_event.yaml", LY, "event: level", "event: extremum")
T.refused(cfg, [], "bad_event.yaml:9: key 'poincare.event': extremum needs the derivative along "
          "a continuous orbit, and the signal xbar of the DEVS 'devs-logistic'")
cfg = variant("bad_name.yaml", BI, "function: xbar - 0.2*mu", "function: xbar - 0.2*x")
T.refused(cfg, [], "bad_name.yaml:9: key 'poincare.function': column 12: unknown name 'x' "
          "(known: xbar, N, q, mu")
cfg = variant("bad_scan.yaml", LY, "job: lyapunov", "job: scan\nscan:\n  x: {param: mu, min: 3.5, "
              "max: 3.9, points: 3}")
T.refused(cfg, [], "bad_scan.yaml:10: key 'poincare': the scan job on a DEVS model")
T.finish()
