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
4. What the figures draw, against the files read here (h5py): each histogram is the density of
   the run's values (crossings of Sigma and two-fold exits from the event logs, trajectory
   samples at t = 10, 50, final states of the smoothed horizon, crossings and returns of the
   dense traces from their samples), the dense returns are the exact ones to 0.1; the KS
   points and the weighted ensemble's lines are scipy's KS on those values.
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
rep = json.load(open("runs/open_question.json"))
T.check("r_T10" in rep["distances"].get("smoothed-eps0.001", {}),
        "smoothed horizon compared with the uniform ensemble")
T.check(all(open(p, "rb").read(8) == b"\x89PNG\r\n\x1a\n" for p in
            ["open-question-distributions.png", "open-question-distances.png"]),
        "both figures written")

# --- 4: what the figures draw, against the results files read here --------------------------
G = -0.75 * np.pi  # the wheel's gamma; d = 1, omega0 = -1 (configs/open-question-*.yaml)
X_STAR = np.array([0.1859, -0.037 * (1 - 0.1859 / np.tan(G)), -1.037])  # v* from h = 0 (eq 4)


def sampled(t, x):
    """Crossings of Sigma and the return to the two-fold, from a dense trace, as the figure
    defines them: a crossing is a change of side (|h| > 1e-9) at r where the sampled h first
    changes sign after the last sample on the old side; a return is the first of 3 samples in
    a row within 1e-3 of the two-fold after t = 10."""
    ok = ~np.isnan(x[:, 0])
    t, x = t[ok], x[ok]
    dw = x[:, 2] + 1
    h = -(x[:, 1] - dw) * np.sin(G) - x[:, 0] * dw * np.cos(G)
    off = np.flatnonzero(np.abs(h) > 1e-9)
    rs = []
    for a, b in zip(off[:-1], off[1:]):
        if np.sign(h[a]) != np.sign(h[b]):
            k = a + np.flatnonzero(np.sign(h[a:b]) != np.sign(h[a + 1:b + 1]))[0]
            rs.append(x[k, 0] + h[k] / (h[k] - h[k + 1]) * (x[k + 1, 0] - x[k, 0]))
    near = (np.linalg.norm(x - X_STAR, axis=1) < 1e-3) & (t > 10)
    stay = [i for i in range(len(t) - 2) if near[i:i + 3].all()]
    return {"landing_r": rs[:1], "section_r": rs, "return_time": [t[stay[0]]] if stay else []}


def ensemble_obs(path):
    """Per-member observables of a Filippov ensemble file: first and all crossings of Sigma
    (event log), the time between the first two exits from the two-fold, r and omega at
    t = 10, 50 (trajectory samples); and the sample-based ones of its dense trajectories."""
    with h5py.File(path, "r") as f:
        m = f["members"]
        n = m["status"].shape[0]
        log, ex, tr = m["event_log"], m["exits"], m["trajectory"]
        fields, kinds = list(log.attrs["fields"]), list(log.attrs["kinds"])
        ev = log[:].reshape(n, -1, int(log.attrs["slot_width"]))
        xf = list(ex.attrs["fields"])
        exits = ex[:].reshape(n, -1, int(ex.attrs["slot_width"]))
        ts = np.linspace(tr.attrs["t0"], tr.attrs["t_end"], int(tr.attrs["samples"]))
        x = tr[:].reshape(n, len(ts), 3)
        t_final = m["t_final"][:]
    cross = [e[e[:, fields.index("kind")] == kinds.index("crossing")][:, fields.index("r")]
             for e in ev]
    twofold = [e[e[:, xf.index("kind")] == 0][:, 0] for e in exits]
    obs = {"landing_r": [c[:1] for c in cross], "section_r": cross,
           "return_time": [e[1:2] - e[:1] for e in twofold]}
    for T_ in (10, 50):
        k = int(np.flatnonzero(np.abs(ts - T_) < 1e-9)[0])
        for j, name in ((0, "r"), (2, "omega")):
            obs[f"{name}_T{T_}"] = [x[i, k, j:j + 1] if t_final[i] >= T_ else x[i, :0, j]
                                    for i in range(n)]
    dense = [sampled(ts, x[i]) for i in range(n)]
    for q in ("landing_r", "section_r", "return_time"):
        obs[q + "_s"] = [d_[q] for d_ in dense]
    return obs, twofold


def cat(per_member):
    return np.concatenate([np.asarray(v, dtype=float) for v in per_member])


obs = {name: ensemble_obs(f"runs/{name}.h5")[0] for name in ("uniform", "uniform-b", "weighted")}
dense_obs, dense_exits = ensemble_obs("runs/dense-uniform.h5")
obs["dense-uniform"] = {q: v for q, v in dense_obs.items() if q.endswith("_s")}
with h5py.File("runs/dense-smoothed-eps0.001/0.h5", "r") as f:
    one = sampled(f["trajectory/t"][:], f["trajectory/state"][:])
