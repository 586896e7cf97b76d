#!/usr/bin/python3
"""open_question.py — statistics of what happens after the wheel's nondeterministic two-fold,
compared across continuation rules (docs/OPEN_QUESTION.md).

Reads the results files of bench/open_question.sh from --runs:
  uniform.h5, uniform-b.h5 (same policy, another seed: the sampling floor), weighted.h5,
  smoothed-eps<E>.h5, noisy-sigma<S>.h5 (whichever exist).
Observables per member (each a 1-D sample; members that stop early contribute to those they
reached):
  landing_r    r where the trajectory first crosses Sigma after leaving the singularity
  return_time  time from leaving the singularity to the first return to it
  section_r    r at every crossing of Sigma before t = 300 (occupation of the section Sigma)
  r_T, omega_T the state at fixed times T (trajectory samples or final states)
  full_stick   1 if the member reached full stick (an intersection event in /members/events;
               in files before those events: status codim2/zeno), else 0
  returned, returns, stick_arrivals
               returned to the two-fold at all, how often, arrivals at full stick (from the
               counts /members/twofold_visits and /members/events: every member, complete)
Observables read from a log (/members/exits holds a member's first exit.max_logged draws,
/members/event_log its first output.event_log events) use only what the log settles; the
report prints per run how many members each lost (postproc/filippov_logs.py).
Distances to the reference ensemble (uniform): Kolmogorov–Smirnov statistic and the
Wasserstein-1 distance (scipy.stats), with 95 % bootstrap intervals (members resampled with
replacement in both ensembles).  Writes open_question.json and the figures
open-question-distributions.png and open-question-distances.png.
"""
import argparse
import glob
import json
import os
import re
import sys

import h5py
import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_layout import names_attr  # noqa: E402
from filippov_logs import EnsembleLogs, per_member, return_spread  # noqa: E402

OK, ZENO, CODIM2 = 1, 5, 7
STATUS_NAMES = dict(enumerate(["pending", "ok", "nonfinite", "max_steps", "step_underflow",
                               "zeno", "failed", "codim2", "ill_posed"]))
SIGMA_TOL = 1e-9


def twofold_exits(f, n):
    """/members/exits as (members, slots, width) with only the exits from the two-fold kept
    (older files have no kind column: every draw was an exit); NaN rows pad."""
    d = f["members/exits"]
    ex = d[:].reshape(n, -1, int(d.attrs["slot_width"]))
    fields = names_attr(d, "fields")
    if "kind" not in fields:
        return ex, ex.shape[2] - 3
    out = np.full_like(ex, np.nan)
    for i in range(n):
        keep = ex[i][ex[i][:, fields.index("kind")] == 0]
        out[i, :len(keep)] = keep
    return out, fields.index("kind") + 1


def twofold_point(f):
    """The two-fold (r*, v*, omega*) the ensemble started from."""
    n = f["members/status"].shape[0]
    if n:
        ex, state = twofold_exits(f, n)
        if not np.isnan(ex[0, 0, 0]):
            return ex[0, 0, state:state + 3]
    return np.mean(f["members/initial_state"][:], axis=0)


def crossings_from_samples(t, x, h):
    """Crossings of {h = 0} located by linear interpolation between samples."""
    hv = h(x)
    idx = np.nonzero(np.sign(hv[:-1]) * np.sign(hv[1:]) < 0)[0]
    w = hv[idx] / (hv[idx] - hv[idx + 1])
    return t[idx] + w * (t[idx + 1] - t[idx]), x[idx] + w[:, None] * (x[idx + 1] - x[idx])


def load_final(paths):
    """Smooth ensembles record final states: one file per horizon T gives r_T, v_T, omega_T."""
    obs, meta = {}, {"path": paths, "members": 0, "status_counts": {}}
    for path in paths:
        with h5py.File(path, "r") as f:
            x = f["members/final_state"][:]
            ok = (f["members/status"][:] == OK)
            T = float(np.max(f["members/t_final"][:]))
            for s, c in zip(*np.unique(f["members/status"][:], return_counts=True)):
                meta["status_counts"][int(s)] = meta["status_counts"].get(int(s), 0) + int(c)
        meta["members"] = max(meta["members"], len(x))
        for j, comp in enumerate(("r", "v", "omega")):
            obs[f"{comp}_T{T:g}"] = [x[i, j:j + 1] if ok[i] else x[:0, j] for i in range(len(x))]
    return obs, meta


