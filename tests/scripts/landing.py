"""landing.py — integrator.landing: the state at a located event from the step's dense output
(dense) instead of a retake of the step (retake, the default).

* The harmonic oscillator x' = v, v' = -x (model.equations) from (1, 0) has x = cos t, so its
  downward crossings of x = 0 (poincare.event function "x", action log) are at
  t_k = pi/2 + 2 k pi, in closed form here.  At rtol 1e-8 both landings record the first nine
  within 1e-7 of them (the global error of the integration, a few 1e-8, dominates; DOPRI5's
  dense output is 4th order), with x within 1e-10 of 0; and dense is not retake (other bits).
* The valve (impact engine, DOP853, its lanes screening the events and handing a step with a
  sign change to the point's own event loop): a short scan under dense gives the same bits with
  lanes 1 and 4 (a member's result does not depend on the lanes), other bits than retake, and
  records (t, x, v, p) within 1e-6 of retake's relative to each component's largest value
  (about 6e-8 here: the impacts amplify differences of the size of rtol 1e-9).
* dense is refused, with file, line and key, for a Filippov model (the wheel: its slip field
  has a kink at the event) and for a flow without events.
"""
import math
import os

import h5py
import numpy as np

import testlib as T

T.setup()
os.environ.setdefault("TWOFOLD_CACHE", os.path.join(T.WORK, "cache"))
os.makedirs(os.environ["TWOFOLD_CACHE"], mode=0o700, exist_ok=True)

OSC = T.write("osc.yaml", """job: ensemble
model:
  equations:
    name: oscillator
    state: [x, v]
    field: {x: "v", v: "-x"}
initial: {state: [1.0, 0.0]}
integrator: {t_end: 60, rtol: 1.0e-8, atol: 1.0e-10}
ensemble: {members: 1}
poincare:
  event: function
  function: "x"
  direction: down
  count: 9
  action: log
""")

records = {}
for landing in ("retake", "dense"):
    T.run(OSC, f"osc-{landing}.h5", f"integrator.landing={landing}")
    with h5py.File(f"osc-{landing}.h5") as f:
        p = f["members/poincare"][0].reshape(-1, 3)
        recorded = int(f["members/poincare_recorded"][0])
    records[landing] = p
    exact = math.pi / 2 + 2 * math.pi * np.arange(len(p))
    err = float(np.abs(p[:, 0] - exact).max())
    T.check(recorded == 9 and err < 1e-7,
            f"oscillator, landing {landing}: 9 crossings at pi/2 + 2 k pi within {err:.1e} (< 1e-7)")
    T.check(float(np.abs(p[:, 1]).max()) < 1e-10, f"oscillator, landing {landing}: x = 0 there")
T.check(not np.array_equal(records["retake"], records["dense"]),
        "oscillator: dense lands otherwise than retake")

VALVE = T.write("valve.yaml", T.valve_scan(200, 32, 8, 8))
T.run(VALVE, "valve-retake.h5", "integrator.lanes=1")
for lanes in (1, 4):
    T.run(VALVE, f"valve-dense-{lanes}.h5", f"integrator.lanes={lanes}", "integrator.landing=dense")
T.same_files("valve, dense, lanes 4 against 1", "valve-dense-1.h5", "valve-dense-4.h5")
with h5py.File("valve-retake.h5") as a, h5py.File("valve-dense-1.h5") as b:
    pa, pb = a["members/poincare"][()], b["members/poincare"][()]
pa, pb = pa.reshape(pa.shape[0], -1, 4), pb.reshape(pb.shape[0], -1, 4)
diff = float(np.nanmax(np.nanmax(np.abs(pa - pb), axis=(0, 1)) / np.nanmax(np.abs(pa), axis=(0, 1))))
T.check(not np.array_equal(pa, pb, equal_nan=True) and diff < 1e-6,
        f"valve: dense records within {diff:.1e} of retake's (< 1e-6), not the same bits")

WHEEL = os.path.join(T.CONFIGS, "wheel-fig5.yaml")
T.refused(WHEEL, ["integrator.landing=dense"],
          "--set integrator.landing=dense: key 'integrator.landing': dense is not taken by Filippov")
FLOW = T.write("flow.yaml", """job: ensemble
model: {name: lorenz}
initial: {state: [1, 1, 20]}
integrator: {t_end: 1, landing: dense}
""")
T.refused(FLOW, [], "flow.yaml:4: key 'integrator.landing'")
# the jobs that run only the stepper types (Lyapunov spectra, stationary scans) refuse it too
T.refused(os.path.join(T.CONFIGS, "stick-slip-spectrum.yaml"), ["integrator.landing=dense"],
          "key 'integrator.landing': dense is taken by the event runs of impact models")
T.finish()
