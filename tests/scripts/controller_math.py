#!/usr/bin/python3
"""controller_math.py — integrator.controller_math: fast, the step-size controller's exp and log
from vmath.h in every lane at once and one by one (tests/unit/test_fast_control.c holds them to
long double libm).

- A member's numbers do not depend on the lanes: the results files' datasets are byte-equal for
  lanes 1, 4, 8, 16 and 2 ranks, on the Lorenz ensemble (the model's lanes field, samples from
  the lanes' dense output), a short scan of the pressure-relief valve (impacts and extrema under
  DOP853: the lanes take the steps, each member's own event loop the events, both with the fast
  controller) and the wheel's Fig. 5 ensemble (event-driven Filippov members).
- The key is in effect: fast and exact differ on Lorenz, one by one (the scalar controller).
- Where the dynamics do not amplify rounding, fast agrees with exact far inside the tolerance:
  the harmonic oscillator x'' = -x (64 members, t = 0..50, rtol = atol = 1e-9) against its
  analytic solution x0 cos t + v0 sin t.  Both runs are within 1e-7 of it (their global error,
  about 1.6e-8); fast's step-size factors differ from exact's by at most a unit in the last place
  (1.4e-16 relative), which moves a step by as little and so the solution by about that times the
  steps taken and the local error's dependence on h: the bound is rtol / 10 = 1e-10, and every
  member takes the same number of steps (no accept/reject decision flips).
- The key is refused where there is no controller (fixed steps, an SDE method) and for a value
  other than exact or fast, with exit status 2 naming the key."""
import os
import subprocess

import h5py
import numpy as np

import testlib as t

t.setup()
os.environ.setdefault("TWOFOLD_CACHE", os.path.join(t.WORK, "cache"))
FAST = "integrator.controller_math=fast"

LORENZ = t.write("lorenz.yaml", t.lorenz_ensemble(60))
VALVE = t.write("valve.yaml", t.valve_scan(1000, 32, 8, 9))
WHEEL = t.write("wheel.yaml", open(os.path.join(t.CONFIGS, "wheel-fig5.yaml")).read()
                .replace("  t_end: 300", "  t_end: 50").replace("members: 500", "members: 24")
                .replace("trajectory_samples: 600", "trajectory_samples: 20"))


same_files = t.same_files


# (name, config, widths on one rank, width on 2 ranks): every width and 2 ranks once
for name, cfg, widths, width2 in (("lorenz", LORENZ, (4, 16), 8), ("valve", VALVE, (8, 16), 4),
                                  ("wheel", WHEEL, (4, 16), 8)):
    s = t.run(cfg, f"{name}-1.h5", FAST, "integrator.lanes=1")
    t.check(s["lanes"] == 1 and s["failed"] == 0, f"{name}: fast, lanes 1 ran member by member")
    for width in widths:
        s = t.run(cfg, f"{name}-{width}.h5", FAST, f"integrator.lanes={width}")
        t.check(s["lanes"] == width, f"{name}: lanes {width} ran {s['lanes']} wide")
        same_files(name, f"{name}-1.h5", f"{name}-{width}.h5")
    t.run(cfg, f"{name}-r2.h5", FAST, f"integrator.lanes={width2}", ranks=2)
    same_files(name, f"{name}-1.h5", f"{name}-r2.h5")

t.run(LORENZ, "lorenz-exact.h5", "integrator.lanes=1")
with h5py.File("lorenz-1.h5") as f, h5py.File("lorenz-exact.h5") as g:
    fast, exact = f["members/final_state"][()], g["members/final_state"][()]
t.check(not np.array_equal(fast, exact), "lorenz: fast and exact differ (the key is in effect)")
t.check(np.allclose(fast, exact, rtol=0, atol=1e-3),
        f"lorenz: fast within 1e-3 of exact at t = 4 ({np.abs(fast - exact).max():.3g})")

HARMONIC = t.write("harmonic.yaml", """job: ensemble
model:
  name: harmonic
initial:
  state: [1, 0]
  spread: 0.1
integrator:
  t_end: 50
  rtol: 1.0e-9
  atol: 1.0e-9
ensemble:
  members: 64
""")
t.run(HARMONIC, "harmonic-exact.h5", "integrator.lanes=8")
t.run(HARMONIC, "harmonic-fast.h5", FAST, "integrator.lanes=8")
with h5py.File("harmonic-exact.h5") as f, h5py.File("harmonic-fast.h5") as g:
    x0, exact, steps_exact = (f["members/" + k][()] for k in ("initial_state", "final_state",
                                                               "steps"))
    fast, steps_fast = g["members/final_state"][()], g["members/steps"][()]
T = 50.0
analytic = np.stack([x0[:, 0] * np.cos(T) + x0[:, 1] * np.sin(T),
                     -x0[:, 0] * np.sin(T) + x0[:, 1] * np.cos(T)], axis=1)
for label, x in (("exact", exact), ("fast", fast)):
    err = np.abs(x - analytic).max()
    t.check(err < 1e-7, f"harmonic: {label} within 1e-7 of the analytic solution ({err:.3g})")
diff = np.abs(fast - exact).max()
t.check(0 < diff < 1e-10, f"harmonic: fast differs from exact by {diff:.3g} (bound 1e-10)")
t.check(np.array_equal(steps_fast, steps_exact), "harmonic: fast takes exact's steps per member")

for sets, what in (((FAST, "integrator.step=fixed", "integrator.h0=0.01"), "fixed steps"),
                   ((FAST, "integrator.method=euler-maruyama", "model.params.noise=0.1"),
                    "euler-maruyama"),
                   (("integrator.controller_math=quick",), "exact, fast")):
    cmd = [t.TWOFOLD, "run", LORENZ, "-o", "refused.h5", "--overwrite", "--quiet"]
    for s in sets:
        cmd += ["--set", s]
    res = subprocess.run(cmd, capture_output=True, text=True)
    t.check(res.returncode == 2 and "integrator.controller_math" in res.stderr
            and what in res.stderr, f"refused ({what}): exit {res.returncode}: {res.stderr}")

t.finish()