obs["dense-smoothed-eps0.001"] = {q + "_s": [v] for q, v in one.items()}
with h5py.File("runs/smoothed-eps0.001-T10.h5", "r") as f:
    ok = f["members/status"][:] == h5py.check_enum_dtype(f["members/status"].dtype)["ok"]
    T.check(np.all(f["members/t_final"][:] == 10), "the smoothed horizon file ends at t = 10")
    final = f["members/final_state"][:]
obs["smoothed-eps0.001"] = {f"{name}_T10": [final[i, j:j + 1] if ok[i] else final[i, :0]
                                            for i in range(len(ok))]
                            for j, name in ((0, "r"), (2, "omega"))}

data, report = oq.analyse("runs", 20)
panels = [p for p in oq.distribution_panels(data) if p]
SOLID = ("uniform", "weighted", "smoothed-eps0.001")  # uniform-b is only the floor
DENSE = ("dense-uniform", "dense-smoothed-eps0.001")
for panel in panels:
    q = panel["q"]
    want = {(n_, q): cat(obs[n_][q]) for n_ in SOLID if q in obs[n_]}
    want.update({(n_, q + "_s"): cat(obs[n_][q + "_s"]) for n_ in DENSE if q + "_s" in obs[n_]})
    want = {k: v for k, v in want.items() if len(v)}
    lo, hi = np.percentile(np.concatenate(list(want.values())), [0.5, 99.5])
    edges = np.linspace(lo, hi, 70)
    drawn = {(s_["name"], s_["key"]): s_ for s_ in panel["series"]}
    good = set(drawn) == set(want) and panel["edges"].shape == edges.shape \
        and np.allclose(panel["edges"], edges, rtol=1e-14, atol=0)
    for k, v in want.items() if good else ():
        heights = np.histogram(np.clip(v, lo, hi), bins=edges, density=True)[0]
        good &= drawn[k]["values"].shape == v.shape \
            and drawn[k]["heights"].shape == heights.shape \
            and np.allclose(np.sort(drawn[k]["values"]), np.sort(v), rtol=1e-14, atol=0) \
            and np.allclose(drawn[k]["heights"], heights, rtol=1e-12, atol=0) \
            and drawn[k]["dashed"] == k[1].endswith("_s")
    T.check(good, f"distributions, {q}: histograms of "
            f"{ {f'{n_}/{k_}': len(v) for (n_, k_), v in sorted(want.items())} } (values) "
            "drawn from the files read here, dashed for dense traces")
T.check(sorted(p["q"] for p in panels) == sorted(["landing_r", "return_time", "section_r",
                                                   "r_T10", "r_T50", "omega_T50"]),
        "distributions: every panel has data (no uniform returns by t = 60: only dense ones)")
exact = [e[1] - e[0] for e in dense_exits if len(e) > 1]
drawn_ret = [s_ for p in panels if p["q"] == "return_time" for s_ in p["series"]
             if s_["name"] == "dense-uniform"]
T.check(len(drawn_ret) == 1 and len(drawn_ret[0]["values"]) == len(exact) >= 3
        and np.abs(drawn_ret[0]["values"] - exact).max() < 0.1,
        f"distributions: the dashed return times of dense-uniform are the exact two-fold returns "
        f"of its exit log ({len(exact)}) to 0.1")

dist = oq.distance_panels(data, report)
ks = lambda a_, b_: stats.ks_2samp(cat(a_), cat(b_)).statistic  # noqa: E731
floor = report["distances"]["uniform-b"]
good, lines = [p["kind"] for p in dist] == ["smoothed", "tiny", "noisy"], []
for p in dist:
    for c in p["curves"]:
        q = c["q"]
        want_x = [1e-3] if p["kind"] == "smoothed" and q in obs["smoothed-eps0.001"] else []
        good &= np.array_equal(c["x"], want_x)
        if want_x:
            ci = report["distances"]["smoothed-eps0.001"][q]["ks_ci"]
            k_ = ks(obs["uniform"][q], obs["smoothed-eps0.001"][q])
            lines.append(f"{q} {k_:.3f}")
            good &= abs(c["ks"][0] - k_) < 1e-12 and np.allclose(
                c["err"][:, 0], [max(k_ - ci[0], 0), max(ci[1] - k_, 0)], atol=1e-12)
        good &= abs(c["weighted"] - ks(obs["uniform"][q], obs["weighted"][q])) < 1e-12
        good &= c["floor"] == floor[q]["ks_ci"][1] and 0 <= c["floor"] <= 1
        good &= abs(floor[q]["ks"] - ks(obs["uniform"][q], obs["uniform-b"][q])) < 1e-12
T.check(good and len(lines) == 2,
        f"distances: KS of the smoothed ensemble at eps = 1e-3 ({', '.join(lines)}) and of the "
        "weighted one (dashed) = scipy's KS on the values read here, error bars and the floor "
        "(dotted) the report's bootstrap interval of uniform vs uniform-b, whose KS is scipy's")
T.finish()
