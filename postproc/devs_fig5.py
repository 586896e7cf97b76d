#!/usr/bin/env python3
"""devs_fig5.py — lambda_1 versus normal load P of the DEVS friction model (Feldstein &
Kuzmin 1998, Fig. 5) from a `scan` over P of the devs-load model.

    /usr/bin/python3 postproc/devs_fig5.py devs-load-scan.h5 devs-load-scan.png

Top: lambda_1 of the full state (x^1, ..., x^N) — the paper's quantity — with the mean of
the elements' own exponents.  Bottom: Wolf et al.'s (1985) estimate from the measured
signal X_i (the experimental method), where the scan stored it."""
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np


def main(path, out):
    with h5py.File(path, "r") as f:
        grid = f["members/grid"][:, 0]
        lam = f["members/lambda1"][:]
        elem = f["members/lambda1_elements"][:]
        series = f["members/lambda1_series"][:]
        valid = f["members/valid"][:].astype(bool)
        model = f["model"].attrs
        n = int(round(float(model["N"]))) if "N" in model else None
        mu = float(model["mu"]) if "mu" in model else None
        xparam = f.attrs["scan_x_param"]
        xparam = xparam.decode() if isinstance(xparam, bytes) else xparam
    order = np.argsort(grid)
    grid, lam, elem, series, valid = grid[order], lam[order], elem[order], series[order], valid[order]
    has_series = np.isfinite(series).any()
    fig, axes = plt.subplots(2 if has_series else 1, 1, figsize=(6.4, 6.4 if has_series else 4),
                             sharex=True, squeeze=False)
    ax = axes[0, 0]
    ax.plot(grid[valid], lam[valid], "-", color="C0", lw=1.5, label=r"$\lambda_1$ of the full state")
    ax.plot(grid[valid], elem[valid], "--", color="C1", lw=1, label="mean element exponent")
    ax.axhline(0, color="0.6", lw=0.6)
    ax.set_ylabel(r"$\lambda_1$ per step")
    title = "DEVS friction model"
    if n is not None and mu is not None:
        title += f": N = {n}, $\\mu$ = {mu:g}"
    ax.set_title(title + " (Feldstein & Kuzmin 1998, Fig. 5)", fontsize=9)
    ax.legend(fontsize=8)
    if has_series:
        ax2 = axes[1, 0]
        ok = valid & np.isfinite(series)
        ax2.plot(grid[ok], series[ok], ".-", color="C2", lw=0.8, ms=3,
                 label=r"Wolf et al. (1985) from $X_i$")
        ax2.set_ylabel(r"$\lambda_1$ from $X_i$")
        ax2.legend(fontsize=8)
    axes[-1, 0].set_xlabel(f"normal load {xparam}")
    fig.tight_layout()
    fig.savefig(out, dpi=150)
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: devs_fig5.py SCAN.h5 OUT.png")
    main(sys.argv[1], sys.argv[2])