# Sample-based observables (stage d: dense trajectories, dt = 0.01), defined the same way for
# every continuation rule so that no event machinery is needed: a crossing of Sigma is a
# passage of h from below -KAPPA to above +KAPPA or back (r taken where h = 0 in between;
# KAPPA only screens out the round-off values of h while a Filippov member slides);
# a return is the first stay of STAY_SAMPLES samples in a row within R_IN of the two-fold after
# t = T_AWAY (trajectories linger near it for a few time units after leaving; first returns
# take 57 or more).
KAPPA, R_IN, T_AWAY, STAY_SAMPLES = 1e-9, 1e-3, 10.0, 3
WHEEL = {"d": 1.0, "gamma": -0.75 * np.pi, "omega0": -1.0}
TWOFOLD = np.array([0.1859, -0.0301217, -1.037])


def switching(x):
    dw = x[:, 2] - WHEEL["omega0"]
    g = WHEEL["gamma"]
    return -(x[:, 1] - WHEEL["d"] * dw) * np.sin(g) - x[:, 0] * dw * np.cos(g)


def sample_observables(t, x):
    ok = ~np.isnan(x[:, 0])
    t, x = t[ok], x[ok]
    h = switching(x)
    side = np.where(h > KAPPA, 1, np.where(h < -KAPPA, -1, 0))
    idx = np.nonzero(side)[0]
    changes = idx[1:][side[idx[1:]] != side[idx[:-1]]] if len(idx) > 1 else idx[:0]
    prev = idx[:-1][side[idx[1:]] != side[idx[:-1]]] if len(idx) > 1 else idx[:0]
    rs = []
    for a, b in zip(prev, changes):  # the zero of h between samples a and b
        seg = h[a:b + 1]
        k = a + int(np.nonzero(np.sign(seg[:-1]) != np.sign(seg[1:]))[0][0])
        w = h[k] / (h[k] - h[k + 1])
        rs.append(x[k, 0] + w * (x[k + 1, 0] - x[k, 0]))
    # a return: the first stay of STAY_SAMPLES consecutive samples within R_IN of the two-fold
    # after T_AWAY (sliding into it is slow; trajectories sweeping past in slip, as they do
    # after passing full stick, touch that ball for one sample at most)
    dist = np.linalg.norm(x - TWOFOLD, axis=1)
    near = ((dist < R_IN) & (t > T_AWAY)).astype(int)
    run = np.convolve(near, np.ones(STAY_SAMPLES, dtype=int), mode="valid")
    hits = np.nonzero(run == STAY_SAMPLES)[0]
    ret = [t[hits[0]]] if len(hits) else []
    # near full stick at the last sample (t = 150 in the dense traces): neither lateral slip
    # nor rolling, v = 0 and omega = omega0 to within 1e-3; a member passing close to that
    # point at that moment counts as well
    last = x[-1]
    stuck = abs(last[1]) < 1e-3 and abs(last[2] - WHEEL["omega0"]) < 1e-3
    return {"landing_r_s": rs[:1], "section_r_s": rs, "return_time_s": ret,
            "full_stick_s": [1.0 if stuck else 0.0]}


def load_dense(arg):
    """Dense trajectories: a Filippov ensemble file with members/trajectory, or a directory
    of trajectory-job files (one member each)."""
    obs = {"landing_r_s": [], "section_r_s": [], "return_time_s": [], "full_stick_s": []}
    meta_lost = {}
    if os.path.isdir(arg):
        files = sorted(glob.glob(os.path.join(arg, "*.h5")),
                       key=lambda p: int(os.path.basename(p)[:-3]))
        series = []
        for p in files:
            with h5py.File(p, "r") as f:
                series.append((f["trajectory/t"][:], f["trajectory/state"][:]))
    else:
        with h5py.File(arg, "r") as f:
            a = f["members/trajectory"].attrs
            ts = np.linspace(a["t0"], a["t_end"], int(a["samples"]))
            tr = f["members/trajectory"][:]
            series = [(ts, tr[i].reshape(len(ts), -1)) for i in range(len(tr))]
        first, lost = EnsembleLogs(arg).first_returns()
        obs["return_time_exact"] = per_member(first)
        meta_lost = {"return_time_exact": int(lost.sum())}
    for t, x in series:
        o = sample_observables(t, x)
        for k in ("landing_r_s", "section_r_s", "return_time_s", "full_stick_s"):
            obs[k].append(np.asarray(o[k], dtype=float))
    return obs, {"members": len(series), "path": arg, "status_counts": {}, "lost": meta_lost}


