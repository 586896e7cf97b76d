#!/usr/bin/python3
"""flowmeter_diagram.py — bifurcation diagrams of the rotating ball flowmeter (Antali 2017,
Figs 4.5-4.7 and the characteristic curve of Fig. 4.10) from a `scan` to the stationary state,
with the thesis' stationary branches overlaid.

    /usr/bin/python3 postproc/flowmeter_diagram.py INPUT OUT.png [--twofold PATH] [--ranks N]
        [--points N] [--vmax V] [--t-end T] [--scan-output SCAN.h5] [--data OUT.npz]

INPUT is the HDF5 file of a finished flowmeter scan over v_f (scan.quantity: stationary, e.g.
`twofold run configs/flowmeter-scan-mid.yaml -o mid.h5`), or a config: a scan config is run
as it is (`twofold run CONFIG`, one run per figure, with mpiexec -n N if --ranks N > 1);
any other flowmeter config (configs/flowmeter-*-friction.yaml) gives its model parameters to
a scan over v_f written here.  --points, --vmax and --t-end override scan.x.points,
scan.x.{min = 0.04 vmax, max = vmax} and scan.time (the simulated time per point).

The scan sweeps v_f up from slow dual-point rolling and back down (continuation both), each
point continuing from the stationary state the previous one reached, so hysteresis shows as
it would in a slowly changing flow.  Dots: the engine's final states (filled: sweep up, open:
sweep down; colour: kinematic case; a cross: not stationary by the scan's tolerance), lines:
X_RR (4.50) and X_SR (4.65), solid where stable and realisable, dashed otherwise, and X_SS as
the engine continues it (job `fold`, started from a stationary SS point of the scan, both ways
in v_f; solid where the eigenvalues say stable), with its fold F and, followed in mu, where the
fold leaves the branch (mu_fold); the thin grey line under it is the errata parametrisation of
X_SS (4.68-4.70).  The thresholds P3 = v_RR/SS (4.63), DNT1 = sqrt(gd/j) (4.52),
P2/NF2 = sqrt(gd/mu) (4.66) and F are marked.  The diagrams plot
Omega_w = (v - u1+)/r (4.9) as the thesis does, the right panel the ball speed v.
"""
import argparse
import json
import math
import os
import subprocess
import tempfile

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CASES = ["SS", "SR", "RS", "RR"]
COLOURS = {"SS": "#d62728", "SR": "#1f77b4", "RS": "#9467bd", "RR": "#2ca02c"}


def read_params(cfg):
    """The model parameters from a flowmeter config (key: value lines under params:)."""
    p = {}
    inside = False
    for line in open(cfg):
        s = line.split("#")[0].rstrip()
        if s.strip() == "params:":
            inside = True
            continue
        if inside:
            if not s.startswith("    ") or ":" not in s:
                if s.strip():
                    inside = False
                continue
            k, v = s.strip().split(":", 1)
            p[k.strip()] = float(v)
    return p


def is_scan_config(cfg):
    for line in open(cfg):
        s = line.split("#")[0].strip()
        if s.startswith("job:"):
            return s.split(":", 1)[1].strip() == "scan"
    return False


def scan_config_for(cfg, work):
    """A stationary scan over v_f with the model parameters of a (trajectory) config."""
    p = read_params(cfg)
    params = "\n".join(f"    {k}: {v!r}" for k, v in p.items())
    text = f"""job: scan
model:
  name: flowmeter
  params:
{params}
initial:
  state: [0, 0, 0, 0.05]
integrator:
  rtol: 1.0e-9
  atol: 1.0e-11
scan:
  quantity: stationary
  continuation: both
  time: 1000
  x: {{param: v_f, min: 0.16, max: 4.0, points: 28}}
"""
    path = os.path.join(work, "scan.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def run_scan(a, work):
    """One `twofold run` of the scan; returns the path of its HDF5 file."""
    cfg = a.input if is_scan_config(a.input) else scan_config_for(a.input, work)
    out = a.scan_output or os.path.join(work, "scan.h5")
    sets = []
    if a.points:
        sets.append(f"scan.x.points={a.points}")
    if a.vmax is None and not is_scan_config(a.input):
        p = read_params(a.input)
        br = branches(p)
        a.vmax = 1.2 * max(br["v_srss"], br["v_rrsr"], br.get("fold") or 0.0)
    if a.vmax:
        sets += [f"scan.x.min={0.04 * a.vmax!r}", f"scan.x.max={a.vmax!r}"]
    if a.t_end:
        sets.append(f"scan.time={a.t_end!r}")
    cmd = [a.twofold, "run", cfg, "-o", out, "--overwrite", "--json", "--progress", "log"]
    for x in sets:
        cmd += ["--set", x]
    if a.ranks > 1:
        cmd = [os.environ.get("MPIEXEC", "mpiexec"), "-n", str(a.ranks)] + cmd
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}")
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"scan: {summary['points']} points, {summary['stationary']} stationary, "
          f"final cases {summary['final_modes']}, bistable v_f {summary.get('bistable_x')}")
    return out


