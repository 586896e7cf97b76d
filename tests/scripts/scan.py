"""scan.py — job `scan`: lambda_1(mu) of the logistic map over a grid.

* every point against a long-orbit average of log|mu (1 - 2x)| computed here with numpy;
* identical /members on 1 and 3 ranks (grid points are scheduler members);
* a two-parameter scan (Hénon a, b) has the right shape and the sum rule at every point;
* a bad scan parameter is an error naming the key and the model's parameters;
* a Filippov model (the stick-slip oscillator) scans event-driven: without forcing, in pure
  slip, the spectrum is (0, -zeta, -zeta) exactly; with forcing (crossings and sticking) the
  scan is identical on 1 and 2 ranks, and its eps = 0 point is the lyapunov job's result.
"""
import subprocess

import h5py
import numpy as np

import testlib as T

T.setup()
sets = ("scan.x.min=3.6", "scan.x.max=3.95", "scan.x.points=8", "lyapunov.duration=100000")
s1 = T.run(T.CONFIGS + "/logistic-scan.yaml", "s1.h5", *sets)
s3 = T.run(T.CONFIGS + "/logistic-scan.yaml", "s3.h5", *sets, "ensemble.chunk=1", ranks=3)
f1, f3 = h5py.File("s1.h5", "r"), h5py.File("s3.h5", "r")
for name in f1["members"]:
    T.check(np.array_equal(f1["members/" + name][...], f3["members/" + name][...], equal_nan=True),
            f"/members/{name} identical on 1 and 3 ranks")
mus = f1["members/grid"][:, 0]
lam = f1["members/spectrum"][...].ravel()
xs = np.linspace(0.2, 0.8, 400)[:, None] * np.ones((1, len(mus)))
for _ in range(2000):
    xs = mus * xs * (1 - xs)
acc = np.zeros(len(mus))
for _ in range(2000):
    acc += np.log(np.abs(mus * (1 - 2 * xs))).mean(axis=0)
    xs = mus * xs * (1 - xs)
ref = acc / 2000
worst = np.max(np.abs(lam - ref))
T.check(worst < 0.01, f"lambda_1(mu) at {len(mus)} points within {worst:.4f} of orbit averages")
T.check(s1["points"] == 8 and s1["done"] == 8, "JSON points and done")
T.check(abs(s1["lambda1_max"] - lam.max()) < 1e-15, "JSON lambda1_max")

cfg = T.write("henon2d.yaml", """
job: scan
model: {name: henon}
lyapunov: {transient: 1000, duration: 20000, blocks: 10}
scan:
  x: {param: a, min: 1.0, max: 1.4, points: 5}
  y: {param: b, min: 0.2, max: 0.3, points: 3}
""")
T.run(cfg, "h2.h5")
f = h5py.File("h2.h5", "r")
g, sp = f["members/grid"][...], f["members/spectrum"][...]
T.check(sp.shape == (15, 2) and f.attrs["scan_y_param"] == "b", f"2-D scan shape {sp.shape}")
ok = f["members/status"][...] == 1
T.check(np.allclose(sp[ok].sum(axis=1), np.log(g[ok, 1]), atol=1e-9),
        f"sum rule ln b at every converged point ({ok.sum()} of 15)")

r = subprocess.run([T.TWOFOLD, "check", T.CONFIGS + "/logistic-scan.yaml", "--set",
                    "scan.x.param=nu"], capture_output=True, text=True)
T.check(r.returncode == 2 and "scan.x.param" in r.stderr and "mu" in r.stderr,
        f"bad scan parameter: {r.stderr.strip()}")
zeta = 0.07
# The transient aligns the tangent frame: from the generic frame, the forcing phase direction
# (exponent 0) takes over the first vector as e^(-zeta t); a transient of 10 left ln(c) ~ -1.6
# in the averages (lambda_1 -0.004, lambda_2 -0.0665).
cfg = T.write("ss-free.yaml", f"""
job: scan
model:
  name: stick-slip
  params: {{zeta: {zeta}, mu: 0.8, vb: 0.5, a: 0, omega: 1.1, eps: 0}}
initial: {{state: [0.9, 0.0, 0.0]}}
integrator: {{rtol: 1.0e-10, atol: 1.0e-10}}
lyapunov: {{exponents: 3, transient: 100, duration: 400, blocks: 4}}
scan:
  x: {{param: mu, min: 0.6, max: 1.0, points: 3}}
""")
T.run(cfg, "free.h5")
sp = h5py.File("free.h5", "r")["members/spectrum"][...]
T.check(np.allclose(sp, [0, -zeta, -zeta], atol=2e-3),
        f"unforced slip: spectrum (0, -zeta, -zeta) at every mu: {sp.round(4).tolist()}")

ss = (f"scan.x.param=eps", "scan.x.min=0", "scan.x.max=0.02", "scan.x.points=3",
      "lyapunov.duration=400", "lyapunov.transient=50", "lyapunov.interval=1")
T.run(T.CONFIGS + "/stick-slip-scan.yaml", "ss1.h5", *ss)
T.run(T.CONFIGS + "/stick-slip-scan.yaml", "ss2.h5", *ss, ranks=2)
a, b = h5py.File("ss1.h5", "r"), h5py.File("ss2.h5", "r")
T.check(all(np.array_equal(a["members/" + n][...], b["members/" + n][...], equal_nan=True)
            for n in a["members"]), "Filippov scan identical on 1 and 2 ranks")
j = T.run(T.CONFIGS + "/stick-slip-spectrum.yaml", "ssj.h5", "lyapunov.duration=400",
          "lyapunov.transient=50")
T.check(j["method"] == "events+saltation" and
        np.array_equal(a["members/spectrum"][0], np.array(j["spectrum"])),
        f"eps = 0 scan point equals the event-driven lyapunov job: {a['members/spectrum'][0]}")
T.check(np.all(a["members/status"][...] == 1), "all scan points converged")
T.finish()
