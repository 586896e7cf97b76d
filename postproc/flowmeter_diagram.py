#!/usr/bin/python3
"""flowmeter_diagram.py — bifurcation diagrams of the rotating ball flowmeter (Antali 2017,
Figs 4.5-4.7 and the characteristic curve of Fig. 4.10) from simulations to the stationary
state, with the thesis' stationary branches overlaid.

    /usr/bin/python3 postproc/flowmeter_diagram.py CONFIG.yaml OUT.png [--twofold PATH]
        [--points N] [--vmax V] [--t-end T] [--data OUT.npz]

The flow velocity v_f is swept up from slow dual-point rolling and back down, each run
(`twofold run CONFIG --set model.params.v_f=...`) continuing from the stationary state the
previous one reached, so hysteresis shows as it would in a slowly changing flow.  Dots: the
engine's final states (filled: sweep up, open: sweep down; colour: kinematic case), lines:
X_RR (4.50), X_SR (4.65) and X_SS (4.68-4.70, errata parametrisation), solid where stable
and realisable, dashed otherwise; the thresholds P3 = v_RR/SS (4.63), DNT1 = sqrt(gd/j)
(4.52), P2/NF2 = sqrt(gd/mu) (4.66) and the fold F of X_SS are marked.  The diagrams plot
Omega_w = (v - u1+)/r (4.9) as the thesis does, the right panel the ball speed v.
"""
import argparse
import json
import math
import os
import subprocess
import tempfile

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CASES = ["SS", "SR", "RS", "RR"]
COLOURS = {"SS": "#d62728", "SR": "#1f77b4", "RS": "#9467bd", "RR": "#2ca02c"}


def read_params(cfg):
    """The model parameters from the config (flat YAML written by us: key: value lines)."""
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


def simulate(twofold, cfg, vf, state, t_end, work):
    out = os.path.join(work, "run.h5")
    cmd = [twofold, "run", cfg, "-o", out, "--overwrite", "--quiet", "--json",
           "--set", f"model.params.v_f={vf!r}", "--set", f"integrator.t_end={t_end}",
           "--set", "output.samples=2",
           "--set", "initial.state=[" + ", ".join(repr(float(x)) for x in state) + "]"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"twofold failed at v_f = {vf}: {r.stderr}")
    s = json.loads(r.stdout.strip().splitlines()[-1])
    return np.array(s["final_state"]), s["final_case"], s["member_status"]


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
        out["mu_fold"] = (c * c * d / (4 * g)) ** (1 / 3)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config")
    ap.add_argument("png")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--twofold", default=os.path.join(here, "build", "twofold"))
    ap.add_argument("--points", type=int, default=28)
    ap.add_argument("--vmax", type=float, default=None)
    ap.add_argument("--t-end", type=float, default=400.0)
    ap.add_argument("--data", default=None)
    a = ap.parse_args()
    p = read_params(a.config)
    br = branches(p)
    r, j, mu = p["r"], p["j"], p["mu"]
    vmax = a.vmax or 1.2 * max(br["v_srss"], br["v_rrsr"], br.get("fold") or 0.0)
    grid = np.linspace(0.04 * vmax, vmax, a.points)
    work = tempfile.mkdtemp()
    runs = []
    state = np.array([0.0, 0.0, 0.0, grid[0]])
    for direction, vs in (("up", grid), ("down", grid[::-1])):
        for vf in vs:
            state, case, status = simulate(a.twofold, a.config, vf, state, a.t_end, work)
            runs.append((direction, vf, state.copy(), case, status))
            print(f"v_f = {vf:.4f} ({direction}): {case:2s} v = {state[3]:.5f} "
                  f"u1+ = {state[0]:.5f} u2 = {state[2]:.5f} [{status}]", flush=True)
    if a.data:
        np.savez(a.data, vf=[x[1] for x in runs], state=[x[2] for x in runs],
                 case=[x[3] for x in runs], sweep=[x[0] for x in runs])

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
            # stable from the fold (if any) to phi = pi/2, where X_SS meets X_RR at P3
            i_fold = int(np.argmax(vf_ss)) if br["fold"] else 0
            upper = np.arange(len(vf_ss)) >= i_fold
            A.plot(vf_ss[upper], yfun(vf_ss[upper], v_ss[upper], u_ss[upper]), color=COLOURS["SS"],
                   lw=2, label="$X_{SS}$")
            A.plot(vf_ss[~upper], yfun(vf_ss[~upper], v_ss[~upper], u_ss[~upper]), "--",
                   color=COLOURS["SS"], lw=1.5)
        for direction, vf, x, case, status in runs:
            y = yfun(vf, x[3], x[0])
            A.plot(vf, y, "o" if direction == "up" else "s", ms=6 if direction == "up" else 9,
                   mfc=COLOURS.get(case, "k") if direction == "up" else "none",
                   mec=COLOURS.get(case, "k"), alpha=0.9)
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
    ax[0].legend(fontsize=8, loc="upper left")
    regime = ("mu < mu_fold" if mu < br.get("mu_fold", 0) else
              "mu_fold < mu < j" if mu < j else "j < mu")
    ax[0].set_title(f"flowmeter, $\\mu$ = {mu:g} ({regime}): bifurcation diagram")
    ax[1].set_title("characteristic curve (Fig. 4.10)")
    ax[1].plot([0, vmax], [0, vmax], color="0.85", lw=0.8, zorder=0)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)


if __name__ == "__main__":
    main()
