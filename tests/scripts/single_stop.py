"""single_stop.py — jobs that are one computation stop at a safe point, keep what they did,
exit 3 and say that --resume starts them again; long scan lines and slip thresholds too.

Stops come from --stop-after N (counting Lyapunov blocks or series samples, trajectory
samples, bisection runs of slip-onset, points of a stationary scan) and, once, from SIGTERM sent while the run stands
still after --pause-after N (so nothing races the clock).  Checked against independent
values: the sum of each Lorenz block's exponents is the trace -(sigma + 1 + beta), each Henon
block's is log b, the ball's rolling exponents are -5K/(7m); sample times are those of
numpy's linspace.  The work kept equals the same rows of an uninterrupted run, bit for bit."""
import os
import signal
import json
import subprocess
import time

import h5py
import numpy as np
import testlib as T

T.setup()
C = T.CONFIGS


def run(config, out, *args, expect=3):
    """twofold run; returns stderr.  `args`: --set values as "k=v", other options as is."""
    cmd = [T.TWOFOLD, "run", config, "-o", out, "--overwrite"]
    for a in args:
        cmd += ["--set", a] if "=" in a and not a.startswith("-") else [a]
    r = subprocess.run(cmd, capture_output=True, text=True)
    T.check(r.returncode == expect, f"{os.path.basename(config)} {' '.join(args)}: exit "
            f"{r.returncode} (expected {expect}) {r.stderr.strip()[-300:]}")
    return r.stderr


def rows(path, name):
    with h5py.File(path, "r") as f:
        return f[name][()], dict(f.attrs), dict(f[os.path.dirname(name)].attrs)


# --- lyapunov: blocks ----------------------------------------------------------------------
lorenz = os.path.join(C, "lorenz-spectrum.yaml")
err = run(lorenz, "lz3.h5", "--stop-after", "3")
T.check("starts it again from the beginning" in err, f"the message says --resume restarts: {err!r}")
run(lorenz, "lz.h5", expect=0)
part, attrs, g = rows("lz3.h5", "lyapunov/blocks")
full, _, _ = rows("lz.h5", "lyapunov/blocks")
T.check(full.shape == (20, 3), f"lorenz: /lyapunov/blocks is blocks x exponents {full.shape}")
trace = -(10 + 1 + 8 / 3)
T.check(attrs["complete"] == 0 and g["blocks_done"] == 3 and part.shape == (3, 3),
        f"lorenz: 3 blocks kept of 20, file incomplete ({part.shape}, complete {attrs['complete']})")
T.check(np.array_equal(part, full[:3]), "lorenz: the 3 blocks equal those of the whole run")
T.check(np.all(np.abs(part.sum(axis=1) - trace) < 1e-6) and np.all(abs(part[:, 0] - 0.9056) < 0.05),
        f"lorenz blocks: sums {part.sum(axis=1)} = trace {trace:.6f}; lambda1 {part[:, 0]} near 0.9056")
err = run(lorenz, "lz3.h5", "--resume", expect=0)
T.check("again from the beginning" in err, "--resume says it starts again")
T.check(np.array_equal(rows("lz3.h5", "lyapunov/spectrum")[0], rows("lz.h5", "lyapunov/spectrum")[0]),
        "lorenz: the resumed run's spectrum equals the uninterrupted one")

err = run(lorenz, "wolf.h5", "lyapunov.estimator=wolf", "--stop-after", "50")
with h5py.File("wolf.h5", "r") as f:
    T.check(f.attrs["complete"] == 0 and "lambda1" not in f["lyapunov"].attrs,
            "time-series estimator stopped while measuring: no estimate, file incomplete")

henon = os.path.join(C, "henon-spectrum.yaml")
run(henon, "hn.h5", "lyapunov.duration=20000", "--stop-after", "2")
part = rows("hn.h5", "lyapunov/blocks")[0]
T.check(part.shape == (2, 2) and np.all(np.abs(part.sum(axis=1) - np.log(0.3)) < 1e-9),
        f"henon: 2 blocks, sums {part.sum(axis=1)} = log b {np.log(0.3):.9f}")