def read_scan(path):
    """The points of a 1-D stationary flowmeter scan, in run order."""
    f = h5py.File(path, "r")
    if f.attrs.get("quantity") != "stationary" or f.attrs.get("model") != "flowmeter":
        raise SystemExit(f"{path}: not a stationary scan of the flowmeter "
                         f"(quantity {f.attrs.get('quantity')}, model {f.attrs.get('model')})")
    if f.attrs.get("scan_x_param") != "v_f" or "scan_y_param" in f.attrs:
        raise SystemExit(f"{path}: the diagram needs a scan over v_f alone "
                         f"(scan.x.param {f.attrs.get('scan_x_param')})")
    if not f.attrs.get("complete"):
        raise SystemExit(f"{path}: the scan is not complete (finish it with --resume)")
    m = f["members"]
    P = int(f.attrs["points_per_line"])
    p = {k: float(v) for k, v in f["model"].attrs.items() if np.ndim(v) == 0 and
         isinstance(v, (float, np.floating, int, np.integer))}
    pts = dict(vf=m["x"][0], direction=m["direction"][0], state=m["state"][0].reshape(P, -1),
               stationary=m["stationary"][0].astype(bool), drift=m["drift"][0],
               case=np.array([CASES[c] if 0 <= c < 4 else "?" for c in m["mode"][0]]),
               status=m["point_status"][0])
    return p, pts, float(f["scan/x"][-1])


def branches(p):
    g, d, j, mu, c = p["g"], p["d"], p["j"], p["mu"], p["c"]
    out = {"v_rrsr": math.sqrt(g * d / j), "v_srss": math.sqrt(g * d / mu)}
    if mu < j:
        out["v_rrss"] = math.sqrt(g * d / mu) * math.sqrt(
            mu**2 * (mu + 1) / (mu**2 * (j + 1) + j - mu))
        phi = np.linspace(1e-5, math.pi / 2, 4000)
        s = np.sin(phi)
        D = mu**2 * (1 + j * s * s) + (j - mu) * s
        v = np.sqrt(g * d * mu * (1 + mu * s * s) / D)
        rho = mu * g * d * (j - mu) * np.cos(phi) / (j * v * D)
        vf = v + mu * g * (j - mu) * s * np.cos(phi) / (c * D)
        out["ss"] = (vf, v, rho * np.cos(phi))
        dv = np.diff(vf)
        turn = np.nonzero(np.sign(dv[1:]) != np.sign(dv[:-1]))[0]
        out["fold"] = float(vf[turn[0] + 1]) if len(turn) else None
    return out