def first_crossings(logs):
    """r at each member's first crossing of Sigma (from the logged prefix of its event log)
    and at all its crossings (complete event logs only), with the members each could not
    see: those that crossed but whose log ends before it, and those with a cut-short log."""
    kind, r = logs.event_fields.index("kind"), logs.event_fields.index("r")
    crossed = logs.count("crossing") > 0
    landing, section, lost_landing = [], [], 0
    for i in range(logs.members):
        rows = logs.event_rows(i)
        rs = rows[rows[:, kind] == logs.kinds.index("crossing"), r]
        landing.append(rs[:1])
        lost_landing += int(crossed[i] and not len(rs))
        section.append(rs if logs.events_complete[i] else rs[:0])
    return landing, section, {"landing_r": lost_landing,
                              "section_r": int((~logs.events_complete).sum())}


def load(path, times=(10.0, 50.0, 150.0)):
    """Per-member observables of one results file, as lists (one entry per member), and what
    the logs left out (meta["lost"]: members per observable; postproc/filippov_logs.py).
    Returns and arrivals at full stick come from the counts (/members/twofold_visits,
    /members/events), complete for every member; a member whose first return fell beyond its
    exit log has no return time (counted in lost["return_time"])."""
    f = h5py.File(path, "r")
    m = f["members"]
    n = m["status"].shape[0]
    status = m["status"][:]
    obs = {"full_stick": []}
    for T in times:
        obs[f"r_T{T:g}"], obs[f"v_T{T:g}"], obs[f"omega_T{T:g}"] = [], [], []
    lost = {}
    if "event_log" in m:  # Filippov: events, counts and logs
        logs = EnsembleLogs(path)
        arrivals = logs.count(*logs.intersection_kinds())
        first, lost_first = logs.first_returns()
        obs["return_time"] = per_member(first)
        obs["returned"] = [[1.0 if v > 0 else 0.0] for v in logs.visits]
        obs["returns"] = [[float(v)] for v in logs.visits]
        obs["stick_arrivals"] = [[float(a)] for a in arrivals]
        obs["landing_r"], obs["section_r"], lost = first_crossings(logs)
        lost["return_time"] = int(lost_first.sum())
        lost["logs"] = logs.lost_report()
        stuck = arrivals > 0
    else:
        stuck = np.zeros(n, bool)
    traj = m["trajectory"][:] if "trajectory" in m else None
    t_final = m["t_final"][:]
    for i in range(n):
        stick = stuck[i] or status[i] in (ZENO, CODIM2)
        obs["full_stick"].append([1.0 if stick else 0.0])
        if traj is not None:
            a = m["trajectory"].attrs
            ts = np.linspace(a["t0"], a["t_end"], int(a["samples"]))
            xs = traj[i].reshape(len(ts), -1)
            for T in times:
                k = int(np.argmin(abs(ts - T)))
                ok = abs(ts[k] - T) < 1e-9 and not np.isnan(xs[k, 0]) and t_final[i] >= T
                for j, comp in enumerate(("r", "v", "omega")):
                    obs[f"{comp}_T{T:g}"].append(xs[k:k + 1, j] if ok else xs[:0, j])
    cfg_t_end = float(f["members/t_final"][:].max()) if n else 0.0
    meta = {"members": n, "path": path, "t_end": cfg_t_end, "lost": lost,
            "status_counts": {int(s): int(c) for s, c in zip(*np.unique(status, return_counts=True))}}
    f.close()
    return obs, meta


def cached(loader, path, arg):
    """loader(arg), kept next to the results file (.oq-cache) while the file is unchanged."""
    import pickle
    cache = path + ".oq-cache"
    stamp = [KAPPA, R_IN, T_AWAY, STAY_SAMPLES, 4] + [os.path.getmtime(p) for p in (arg if isinstance(arg, list) else [arg])]
    if os.path.exists(cache):
        with open(cache, "rb") as fh:
            saved_stamp, value = pickle.load(fh)
        if saved_stamp == stamp:
            return value
    value = loader(arg)
    with open(cache, "wb") as fh:
        pickle.dump((stamp, value), fh)
    return value


