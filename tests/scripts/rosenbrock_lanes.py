#!/usr/bin/python3
"""rosenbrock_lanes.py — stiff members side by side (integrator.lanes) on the Rosenbrock stepper
give every member the numbers it gets alone, bit for bit: the results files' datasets are
byte-equal for lanes 1, 4 and 8 (8 also the default on a CPU with AVX-512) and on 2 ranks, and
for lanes 1 and 8 under integrator.controller_math fast.

The smoothed wheel (configs/wheel-smoothed.yaml: model.smoothing, the convex field, stiff at
eps 1e-5): the lanes take each member's Jacobian (the smoothed field's, through the wheel's
slip_sides_lanes), the factors of I / (h gamma) - J with the member's own pivots, the stages,
the error norm, accept/reject and Gustafsson's prediction.  RODAS4 with its dense output for
trajectory samples and the rejected attempts counted (the opt-in column rejected_steps, which
must be nonzero for the identity to cover rejections); ROS3P (its Hermite samples); Jeffrey's
oscillator smoothed by its own eps (its lanes field and lanes Jacobian).  That the numbers are
right is tests/scripts/smooth_wheel.py's: the default it holds against scipy's Radau runs in
lanes."""
import os

import h5py

import testlib as t

t.setup()
os.environ.setdefault("TWOFOLD_CACHE", os.path.join(t.WORK, "cache"))


datasets, same_files = t.datasets, t.same_files


SMOOTH = t.write("smooth.yaml", open(os.path.join(t.CONFIGS, "wheel-smoothed.yaml")).read()
                 .replace("  t_end: 300", "  t_end: 20").replace("members: 64", "members: 40")
                 .replace("epsilon: 1.0e-3", "epsilon: 1.0e-5")
                 + "  trajectory_samples: 9\n"
                 "  columns: [final_state, steps, rejected_steps, trajectory]\n")
t.check(t.run(SMOOTH, "smooth-1.h5", "integrator.lanes=1")["lanes"] == 1,
        "smoothed wheel: lanes 1 is off")
for width in (4, 8):
    s = t.run(SMOOTH, f"smooth-{width}.h5", f"integrator.lanes={width}")
    t.check(s["lanes"] == width and s["integrator"] == "rodas4",
            f"smoothed wheel: lanes {width} ran {s['lanes']} wide on {s['integrator']}")
    same_files("smoothed wheel", "smooth-1.h5", f"smooth-{width}.h5")
t.run(SMOOTH, "smooth-r2.h5", "integrator.lanes=8", ranks=2)
same_files("smoothed wheel", "smooth-1.h5", "smooth-r2.h5")
s = t.run(SMOOTH, "smooth-auto.h5", "integrator.lanes=auto")
t.check(s["lanes"] in (4, 8), f"smoothed wheel: auto ran {s['lanes']} wide, not 4 or 8")
same_files("smoothed wheel", "smooth-1.h5", "smooth-auto.h5")
with h5py.File("smooth-1.h5") as f:
    rejected, steps = int(f["members/rejected_steps"][()].sum()), int(f["members/steps"][()].sum())
t.check(rejected > 0 and steps > 40 * 50,
        f"smoothed wheel: the identity covers {steps} steps and {rejected} rejected attempts")

# integrator.controller_math fast: the lanes' controller and Gustafsson's prediction take vmath's
# exp and log as the scalar stepper's do, so the identity holds there too (and fast is in effect:
# its bits differ from libm's somewhere in these steps)
FAST = "integrator.controller_math=fast"
t.run(SMOOTH, "fast-1.h5", "integrator.lanes=1", FAST)
s = t.run(SMOOTH, "fast-8.h5", "integrator.lanes=8", FAST)
t.check(s["lanes"] == 8, f"smoothed wheel, fast controller: lanes 8 ran {s['lanes']} wide")
same_files("smoothed wheel, fast controller", "fast-1.h5", "fast-8.h5")
t.check(datasets("fast-1.h5") != datasets("smooth-1.h5"),
        "smoothed wheel: controller_math fast changes the steps (it reaches the Rosenbrock lanes)")

t.run(SMOOTH, "ros3p-1.h5", "integrator.lanes=1", "integrator.rosenbrock=ros3p")
s = t.run(SMOOTH, "ros3p-4.h5", "integrator.lanes=4", "integrator.rosenbrock=ros3p")
t.check(s["integrator"] == "ros3p", f"ros3p: ran {s['integrator']}")
same_files("smoothed wheel, ros3p", "ros3p-1.h5", "ros3p-4.h5")

JEFFREY = t.write("jeffrey.yaml", """job: ensemble
model:
  name: jeffrey-oscillator
  params: {k: 1, c: 0.1, N: 1, a: 1.5, omega: 0.2, rho: 2, beta: 0.01, eps: 1.0e-4}
initial:
  state: [0, 0, 1, 0]
  spread: 0.1
integrator:
  method: rosenbrock
  t_end: 5
  rtol: 1.0e-8
  atol: 1.0e-10
ensemble:
  members: 40
output:
  trajectory_samples: 5
""")
t.run(JEFFREY, "jeffrey-1.h5", "integrator.lanes=1")
s = t.run(JEFFREY, "jeffrey-4.h5", "integrator.lanes=4")
t.check(s["lanes"] == 4, f"smoothed Jeffrey: lanes 4 ran {s['lanes']} wide")
same_files("smoothed Jeffrey", "jeffrey-1.h5", "jeffrey-4.h5")
t.finish()
