#!/usr/bin/env python3
"""devs_bifurcation.py — bifurcation diagrams of a DEVS (X/N versus mu), one panel per value
of the panel parameter (Feldstein & Kuzmin 1998, Figs. 6 and 7), from the output of the
`bifurcation` job.

    /usr/bin/python3 postproc/devs_bifurcation.py devs-bifurcation-q.h5 devs-bifurcation-q.png

Between the first and second period doublings (3 < mu < 1 + sqrt 6) every element sits on
one point of the 2-cycle x+-, so X/N can only take the N + 1 values (j x+ + (N - j) x-) / N,
j = 0..N, drawn as thin lines.  Each panel's title says how many of them the run visits at
mu = 3.2 and how wide the band of recorded samples is in the chaotic range (mean over
mu >= 3.6 of max - min): the paper's "N + 1 steady states, more diffuse as q grows".  At
q = 1 the ensemble is deterministic and each element keeps its phase, so one initial state
shows only the two levels j and N - j, alternating.

drawn() returns the arrays drawn and those numbers, for tests."""
import sys

import h5py
import numpy as np

MU_LEVELS = 3.2  # inside the 2-cycle range (3, 1 + sqrt 6)
MU_CHAOS = 3.6  # the chaotic range starts near 3.57


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def cycle(mu):
    """The logistic map's 2-cycle x+, x-."""
    root = np.sqrt((mu + 1) * (mu - 3))
    return (mu + 1 + root) / (2 * mu), (mu + 1 - root) / (2 * mu)


def drawn(path):
    """Per panel: value, N, q, x and y (the points drawn), levels_mu (the grid mu nearest
    3.2), levels (the N + 1 closed-form values there), visited (the j whose level the run's
    samples at levels_mu sit on, within 1e-9), off_level (samples on none of them), spread
    (mean over mu >= 3.6 of the samples' max - min) and, for the thin lines, curve_mu and
    curves (N + 1 x len(curve_mu))."""
    with h5py.File(path, "r") as f:
        grid = f["members/grid"][:]
        samples = f["members/samples"][:]
        valid = f["members/valid"][:].astype(bool)
        panels = f["bifurcation/panels"][:]
        xparam = text(f.attrs["x_param"])
        pparam = text(f.attrs["panel_param"])
        model = {k: float(v) for k, v in f["model"].attrs.items() if np.ndim(v) == 0 and np.issubdtype(np.asarray(v).dtype, np.number)}
    out = []
    for value in panels:
        rows = (np.isnan(grid[:, 1]) if np.isnan(value) else grid[:, 1] == value) & valid
        mu, s = grid[rows, 0], samples[rows]
        order = np.argsort(mu)
        mu, s = mu[order], s[order]
        par = dict(model)
        if pparam:
            par[pparam] = float(value)
        p = {"value": float(value), "N": int(round(par["N"])), "q": par.get("q", np.nan),
             "x": np.repeat(mu, s.shape[1]), "y": s.ravel(), "xparam": xparam, "pparam": pparam}
        if xparam == "mu" and len(mu):
            n = p["N"]
            i = int(np.argmin(np.abs(mu - MU_LEVELS)))
            xp, xm = cycle(mu[i])
            j = np.arange(n + 1)
            p["levels_mu"], p["levels"] = float(mu[i]), (j * xp + (n - j) * xm) / n
            hit = np.abs(s[i][:, None] - p["levels"][None, :]) < 1e-9
            p["visited"] = j[hit.any(axis=0)]
            p["off_level"] = int(np.sum(~hit.any(axis=1)))
            chaos = mu >= MU_CHAOS
            p["spread"] = float(np.mean(s[chaos].max(axis=1) - s[chaos].min(axis=1))) if chaos.any() else np.nan
            cm = np.linspace(3.0 + 1e-9, 1 + np.sqrt(6), 100)
            cp, cn = cycle(cm)
            p["curve_mu"], p["curves"] = cm, (j[:, None] * cp + (n - j[:, None]) * cn) / n
        out.append(p)
    return out


def main(path, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = drawn(path)
    npanel = len(panels)
    fig, axes = plt.subplots(npanel, 1, figsize=(6.4, 2.7 * npanel), sharex=True, squeeze=False)
    for k, p in enumerate(panels):
        ax = axes[k, 0]
        if "curves" in p:
            for c in p["curves"]:
                ax.plot(p["curve_mu"], c, "-", color="C0", lw=0.4, alpha=0.5)
        ax.plot(p["x"], p["y"], ",", color="k", alpha=0.5, rasterized=True)
        head = f"({chr(ord('a') + k)}) "
        head += ", ".join(f"{name} = {p[name]:g}" for name in ("q", "N") if np.isfinite(p[name]))
        if "levels" in p:
            head += (f"; $\\mu$ = {p['levels_mu']:.2f}: {len(p['visited'])} of N + 1 = {p['N'] + 1} "
                     f"levels visited; band width for $\\mu \\geq$ {MU_CHAOS}: {p['spread']:.2f}")
        ax.set_title(head, fontsize=8, loc="left")
        if p.get("q") == 1 and "levels" in p:
            v = p["visited"]
            ax.text(0.01, 0.04, "q = 1: deterministic, every element keeps its phase on the 2-cycle,\n"
                    f"so X/N alternates between the levels j = {', '.join(map(str, v))} set by the "
                    "initial state;\nthe other levels are steady states of other initial states",
                    transform=ax.transAxes, fontsize=7, va="bottom")
        ax.set_ylabel("X / N")
        ax.set_ylim(0, 1)
    axes[-1, 0].set_xlabel(panels[0]["xparam"])
    fig.suptitle("DEVS bifurcation diagrams (Feldstein & Kuzmin 1998); blue: the N + 1 values "
                 "(j x+ + (N - j) x-)/N", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: devs_bifurcation.py BIFURCATION.h5 OUT.png")
    main(sys.argv[1], sys.argv[2])