def pooled(per_member, idx=None):
    if idx is None:
        idx = range(len(per_member))
    parts = [np.asarray(per_member[i], dtype=float) for i in idx]
    return np.concatenate(parts) if parts else np.zeros(0)


def flat(per_member):
    """Values and the member each belongs to."""
    vals = pooled(per_member)
    owner = np.repeat(np.arange(len(per_member)), [len(np.atleast_1d(v)) for v in per_member])
    return vals, owner


class Comparison:
    """KS and W1 between two member-weighted samples, sorted once so that bootstrap
    replicates (members redrawn with replacement = integer weights) cost O(n) each."""

    def __init__(self, a, b):
        (va, self.oa), (vb, self.ob) = flat(a), flat(b)
        self.na, self.nb = len(a), len(b)
        allv = np.concatenate([va, vb])
        self.order = np.argsort(allv, kind="stable")
        sv = allv[self.order]
        self.is_a = self.order < len(va)
        self.last = np.r_[sv[1:] != sv[:-1], True]  # last of each run of ties
        self.gaps = np.diff(sv)
        self.sizes = len(va), len(vb)

    def measure(self, wa, wb):
        w = np.concatenate([wa, wb])[self.order]
        fa = np.cumsum(np.where(self.is_a, w, 0.0))
        fb = np.cumsum(np.where(self.is_a, 0.0, w))
        fa, fb = fa / fa[-1], fb / fb[-1]
        diff = np.abs(fa - fb)
        return float(np.max(diff[self.last])), float(np.sum(diff[:-1] * self.gaps))

    def point(self):
        return self.measure(np.ones(self.sizes[0]), np.ones(self.sizes[1]))

    def replicate(self, rng):
        ca = np.bincount(rng.integers(0, self.na, self.na), minlength=self.na)
        cb = np.bincount(rng.integers(0, self.nb, self.nb), minlength=self.nb)
        return self.measure(ca[self.oa].astype(float), cb[self.ob].astype(float))


def distances(a, b, reps, rng):
    """KS and W1 between pooled samples of per-member lists a and b, with bootstrap CIs."""
    if len(pooled(a)) < 5 or len(pooled(b)) < 5:
        return None
    cmp = Comparison(a, b)
    point = cmp.point()
    boot = []
    for _ in range(reps):
        try:
            boot.append(cmp.replicate(rng))
        except (ZeroDivisionError, FloatingPointError):
            continue
    boot = np.array(boot)
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
    out = {"ks": point[0], "ks_ci": [lo[0], hi[0]], "w1": point[1], "w1_ci": [lo[1], hi[1]],
           "n_a": int(cmp.sizes[0]), "n_b": int(cmp.sizes[1])}
    if cmp.sizes[0] <= cmp.na and cmp.sizes[1] <= cmp.nb:  # one value per member: independent
        out["p"] = float(stats.ks_2samp(pooled(a), pooled(b)).pvalue)
    return out


def mean_ci(per_member, reps, rng):
    x = pooled(per_member)
    if len(x) == 0:
        return None
    boot = [np.mean(x[rng.integers(0, len(x), len(x))]) for _ in range(reps)]
    return {"mean": float(np.mean(x)), "ci": [float(v) for v in np.percentile(boot, [2.5, 97.5])],
            "n": int(len(x))}


