"""open_question.py — the analysis behind docs/OPEN_QUESTION.md, on small ensembles.

1. The distances (postproc/open_question.py, class Comparison: one sort, weighted ECDFs, so
   bootstrap replicates cost O(n)) equal scipy.stats.ks_2samp and wasserstein_distance on
   random per-member samples with ties; a bootstrap replicate equals scipy on the explicitly
   resampled data.
2. The sample-based return time (dense trajectory, first approach within 1e-3 of the two-fold
   after t = 10) agrees with the event-driven integrator's exact two-fold arrivals (exit
   log) to 0.1 time units (the time it takes to slide the last 1e-3), member by member, on
   the wheel's Fig. 5 ensemble; members that end in full stick have no return in either.
3. The whole analysis runs on tiny ensembles (uniform, weighted, a smoothed horizon, a dense
   smoothed trace) and writes its JSON report and both figures.
"""
import json
import os
import subprocess
import sys

import h5py
import numpy as np
from scipy import stats

import testlib as T

T.setup()
SRC = os.environ["SOURCE_DIR"]
sys.path.insert(0, os.path.join(SRC, "postproc"))
import open_question as oq  # noqa: E402

rng = np.random.default_rng(3)
a = [np.round(rng.normal(size=rng.integers(0, 4)), 1) for _ in range(300)]
b = [np.round(rng.normal(0.2, 1.1, size=rng.integers(0, 4)), 1) for _ in range(250)]
cmp = oq.Comparison(a, b)
pa, pb = np.concatenate(a), np.concatenate(b)
ks, w1 = cmp.point()
T.check(abs(ks - stats.ks_2samp(pa, pb).statistic) < 1e-12
        and abs(w1 - stats.wasserstein_distance(pa, pb)) < 1e-12,
        f"KS {ks:.6f} and W1 {w1:.6f} equal scipy's on tied data")
r = np.random.default_rng(9)
ks_b, w1_b = cmp.replicate(r)
r = np.random.default_rng(9)
ia, ib = r.integers(0, len(a), len(a)), r.integers(0, len(b), len(b))
qa, qb = np.concatenate([a[i] for i in ia]), np.concatenate([b[i] for i in ib])
T.check(abs(ks_b - stats.ks_2samp(qa, qb).statistic) < 1e-12
        and abs(w1_b - stats.wasserstein_distance(qa, qb)) < 1e-9,
        "a bootstrap replicate equals scipy on the resampled members")

cfg = os.path.join(T.CONFIGS, "open-question-uniform.yaml")
common = ["integrator.t_end=300", "output.trajectory_samples=30001", "output.event_log=8"]
T.run(cfg, "uniform.h5", "ensemble.members=12", *common, ranks=2)
with h5py.File("uniform.h5", "r") as f:
    tr = f["members/trajectory"][:]
    ex = f["members/exits"][:].reshape(len(tr), -1, 7)
    ex = [e[e[:, 3] == 0] for e in ex]  # exits from the two-fold, not choices at full stick
ts = np.linspace(0, 300, 30001)
agree, returns = True, 0
for i in range(len(tr)):
    o = oq.sample_observables(ts, tr[i].reshape(len(ts), 3))
    exact = ex[i][1, 0] - ex[i][0, 0] if len(ex[i]) > 1 else np.nan
    if np.isnan(exact):
        agree &= len(o["return_time_s"]) == 0
    else:
        returns += 1
        agree &= len(o["return_time_s"]) == 1 and abs(o["return_time_s"][0] - exact) < 0.1
T.check(agree and returns >= 3, f"sampled return times match the exact arrivals ({returns} "
        f"of {len(tr)} members return by t = 300)")

os.makedirs("runs/dense-smoothed-eps0.001", exist_ok=True)
os.replace("uniform.h5", "runs/dense-uniform.h5")
T.run(cfg, "runs/uniform.h5", "ensemble.members=8", "integrator.t_end=60", ranks=2)
T.run(cfg, "runs/uniform-b.h5", "ensemble.members=8", "integrator.t_end=60",
      "ensemble.seed=5", ranks=2)
T.run(os.path.join(T.CONFIGS, "open-question-weighted.yaml"), "runs/weighted.h5",
      "ensemble.members=8", "integrator.t_end=60", ranks=2)
smooth = os.path.join(T.CONFIGS, "open-question-smoothed.yaml")
T.run(smooth, "runs/smoothed-eps0.001-T10.h5", "ensemble.members=8", "integrator.t_end=10")
T.run(smooth, "runs/dense-smoothed-eps0.001/0.h5", "job=trajectory", "integrator.t_end=150",
      "output.samples=15001")
res = subprocess.run([sys.executable, os.path.join(SRC, "postproc", "open_question.py"),
                      "--runs", "runs", "--figures", ".", "--bootstrap", "20"],
                     capture_output=True, text=True)
T.check(res.returncode == 0, f"analysis runs ({res.stderr.strip()[-300:]})")
if res.returncode == 0:
    rep = json.load(open("runs/open_question.json"))
    T.check("smoothed-eps0.001" in rep["distances"] and "r_T10" in rep["distances"]["smoothed-eps0.001"],
            "smoothed horizon compared with the uniform ensemble")
    T.check(all(os.path.getsize(p) > 10000 for p in ["open-question-distributions.png",
                                                      "open-question-distances.png"]),
            "both figures written")
T.finish()