stick = os.path.join(C, "stick-slip-spectrum.yaml")
run(stick, "ss2.h5", "--stop-after", "2")
run(stick, "ss.h5", expect=0)
part, full = rows("ss2.h5", "lyapunov/blocks")[0], rows("ss.h5", "lyapunov/blocks")[0]
T.check(part.shape == (2, 2) and np.array_equal(part, full[:2]),
        "stick-slip (event-driven, saltation): 2 blocks kept, equal to the whole run's")

m, K = 0.17, 0.05
ball = T.write("ball-lyap.yaml", f"""job: lyapunov
model:
  name: ball-pool
  params: {{m: {m}, r: 0.028575, mu: 0.2, g: 9.81, K: {K}}}
initial: {{speed: 2.0, direction_deg: 30.0}}
integrator: {{rtol: 1.0e-12, atol: 1.0e-14}}
lyapunov: {{transient: 2, duration: 10, blocks: 5, interval: 0.1}}
""")
run(ball, "ball2.h5", "--stop-after", "2")
part = np.sort(rows("ball2.h5", "lyapunov/blocks")[0], axis=1)[:, ::-1]
T.check(np.max(np.abs(part[:, :2] - (-5 * K / (7 * m)))) < 1e-8,
        f"ball-pool (codim-2): 2 blocks, rolling exponents {part[:, :2].ravel()} = -5K/(7m)")

# one real signal: the run stands still after 2 blocks until SIGTERM arrives
p = subprocess.Popen([T.TWOFOLD, "run", lorenz, "-o", "sig.h5", "--overwrite", "--pause-after", "2"],
                     stderr=subprocess.PIPE, text=True)
line = p.stderr.readline()
p.send_signal(signal.SIGTERM)
rest = p.stderr.read()
p.wait()
T.check("paused" in line and p.returncode == 3 and rows("sig.h5", "lyapunov/blocks")[2]["blocks_done"] == 2
        and "interrupted by a signal" in rest,
        f"SIGTERM while paused after 2 blocks: exit {p.returncode}, 2 blocks kept")

# --- trajectory: samples -------------------------------------------------------------------
lorenz_traj = T.write("lorenz-traj.yaml", """job: trajectory
model: {name: lorenz, params: {sigma: 10, rho: 28, beta: 2.6666666666666665}}
initial: {state: [1, 1, 20]}
integrator: {t_end: 10, rtol: 1.0e-9, atol: 1.0e-9}
output: {samples: 101}
""")
sde_traj = T.write("sde-traj.yaml", """job: trajectory
model: {name: lorenz, params: {sigma: 10, rho: 28, beta: 2.6666666666666665, noise: 0.5}}
initial: {state: [1, 1, 20]}
integrator: {method: euler-maruyama, t_end: 2, dt: 0.001}
ensemble: {seed: 3}
output: {samples: 101}
""")
filippov_traj = T.write("stick-traj.yaml", """job: trajectory
model: {name: stick-slip, params: {zeta: 0.05, mu: 0.8, vb: 0.5, a: 1.2, omega: 1.1, eps: 0}}
initial: {state: [0.2, 0.0, 0.0]}
integrator: {t_end: 100}
output: {samples: 101}
""")
# the smoothed Jeffrey oscillator on PETSc TS (named: auto takes the Rosenbrock stepper)
with open(os.path.join(C, "jeffrey-smoothed.yaml")) as f:
    petsc_traj = T.write("jeffrey-petsc.yaml",
                         f.read().replace("integrator:\n", "integrator:\n  method: petsc-ts\n", 1))
cases = [("dopri5", lorenz_traj, 0, 10, 101, 7), ("euler-maruyama", sde_traj, 0, 2, 101, 7),
         ("event-driven Filippov", filippov_traj, 0, 100, 101, 7),
         ("petsc-ts", petsc_traj, 0, 94.24777960769379, 1001, 3),
         ("rosenbrock (auto)", os.path.join(C, "jeffrey-smoothed.yaml"), 0, 94.24777960769379, 1001,
          5),
         ("codim-2", os.path.join(C, "ball-rolling.yaml"), 0, 5, 501, 3),
         ("two contacts", os.path.join(C, "flowmeter-mid-friction.yaml"), 0, 400, 401, 4)]