def analyse(runs_dir, bootstrap=200, seed=12345):
    """Observables per member of every results file in runs_dir and the report of their
    distances to the uniform ensemble: (data, report), data[name] = (obs, meta)."""
    rng = np.random.default_rng(seed)
    runs = {}
    for name in ["uniform", "uniform-b", "weighted"]:
        p = os.path.join(runs_dir, name + ".h5")
        if os.path.exists(p):
            runs[name] = p
    dense = {}
    for p in sorted(glob.glob(os.path.join(runs_dir, "dense-*"))):
        if p.endswith((".json", ".oq-cache")):
            continue
        dense[os.path.basename(p).removesuffix(".h5")] = p
    groups = {}
    for pat in ["smoothed-eps*-T*.h5", "tiny-eps*-T*.h5", "noisy-sigma*-T*.h5"]:
        for p in sorted(glob.glob(os.path.join(runs_dir, pat))):
            groups.setdefault(re.sub(r"-T[0-9.]+\.h5$", "", os.path.basename(p)), []).append(p)
    if "uniform" not in runs:
        raise SystemExit(f"open_question.py: {runs_dir}/uniform.h5 not found (run "
                         "bench/open_question.sh first)")
    data = {name: cached(load, p, p) for name, p in runs.items()}
    for name, p in dense.items():
        data[name] = cached(load_dense, p if p.endswith(".h5") else p + "/0.h5", p)
    for name, paths in sorted(groups.items(), key=lambda kv: (kv[0].split("-")[0], param_of(kv[0])[1])):
        data[name] = cached(load_final, paths[0], paths)
    ref, _ = data["uniform"]
    dref = data.get("dense-uniform", ({}, {}))[0]
    report = {"runs": {}, "distances": {}}
    if "return_time_exact" in dref:
        e, s_ = pooled(dref["return_time_exact"]), pooled(dref["return_time_s"])
        report["return_time_check"] = {"exact_median": float(np.median(e)) if len(e) else None,
                                       "sampled_median": float(np.median(s_)) if len(s_) else None,
                                       "n_exact": int(len(e)), "n_sampled": int(len(s_))}
    for name, (obs, meta) in data.items():
        summary = dict(meta)
        for q in ["full_stick", "returned", "returns", "stick_arrivals", "return_time",
                  "landing_r", "full_stick_s", "return_time_s"]:
            summary[q] = mean_ci(obs[q], bootstrap, rng) if q in obs else None
        if "return_time" in obs:
            summary["return_time_spread"] = return_spread(pooled(obs["return_time"]))
        report["runs"][name] = summary
        if name == "uniform":
            continue
        report["distances"][name] = {}
        base = dref if name.startswith("dense-") else ref
        if name == "dense-uniform":
            continue
        for q in obs:
            if q in ("full_stick", "returned", "returns", "stick_arrivals", "return_time_exact",
                     "full_stick_s") or q not in base:
                continue
            d = distances(base[q], obs[q], bootstrap, rng)
            if d:
                report["distances"][name][q] = d
    exit_map = os.path.join(runs_dir, "exit-map.h5")
    if os.path.exists(exit_map):
        report["followed_exits"] = followed_exits(exit_map, data)
    return data, report


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default=".")
    ap.add_argument("--figures", default=".")
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--json", default=None)
    ap.add_argument("--no-figures", action="store_true")
    args = ap.parse_args()
    data, report = analyse(args.runs, args.bootstrap)
    out = args.json or os.path.join(args.runs, "open_question.json")
    with open(out, "w") as fh:
        json.dump(report, fh, indent=1, default=float)
    print_report(report)
    if not args.no_figures:
        figures(data, report, args.figures)


def followed_exits(path, data):
    """For each smooth ensemble with horizons 10 and 50: the Filippov members (exit u, no
    margin) nearest to its median state at t = 10, and their r(50) against its own."""
    with h5py.File(path, "r") as f:
        n = f["members/status"].shape[0]
        u = twofold_exits(f, n)[0][:, 0, 1]
        a = f["members/trajectory"].attrs
        tr = f["members/trajectory"][:].reshape(n, int(a["samples"]), -1)
        ts = np.linspace(a["t0"], a["t_end"], int(a["samples"]))
    k10, k50 = int(np.argmin(abs(ts - 10))), int(np.argmin(abs(ts - 50)))
    out = {}
    for name, (obs, _) in data.items():
        if not all(q in obs for q in ("r_T10", "omega_T10", "r_T50")):
            continue
        if name in ("uniform", "uniform-b", "weighted"):
            continue
        r10, w10, r50 = (np.median(pooled(obs[q])) for q in ("r_T10", "omega_T10", "r_T50"))
        d = np.hypot((tr[:, k10, 0] - r10) / 1e-4, (tr[:, k10, 2] - w10) / 1e-3)
        best = np.argsort(np.nan_to_num(d, nan=np.inf))[:3]
        out[name] = {"median_r10": float(r10), "median_omega10": float(w10),
                     "median_r50": float(r50),
                     "nearest": [{"u": float(u[i]), "distance": float(d[i]),
                                  "r50": float(tr[i, k50, 0])} for i in best],
                     "fraction_within_1": float(np.mean(d < 1))}
    return out


