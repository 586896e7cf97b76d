#!/usr/bin/python3
"""field_math.py — model.field_math: fast, a model's fields with twofold/fast_math.h's sin, cos
and atan2 (tests/unit/test_fast_math.c holds them to long double libm) in its scalar and lane
callbacks alike (the model's fast_math variant).

- A member's numbers do not depend on the lanes under fast either: the results files' datasets
  are byte-equal for lanes 1, 4, 16, a chunk of 7 and 2 ranks on the wheel's Fig. 5 ensemble
  (event-driven Filippov: its slip_lanes in the lanes, its scalar slip in each member's event
  loop), the smoothed wheel under the Rosenbrock lanes (its slip_sides_lanes with Jacobians)
  and the smoothed Jeffrey oscillator under DOPRI5 (rhs_lanes) and Rosenbrock (jacobian_lanes).
- The key is in effect (fast and exact differ on the wheel) and, where the dynamics do not
  amplify rounding, fast agrees with exact far inside the tolerance: the smoothed Jeffrey
  oscillator (40 members, t = 0..5, rtol 1e-8) within 1e-12 max(|x|, 1), member by member, with
  the same steps.  On the wheel's Fig. 5 members the events are the same, member by member and
  kind by kind, and every two-fold exit leaves on the same side by the same kind of exit.
- The key is refused for a model without a fast variant and for a value other than exact or
  fast, with exit status 2 naming the key."""
import os
import subprocess

import h5py
import numpy as np

import testlib as t

t.setup()
os.environ.setdefault("TWOFOLD_CACHE", os.path.join(t.WORK, "cache"))
FAST = "model.field_math=fast"
same_files = t.same_files

WHEEL = t.write("wheel.yaml", open(os.path.join(t.CONFIGS, "wheel-fig5.yaml")).read()
                .replace("  t_end: 300", "  t_end: 50").replace("members: 500", "members: 24")
                .replace("trajectory_samples: 600", "trajectory_samples: 20"))
SMOOTH = t.write("smooth.yaml", open(os.path.join(t.CONFIGS, "wheel-smoothed.yaml")).read()
                 .replace("  t_end: 300", "  t_end: 10").replace("members: 64", "members: 12")
                 .replace("epsilon: 1.0e-3", "epsilon: 1.0e-4"))
JEFFREY = t.write("jeffrey.yaml", t.JEFFREY_SMOOTHED)
JEFFREY_STIFF = t.write("jeffrey-stiff.yaml", open(JEFFREY).read()
                        .replace("eps: 0.05", "eps: 1.0e-4")
                        .replace("method: dopri5", "method: rosenbrock"))

# (name, config, widths on one rank, chunk of 7, width on 2 ranks)
for name, cfg, widths, chunk, width2 in (("wheel", WHEEL, (4, 16), True, 8),
                                         ("smoothed wheel", SMOOTH, (8,), False, None),
                                         ("jeffrey", JEFFREY, (16,), False, None),
                                         ("jeffrey rosenbrock", JEFFREY_STIFF, (8,), False, None)):
    stem = name.replace(" ", "-")
    s = t.run(cfg, f"{stem}-1.h5", FAST, "integrator.lanes=1")
    t.check(s["lanes"] == 1 and s["failed"] == 0, f"{name}: fast, lanes 1 ran member by member")
    for width in widths:
        s = t.run(cfg, f"{stem}-{width}.h5", FAST, f"integrator.lanes={width}")
        t.check(s["lanes"] == width, f"{name}: fast, lanes {width} ran {s['lanes']} wide")
        same_files(name, f"{stem}-1.h5", f"{stem}-{width}.h5")
    if chunk:
        t.run(cfg, f"{stem}-c7.h5", FAST, "integrator.lanes=8", "ensemble.chunk=7")
        same_files(name, f"{stem}-1.h5", f"{stem}-c7.h5")
    if width2:
        t.run(cfg, f"{stem}-r2.h5", FAST, f"integrator.lanes={width2}", ranks=2)
        same_files(name, f"{stem}-1.h5", f"{stem}-r2.h5")


def members(path, *names):
    with h5py.File(path) as f:
        return [f["members/" + n][()] for n in names]


# the wheel: fast is in effect, and the members' events and exits are exact's
t.run(WHEEL, "wheel-exact.h5", "integrator.lanes=8")
fast_final, fast_events, fast_exits = members("wheel-1.h5", "final_state", "events", "exits")
exact_final, exact_events, exact_exits = members("wheel-exact.h5", "final_state", "events", "exits")
t.check(not np.array_equal(fast_final, exact_final), "wheel: fast and exact differ (in effect)")
t.check(np.array_equal(fast_events, exact_events),
        "wheel: every member's events, kind by kind, are exact's under fast")
with h5py.File("wheel-1.h5") as f:
    fields = [str(x) for x in f["members/exits"].attrs["fields"]]
    width = int(f["members/exits"].attrs["slot_width"])
verdict = [fields.index("side"), fields.index("kind")]
fe, ee = fast_exits.reshape(len(fast_exits), -1, width), exact_exits.reshape(len(exact_exits), -1, width)
t.check(np.array_equal(np.isnan(fe), np.isnan(ee)) and
        np.array_equal(fe[..., verdict], ee[..., verdict], equal_nan=True),
        "wheel: every two-fold exit leaves on exact's side by exact's kind of exit")

# Jeffrey's smoothed oscillator (not chaotic over t = 0..5): fast within 1e-12 of exact
t.run(JEFFREY, "jeffrey-exact.h5", "integrator.lanes=8")
fast_final, fast_steps = members("jeffrey-1.h5", "final_state", "steps")
exact_final, exact_steps = members("jeffrey-exact.h5", "final_state", "steps")
rel = np.abs(fast_final - exact_final) / np.maximum(np.abs(exact_final), 1.0)
t.check(0 < rel.max() < 1e-12,
        f"jeffrey: fast differs from exact by {rel.max():.3g} of max(|x|, 1) (bound 1e-12, not 0)")
t.check(np.array_equal(fast_steps, exact_steps), "jeffrey: fast takes exact's steps per member")

LORENZ = t.write("lorenz.yaml", "job: ensemble\nmodel:\n  name: lorenz\nintegrator:\n  t_end: 1\n")
for sets, what in (((FAST,), "has no fast variant"),
                   (("model.field_math=quick",), "exact, fast")):
    cmd = [t.TWOFOLD, "run", LORENZ, "-o", "refused.h5", "--overwrite", "--quiet"]
    for s in sets:
        cmd += ["--set", s]
    res = subprocess.run(cmd, capture_output=True, text=True)
    t.check(res.returncode == 2 and "model.field_math" in res.stderr and what in res.stderr,
            f"refused ({what}): exit {res.returncode}: {res.stderr}")

t.finish()