for label, cfg, t0, t1, n, k in cases:
    run(cfg, f"part-{k}.h5", "--stop-after", str(k))
    run(cfg, "whole.h5", expect=0)
    t, attrs, g = rows(f"part-{k}.h5", "trajectory/t")
    x = rows(f"part-{k}.h5", "trajectory/state")[0]
    xf = rows("whole.h5", "trajectory/state")[0]
    expected_t = np.linspace(t0, t1, n)[:k]
    if label.startswith("event"):  # the table keeps its size; NaN after the stop
        taken = int(np.sum(~np.isnan(x[:, 0])))
        ok = taken >= k and np.array_equal(x[:taken], xf[:taken]) and np.all(np.isnan(x[taken:]))
    else:
        ok = x.shape[0] == k and np.allclose(t, expected_t, rtol=1e-14, atol=1e-14) and \
            np.array_equal(x, xf[:k])
    T.check(ok and attrs["complete"] == 0 and g["status"] == "interrupted",
            f"trajectory ({label}): stopped after {k} samples at the right times, equal to the "
            f"whole run's, file incomplete, status {g['status']}")

# The member stopped by its stop token is pending (not done), whatever engine ran it; the whole
# run's is ok.
for label, cfg, t0, t1, n, k in cases:
    got = {}
    for out, extra, code in (("part.h5", ["--stop-after", str(k)], 3), ("whole.h5", [], 0)):
        r = subprocess.run([T.TWOFOLD, "run", cfg, "-o", out, "--overwrite", "--json"] + extra,
                           capture_output=True, text=True)
        lines = r.stdout.strip().splitlines()
        got[out] = (r.returncode, json.loads(lines[-1]) if lines else {})
    T.check(got["part.h5"][0] == 3 and got["part.h5"][1].get("member_status") == "pending" and
            got["whole.h5"][0] == 0 and got["whole.h5"][1].get("member_status") == "ok",
            f"trajectory ({label}): the stopped member is "
            f"{got['part.h5'][1].get('member_status')}, the whole one "
            f"{got['whole.h5'][1].get('member_status')}")

# --- slip-onset thresholds: bisection runs; stationary scans: points -------------------------
thr = os.path.join(C, "wheelset-threshold.yaml")
run(thr, "thr-part.h5", "scan.x.points=2", "--stop-after", "25")
run(thr, "thr.h5", "scan.x.points=2", expect=0)
done = rows("thr-part.h5", "threshold/done")[0]
a, b = rows("thr-part.h5", "threshold/threshold")[0], rows("thr.h5", "threshold/threshold")[0]
T.check(list(done) == [1, 0] and a[0] == b[0] and np.isnan(a[1]),
        f"slip-onset: stopped in the second point's bisection: done {list(done)}, first "
        f"threshold {a[0]} equal to the whole run's, second NaN")

# a single slip-onset run has no unit to count: a time limit already spent when it starts
# (1 ns) stops it at its first step, whatever the machine
slip = os.path.join(C, "wheelset-slip.yaml")
err = run(slip, "slip.h5", "--time-limit", "1e-9")
with h5py.File("slip.h5", "r") as f:
    T.check(f.attrs["complete"] == 0 and "slip_onset" not in f and "starts it again" in err,
            "slip-onset (one run) stopped by the time limit: nothing but /model, incomplete")
run(slip, "slip.h5", "--resume", expect=0)

scan = os.path.join(C, "flowmeter-scan-mid.yaml")
run(scan, "scan-part.h5", "--stop-after", "5")
T.check(rows("scan-part.h5", "members/done")[0].sum() == 0,
        "one-line stationary scan stopped after 5 of its 56 points: the line is not done")
run(scan, "scan-part.h5", "--resume", expect=0)
run(scan, "scan.h5", expect=0)
with h5py.File("scan-part.h5", "r") as f, h5py.File("scan.h5", "r") as g:
    same = all(f["members"][k][()].tobytes() == g["members"][k][()].tobytes() for k in g["members"])
T.check(same, "the resumed scan equals the uninterrupted one, bit for bit")
T.finish()