def print_report(report):
    for name, f in report.get("followed_exits", {}).items():
        near = ", ".join(f"u = {x['u']:.4f} (d {x['distance']:.2f}, r50 {x['r50']:.5f})"
                         for x in f["nearest"])
        print(f"{name:22s} median r10 {f['median_r10']:.5f} r50 {f['median_r50']:.5f}; "
              f"Filippov members within 1: {f['fraction_within_1']:.4f}; nearest: {near}")
    for name, s in report["runs"].items():
        fs, rt, rr = s["full_stick"], s["return_time"], s["returned"]
        line = f"{name:22s} members {s['members']:6d}"
        if fs:
            line += f"  full stick {fs['mean']:.3f} [{fs['ci'][0]:.3f}, {fs['ci'][1]:.3f}]"
        if s.get("stick_arrivals"):
            line += f"  arrivals at full stick per member {s['stick_arrivals']['mean']:.2f}"
        if rr:
            line += f"  returned {rr['mean']:.3f} [{rr['ci'][0]:.3f}, {rr['ci'][1]:.3f}]"
        if s.get("returns"):
            line += f"  returns per member {s['returns']['mean']:.3f}"
        if rt:
            line += f"  first return time {rt['mean']:.2f} [{rt['ci'][0]:.2f}, {rt['ci'][1]:.2f}]"
        sp = s.get("return_time_spread")
        if sp:
            line += (f" median {sp['median']:.1f} (5-95 % {sp['p5']:.1f}-{sp['p95']:.1f}), "
                     "bunches " + ", ".join(f"{a:.1f}-{b:.1f} ({k})" for a, b, k in sp["bunches"]))
        stopped = {STATUS_NAMES.get(int(k), k): c for k, c in s.get("status_counts", {}).items()
                   if int(k) != OK}
        if stopped:
            line += "  stopped: " + ", ".join(f"{k} {c}" for k, c in stopped.items())
        lost = {q: k for q, k in s.get("lost", {}).items() if k and q != "logs"}
        if lost:
            line += "  LOST (beyond the logs, not counted): " + ", ".join(
                f"{q} {k} members" for q, k in lost.items())
        fss, rts = s.get("full_stick_s"), s.get("return_time_s")
        if fss:
            line += f"  near full stick at t=150 {fss['mean']:.3f} [{fss['ci'][0]:.3f}, {fss['ci'][1]:.3f}]"
        if rts:
            line += f"  return time {rts['mean']:.2f} [{rts['ci'][0]:.2f}, {rts['ci'][1]:.2f}] (n {rts['n']})"
        print(line)
        if s.get("lost", {}).get("logs"):
            print(f"{'':22s} {s['lost']['logs']}")
    for name, qs in report["distances"].items():
        for q, d in qs.items():
            base = "dense-uniform" if name.startswith("dense-") else "uniform"
            print(f"{base} vs {name:16s} {q:14s} KS {d['ks']:.4f} [{d['ks_ci'][0]:.4f}, "
                  f"{d['ks_ci'][1]:.4f}]  W1 {d['w1']:.4g} [{d['w1_ci'][0]:.4g}, "
                  f"{d['w1_ci'][1]:.4g}]  (n {d['n_a']}, {d['n_b']})"
                  + (f"  KS p = {d['p']:.2g}" if "p" in d else ""))


def param_of(name):
    m = re.search(r"(eps|sigma)([0-9.e-]+)$", name)
    return (m.group(1), float(m.group(2))) if m else (None, 0.0)


HIST_TITLES = {"landing_r": "r at the first crossing of $\\Sigma$ after the exit",
               "return_time": "time to the first return to the two-fold",
               "section_r": "occupation of $\\Sigma$: r at crossings (t < 300; dashed: dense, t < 150)",
               "r_T10": "r(t = 10)", "r_T50": "r(t = 50)", "omega_T50": "$\\omega$(t = 50)"}
HIST_BINS = 70
DISTANCE_PANELS = [("smoothed", "smoothing $\\varepsilon$, perturbation $\\varepsilon$"),
                   ("tiny", "smoothing $\\varepsilon$, perturbation $10^{-6}$"),
                   ("noisy", "noise $\\sigma$ on v ($\\varepsilon = 10^{-4}$)")]
DISTANCE_QUANTITIES = ["r_T10", "omega_T10", "r_T50", "omega_T50"]


def pick(data, kind):
    return sorted((n for n in data if n.startswith(kind)), key=lambda n: param_of(n)[1])