def run_fold(twofold, p, state, vf, direction, vmax, track, work):
    """One `twofold run` of job fold; returns (summary, /fold/branch, /fold/folds)."""
    params = ", ".join(f"{k}: {p[k]!r}" for k in ("r", "d", "j", "g", "mu", "c"))
    fold = f"{{parameter: v_f, direction: {direction}, min: 0.0, max: {vmax!r}, points: 5000"
    if track:
        fold += f", track: {{parameter: mu, to: {p['mu'] / 5!r}, steps: 70, end_state: u2}}"
    cfg = os.path.join(work, f"fold-{direction}.yaml")
    out = os.path.join(work, f"fold-{direction}.h5")
    with open(cfg, "w") as f:
        f.write(f"job: fold\nmodel: {{name: flowmeter, params: {{{params}, v_f: {vf!r}}}}}\n"
                f"initial: {{state: {[float(q) for q in state]}}}\nfold: {fold}}}\n")
    r = subprocess.run([twofold, "run", cfg, "-o", out, "--overwrite", "--json", "--quiet"],
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return None
    with h5py.File(out, "r") as h:
        return (json.loads(r.stdout.strip().splitlines()[-1]), h["fold/branch"][...],
                h["fold/folds"][...])


def engine_ss(p, pts, twofold, vmax):
    """X_SS continued by the engine from the scan's first stationary SS point: the branch in
    v_f order (vf, state, max_real), the folds (vf, state), mu_fold (NaN if X_SS has no fold
    here: mu < mu_fold) — or None without a stationary SS point."""
    ss = [i for i in range(len(pts["vf"])) if pts["case"][i] == "SS" and pts["stationary"][i]]
    if not ss:
        return None
    i0 = ss[0]
    with tempfile.TemporaryDirectory() as work:
        up = run_fold(twofold, p, pts["state"][i0], pts["vf"][i0], "up", vmax, True, work)
        down = run_fold(twofold, p, pts["state"][i0], pts["vf"][i0], "down", vmax, False, work)
    if up is None or down is None:
        return None
    rows = np.vstack([down[1][::-1], up[1][1:]])  # one arc: the down run reversed, then up
    folds = np.vstack([down[2], up[2]])
    return dict(vf=rows[:, 0], state=rows[:, 1:5], max_real=rows[:, 5], fold_vf=folds[:, 0],
                fold_state=folds[:, 1:5],
                mu_fold=up[0].get("curve_end_extrapolated", float("nan")) if len(folds) else
                float("nan"))


def drawn(path, twofold):
    """What the figure draws: the scan's points (as main() lists them), the engine's X_SS
    branch and folds, and the thresholds marked."""
    p, pts, vmax = read_scan(path)
    return p, pts, vmax, engine_ss(p, pts, twofold, vmax)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input", help="scan results (.h5) or a flowmeter config")
    ap.add_argument("png")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--twofold", default=os.path.join(here, "build", "twofold"))
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--points", type=int, default=None)
    ap.add_argument("--vmax", type=float, default=None)
    ap.add_argument("--t-end", type=float, default=None)
    ap.add_argument("--scan-output", default=None, help="keep the scan's HDF5 file here")
    ap.add_argument("--data", default=None)
    a = ap.parse_args()
    if a.input.endswith(".h5"):
        path = a.input
    else:
        work = tempfile.TemporaryDirectory()  # removed when the process exits
        path = run_scan(a, work.name)
    p, pts, vmax, eng = drawn(path, a.twofold)
    br = branches(p)
    if eng is not None and len(eng["fold_vf"]):
        br["fold"] = float(eng["fold_vf"][0])
    elif eng is not None:
        br["fold"] = None
    r, j, mu = p["r"], p["j"], p["mu"]
    ok = np.array([s in (1, 7) for s in pts["status"]])  # ok or codim2: a state to plot
    runs = []
    for i in np.nonzero(ok)[0]:
        d = "up" if pts["direction"][i] > 0 else "down"
        x = pts["state"][i]
        runs.append((d, pts["vf"][i], x, pts["case"][i], bool(pts["stationary"][i])))
        print(f"v_f = {pts['vf'][i]:.4f} ({d:4s}): {pts['case'][i]:2s} v = {x[3]:.5f} "
              f"u1+ = {x[0]:.5f} u2 = {x[2]:.5f} drift {pts['drift'][i]:.1e}"
              f"{'' if pts['stationary'][i] else ' (not stationary)'}", flush=True)
    for i in np.nonzero(~ok)[0]:
        print(f"v_f = {pts['vf'][i]:.4f}: failed (status {pts['status'][i]}), not drawn")
    if a.data:
        np.savez(a.data, vf=[x[1] for x in runs], state=[x[2] for x in runs],
                 case=[x[3] for x in runs], sweep=[x[0] for x in runs],
                 stationary=[x[4] for x in runs])

    fig, ax = plt.subplots(1, 2, figsize=(13, 5))
    vfl = np.linspace(0, vmax, 400)
    # analytic branches (stability per the thesis: X_RR while rolling persists; X_SR stable
    # for v_f > sqrt(gd/j) and realisable for v_f >= sqrt(gd/mu); X_SS stable up to the fold)
    rr_end = br.get("v_rrss", br["v_rrsr"]) if mu < j else br["v_rrsr"]
    for k, (yfun, ylab) in enumerate(((lambda vf, v, u: (v - u) / r, r"$\Omega_w = (v - u_1^+)/r$"),
                                      (lambda vf, v, u: v, "ball speed $v$"))):
        A = ax[k]
        m = vfl <= rr_end
        A.plot(vfl[m], yfun(vfl[m], vfl[m], 0 * vfl[m]), color=COLOURS["RR"], lw=2, label="$X_{RR}$")
        A.plot(vfl[~m], yfun(vfl[~m], vfl[~m], 0 * vfl[~m]), ":", color=COLOURS["RR"], lw=1)
        vsr = vfl[vfl >= br["v_srss"]]
        u = vsr - p["g"] * p["d"] / (j * vsr)
        stable = vsr >= br["v_rrsr"] if mu > j else np.ones_like(vsr, bool)
        A.plot(vsr[stable], yfun(vsr[stable], vsr[stable], u[stable]), color=COLOURS["SR"], lw=2,
               label="$X_{SR}$")
        A.plot(vsr[~stable], yfun(vsr[~stable], vsr[~stable], u[~stable]), "--",
               color=COLOURS["SR"], lw=1.5)
        if "ss" in br:
            vf_ss, v_ss, u_ss = br["ss"]
            A.plot(vf_ss, yfun(vf_ss, v_ss, u_ss), color="0.6", lw=0.6, zorder=1,
                   label="$X_{SS}$ (4.68-4.70)" if k == 0 else None)
        if eng is not None:
            y = yfun(eng["vf"], eng["state"][:, 3], eng["state"][:, 0])
            stable = eng["max_real"] < 0
            for part, style, lw in ((stable, "-", 2), (~stable, "--", 1.5)):
                A.plot(eng["vf"], np.where(part, y, np.nan), style, color=COLOURS["SS"], lw=lw,
                       label=("$X_{SS}$ (job fold)" if part is stable else None) if k == 0
                       else None)
            for vf, x in zip(eng["fold_vf"], eng["fold_state"]):
                A.plot(vf, yfun(vf, x[3], x[0]), "D", color=COLOURS["SS"], ms=6)
        for direction, vf, x, case, stationary in runs:
            y = yfun(vf, x[3], x[0])
            A.plot(vf, y, "o" if direction == "up" else "s", ms=6 if direction == "up" else 9,
                   mfc=COLOURS.get(case, "k") if direction == "up" else "none",
                   mec=COLOURS.get(case, "k"), alpha=0.9)
            if not stationary:
                A.plot(vf, y, "x", color="k", ms=7)
        ys = [yfun(vf, x[3], x[0]) for _, vf, x, _, _ in runs]
        A.set_ylim(min(0.0, min(ys)), 1.3 * max(ys))  # the unrealisable X_RR line is clipped
        A.set_xlim(0, vmax)
        marks = [("P3", br.get("v_rrss")), ("DNT1" if mu > j else None, br["v_rrsr"]),
                 ("NF2" if br.get("fold") else "P2" if mu < j else "DNF2", br["v_srss"]),
                 ("F", br.get("fold"))]
        for name, v in marks:
            if name and v and v <= vmax:
                A.axvline(v, color="0.6", lw=0.7, ls=":")
                A.text(v, A.get_ylim()[1], name, fontsize=8, ha="center", va="bottom",
                       color="0.3")
        A.set_xlabel("flow velocity $v_f$")
        A.set_ylabel(ylab)
    ax[0].plot([], [], "ko", label="simulation, $v_f$ up")
    ax[0].plot([], [], "ks", mfc="none", ms=9, label="simulation, $v_f$ down")
    if not all(x[4] for x in runs):
        ax[0].plot([], [], "kx", label="not stationary (drift > tolerance)")
    ax[0].legend(fontsize=8, loc="upper left")
    if eng is not None and math.isfinite(eng["mu_fold"]):
        regime = f"mu_fold = {eng['mu_fold']:.6f} < mu < j"
    elif eng is not None:
        regime = "no fold of X_SS: mu < mu_fold"
    else:
        regime = "mu_fold < mu < j" if mu < j else "j < mu"
    ax[0].set_title(f"flowmeter, $\\mu$ = {mu:g} ({regime}): bifurcation diagram")
    ax[1].set_title("characteristic curve (Fig. 4.10)")
    ax[1].plot([0, vmax], [0, vmax], color="0.85", lw=0.8, zorder=0)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)


if __name__ == "__main__":
    main()
