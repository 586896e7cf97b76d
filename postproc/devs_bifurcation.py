#!/usr/bin/env python3
"""devs_bifurcation.py — bifurcation diagrams of a DEVS (X/N versus a parameter), one panel
per value of the panel parameter (Feldstein & Kuzmin 1998, Figs. 6 and 7), from the output
of the `bifurcation` job.

    /usr/bin/python3 postproc/devs_bifurcation.py devs-bifurcation-q.h5 devs-bifurcation-q.png
"""
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def main(path, out):
    with h5py.File(path, "r") as f:
        grid = f["members/grid"][:]
        samples = f["members/samples"][:]
        valid = f["members/valid"][:].astype(bool)
        panels = f["bifurcation/panels"][:]
        xparam = text(f.attrs["x_param"])
        pparam = text(f.attrs["panel_param"])
        model = {k: f["model"].attrs[k] for k in f["model"].attrs}
    npanel = len(panels)
    fig, axes = plt.subplots(npanel, 1, figsize=(6.4, 2.6 * npanel), sharex=True, squeeze=False)
    fixed = [f"{k} = {float(model[k]):g}" for k in ("N", "q") if k in model and k != pparam]
    for j, value in enumerate(panels):
        ax = axes[j, 0]
        rows = (np.isnan(grid[:, 1]) if np.isnan(value) else grid[:, 1] == value) & valid
        x = np.repeat(grid[rows, 0], samples.shape[1])
        y = samples[rows].ravel()
        ax.plot(x, y, ",", color="k", alpha=0.5, rasterized=True)
        label = f"({chr(ord('a') + j)}) " + (f"{pparam} = {value:g}" if pparam else "")
        ax.set_title(label + ("; " if fixed and pparam else "") + ", ".join(fixed), fontsize=9,
                     loc="left")
        ax.set_ylabel("X / N")
        ax.set_ylim(0, 1)
    axes[-1, 0].set_xlabel(xparam)
    fig.suptitle("DEVS bifurcation diagrams (Feldstein & Kuzmin 1998)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=150)
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: devs_bifurcation.py BIFURCATION.h5 OUT.png")
    main(sys.argv[1], sys.argv[2])