def distribution_panels(data):
    """The histograms of open-question-distributions.png, one panel per observable of
    HIST_TITLES (None where no run has values): the bin edges (HIST_BINS - 1 bins over the
    0.5-99.5 % range of all values in the panel) and per series the run, the observable's key
    (a key ending in _s is a dense trace's sample-based observable, drawn dashed), the pooled
    values and the density heights drawn (values clipped into the range)."""
    shown = ["uniform", "weighted"]
    for kind in ("smoothed", "tiny"):
        if pick(data, kind):
            shown.append(pick(data, kind)[0])
    if pick(data, "noisy"):
        shown += [pick(data, "noisy")[0], pick(data, "noisy")[-1]]
    panels = []
    for q, title in HIST_TITLES.items():
        series = [(name, q) for name in shown if q in data[name][0]]
        series += [(name, q + "_s") for name in data
                   if name.startswith("dense-") and q + "_s" in data[name][0]]
        series = [(name, key, pooled(data[name][0][key])) for name, key in series]
        series = [(name, key, v) for name, key, v in series if len(v)]
        if not series:
            panels.append(None)
            continue
        lo, hi = np.percentile(np.concatenate([v for _, _, v in series]), [0.5, 99.5])
        edges = np.linspace(lo, hi, HIST_BINS)
        panels.append({"q": q, "title": title, "edges": edges,
                       "series": [{"name": name, "key": key, "values": v,
                                   "heights": np.histogram(np.clip(v, lo, hi), bins=edges,
                                                           density=True)[0],
                                   "dashed": key.endswith("_s")}
                                  for name, key, v in series]})
    return panels


def distance_panels(data, report):
    """The lines of open-question-distances.png, one panel per kind of ensemble: per quantity
    the KS distances to the uniform ensemble against the ensemble's parameter with their
    bootstrap error bars (below, above), the sampling floor (upper 95 % of uniform against
    uniform-b, dotted) and the KS distance of the weighted ensemble (dashed)."""
    floor = report["distances"].get("uniform-b", {})
    weighted = report["distances"].get("weighted", {})
    panels = []
    for kind, label in DISTANCE_PANELS:
        curves = []
        for q in DISTANCE_QUANTITIES:
            pts = [(param_of(n)[1], report["distances"][n][q]) for n in pick(data, kind)
                   if q in report["distances"].get(n, {})]
            curves.append({
                "q": q,
                "x": np.array([p[0] for p in pts]),
                "ks": np.array([p[1]["ks"] for p in pts]),
                "err": np.array([[max(p[1]["ks"] - p[1]["ks_ci"][0], 0),
                                  max(p[1]["ks_ci"][1] - p[1]["ks"], 0)]
                                 for p in pts]).reshape(-1, 2).T,
                "floor": floor[q]["ks_ci"][1] if q in floor else None,
                "weighted": weighted[q]["ks"] if q in weighted else None})
        panels.append({"kind": kind, "label": label, "curves": curves})
    return panels


def figures(data, report, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    for ax, panel in zip(axes.flat, distribution_panels(data)):
        if panel is None:
            ax.set_visible(False)
            continue
        for s in panel["series"]:
            ax.stairs(s["heights"], panel["edges"], lw=1.3, ls="--" if s["dashed"] else "-",
                      label=f"{s['name']} (n={len(s['values'])})")
        ax.set_title(panel["title"], fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle("Wheel, Fig. 5 parameters: what follows the nondeterministic two-fold")
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "open-question-distributions.png"), dpi=100)

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6), sharey=True)
    for ax, panel in zip(axes, distance_panels(data, report)):
        for qi, c in enumerate(panel["curves"]):
            color = f"C{qi}"
            if len(c["x"]):
                ax.errorbar(c["x"], c["ks"], yerr=c["err"], marker="o", color=color, capsize=3,
                            label=c["q"])
            if c["floor"] is not None:
                ax.axhline(c["floor"], color=color, ls=":", lw=1)
            if c["weighted"] is not None:
                ax.axhline(c["weighted"], color=color, ls="--", lw=1)
        ax.set_xscale("log")
        ax.set_xlabel(panel["label"])
        ax.set_ylim(0, 1.02)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    axes[0].set_ylabel("KS distance to the uniform-exit ensemble (95 % bootstrap)")
    fig.suptitle("dotted: uniform vs uniform with another seed (upper 95 %, the sampling "
                 "floor); dashed: uniform vs weighted exits", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "open-question-distances.png"), dpi=100)


if __name__ == "__main__":
    main()
