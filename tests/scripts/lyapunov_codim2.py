"""lyapunov_codim2.py — the lyapunov job on a body under 2-D Coulomb friction (codimension-2
kernels run event-driven by evolve2.c, tangent vectors through its saltation matrices),
against the closed form of the rolling pool ball (Antali 2017, eq. 2.45):

1. ball-pool with K > 0, launched without spin: it slips, arrives at Sigma = {u = 0} and rolls;
   while rolling the centre velocity obeys v' = -5K/(7m) v (the sliding field of Theorem 2.17
   is linear), so after a transient that covers the slip the two tangential exponents are
   both -5K/(7m), and the two directions off Sigma collapse at every arrival (exponents of
   -infinity: below -100 here).  Block errors small.
2. The same on 2 ranks gives the same spectrum (one computation, on rank 0).
3. A scan over K (job scan, scan.quantity lyapunov): at every point both tangential
   exponents are -5K/(7m); the same file on 1 and 2 ranks.
4. A body with two contacts (the flowmeter) is refused with a clear error naming model.name,
   exit status 2, no output file, by the lyapunov job; so is a time-series estimator.
"""
import os
import subprocess

import h5py
import numpy as np
import testlib as T

T.setup()
m, K = 0.17, 0.05
CFG = T.write("ball-lyap.yaml", f"""job: lyapunov
model:
  name: ball-pool
  params: {{m: {m}, r: 0.028575, mu: 0.2, g: 9.81, K: {K}}}
initial:
  speed: 2.0
  direction_deg: 30.0
integrator:
  rtol: 1.0e-12
  atol: 1.0e-14
lyapunov:
  transient: 2
  duration: 10
  blocks: 5
  interval: 0.1
""")
# 1: rolling starts near t = 0.29 (the slip phase: u' = -7/2 mu g - K/m v), well inside the transient
s = T.run(CFG, "b1.h5")
lam, err = s["spectrum"], s["spectrum_error"]
rate = -5 * K / (7 * m)
T.check(s["method"] == "codim2-events+saltation", f"method {s['method']}")
T.check(abs(lam[0] - rate) < 1e-8 and abs(lam[1] - rate) < 1e-8,
        f"tangential exponents {lam[0]:.12f}, {lam[1]:.12f} = -5K/(7m) = {rate:.12f}")
T.check(max(err[:2]) < 1e-8, f"block errors {err[:2]}")
T.check(lam[2] < -100 and lam[3] < -100, f"off-Sigma exponents {lam[2]:.0f}, {lam[3]:.0f}")
# 2: ranks
s2 = T.run(CFG, "b2.h5", ranks=2)
T.check(s2["spectrum"] == s["spectrum"], "2 ranks: the same spectrum")

# 3: a scan over K
SCAN = T.write("ball-scan.yaml", open(CFG).read().replace("job: lyapunov", "job: scan") +
               "scan:\n  x: {param: K, min: 0.02, max: 0.1, points: 3}\n")
T.run(SCAN, "s1.h5")
T.run(SCAN, "s2.h5", ranks=2)
with h5py.File("s1.h5") as f1, h5py.File("s2.h5") as f2:
    Ks, spec = f1["members/grid"][:, 0], f1["members/spectrum"][()]
    same = all(np.array_equal(f1["members"][k][()], f2["members"][k][()], equal_nan=True)
               for k in ("grid", "spectrum", "error"))
expected = -5 * Ks / (7 * m)
T.check(np.max(np.abs(spec[:, :2] - expected[:, None])) < 1e-8,
        f"scan over K {list(Ks)}: exponents {spec[:, 0]} = -5K/(7m) {expected}")
T.check(same, "scan: the same data on 1 and 2 ranks")


# 4: refusals
def refused(config, key, *sets):
    cmd = [T.TWOFOLD, "run", config, "-o", "bad.h5", "--quiet"]
    for x in sets:
        cmd += ["--set", x]
    r = subprocess.run(cmd, capture_output=True, text=True)
    T.check(r.returncode == 2 and key in r.stderr and not os.path.exists("bad.h5"),
            f"{' '.join(sets) or config}: exit {r.returncode}, {r.stderr.strip()}")


flow = T.write("flow-lyap.yaml", open(os.path.join(T.CONFIGS, "flowmeter-mid-friction.yaml")).read())
refused(flow, "model.name", "job=lyapunov")
refused(CFG, "ball-pool", "lyapunov.estimator=wolf")
T.finish()
