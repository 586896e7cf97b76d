#!/usr/bin/python3
"""wheel_fig4.py — Fig. 4 of Szalai & Jeffrey (2014) from a `singularity-map` results file.

    /usr/bin/python3 postproc/wheel_fig4.py RESULTS.h5 OUT.png

The figure shows why the paper's point (r*, omega*) = (0.1859, -1.037) is nondeterministic:
panel (a), the Teixeira case-1 region, is the overlap of the conditions in (b)-(g).  Panel (h)
adds what (a) hides: the class of the two-fold everywhere else.  Every panel is drawn from the
map's own columns (K, J, derived, class, valid), so the figure shows what the engine computed,
not a re-derivation.  Works for any map axes of the wheel (labels come from the file);
configs/wheel-fig4.yaml is the paper's map.
"""
import os
import sys

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_layout import names_attr, text_attr  # noqa: E402

PAPER_POINT = (0.1859, -1.037)
LABELS = {"rstar": r"$r^*$", "omegastar": r"$\omega^*$"}
CLASS_COLOURS = {"teixeira-case1": "#d62728", "teixeira-case2": "#ff9896",
                 "teixeira-case3": "#ffbb78", "visible": "#1f77b4",
                 "visible-invisible": "#aec7e8", "degenerate": "#7f7f7f"}
NONE_COLOUR = "#000000"
SHADE = "#4c72b0"


def load(path):
    """Columns of the map as (ny, nx) arrays, plus axes and names."""
    with h5py.File(path, "r") as f:
        if int(f.attrs.get("complete", 0)) != 1:
            sys.exit(f"{path}: the map is incomplete (resume it first)")
        x, y = f["map/x"][:], f["map/y"][:]
        shape = (len(y), len(x))
        m = f["members"]
        derived_names = names_attr(f, "derived_names")
        derived = m["derived"][:]
        d = {
            "x": x, "y": y,
            "xname": text_attr(f, "map_x_param"), "yname": text_attr(f, "map_y_param"),
            "class_names": names_attr(f, "class_names"),
            "cls": m["class"][:].reshape(shape), "valid": m["valid"][:].reshape(shape) == 1,
            "K": m["K"][:].reshape(shape + (4,)), "J": m["J"][:].reshape(shape + (2,)),
        }
        for name in ("kappa", "k2"):
            d[name] = derived[:, derived_names.index(name)].reshape(shape)
    return d


def draw_mask(ax, d, mask, title):
    """Shaded where the condition holds (NaN compares false, so undefined means 'no')."""
    ax.pcolormesh(d["x"], d["y"], np.where(mask, 1.0, np.nan), shading="nearest",
                  cmap=ListedColormap([SHADE]), vmin=0, vmax=1, rasterized=True)
    ax.set_title(title, fontsize=11)


def draw_g(ax, d):
    with np.errstate(invalid="ignore"):
        k2_pos, kappa_pos = d["k2"] > 0, d["kappa"] > 0
    draw_mask(ax, d, k2_pos, r"(g) $k_2 > 0$ (shaded), $\kappa > 0$ (hatched)")
    matplotlib.rcParams["hatch.linewidth"] = 0.8
    ax.contourf(d["x"], d["y"], kappa_pos.astype(float), levels=[0.5, 1.5], colors="none",
                hatches=["////"])
    ax.contour(d["x"], d["y"], kappa_pos.astype(float), levels=[0.5], colors="k",
               linewidths=0.8)


def draw_classes(ax, d):
    names = d["class_names"]
    colours = [CLASS_COLOURS.get(n, "#bcbd22") for n in names]
    cls = d["cls"].astype(float)
    cls[cls < 0] = len(names)  # no two-fold found
    ax.pcolormesh(d["x"], d["y"], cls, shading="nearest",
                  cmap=ListedColormap(colours + [NONE_COLOUR]), vmin=-0.5,
                  vmax=len(names) + 0.5, rasterized=True)
    # invalid parameters (kappa <= 0 or k2 <= 0): lightened, as they are not a wheel
    ax.pcolormesh(d["x"], d["y"], np.where(d["valid"], np.nan, 1.0), shading="nearest",
                  cmap=ListedColormap(["white"]), alpha=0.55, vmin=0, vmax=1, rasterized=True)
    present = set(np.unique(d["cls"]).tolist())
    handles = [Patch(color=c, label=n) for i, (n, c) in enumerate(zip(names, colours))
               if i in present]
    if -1 in present:
        handles.append(Patch(color=NONE_COLOUR, label="no two-fold found"))
    handles.append(Patch(facecolor="white", edgecolor="0.5", label="pale: $\\kappa$ or $k_2 \\leq 0$"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8,
              frameon=False, borderaxespad=0)
    ax.set_title("(h) class of the two-fold", fontsize=11)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: wheel_fig4.py RESULTS.h5 OUT.png")
    d = load(sys.argv[1])
    K, J = d["K"], d["J"]
    with np.errstate(invalid="ignore"):
        conditions = [
            ((d["cls"] == d["class_names"].index("teixeira-case1")) & d["valid"],
             r"(a) Teixeira case 1 with $\kappa, k_2 > 0$"),
            (K[..., 3] > 0, r"(b) $\mathcal{K}^{--} > 0$"),
            (K[..., 0] < 0, r"(c) $\mathcal{K}^{++} < 0$"),
            (J[..., 0] < 0, r"(d) $\mathcal{J}_1 < 0$"),
            (J[..., 1] < 0, r"(e) $\mathcal{J}_2 < 0$"),
            (J[..., 0] * J[..., 1] - 1 > 0, r"(f) $\mathcal{J}_1\mathcal{J}_2 - 1 > 0$"),
        ]
    fig, axes = plt.subplots(2, 4, figsize=(17, 8), sharex=True, sharey=True,
                             constrained_layout=True)
    panels = axes.ravel()
    for ax, (mask, title) in zip(panels, conditions):
        draw_mask(ax, d, mask, title)
    draw_g(panels[6], d)
    draw_classes(panels[7], d)
    # (a)'s outline on the conditions makes the overlap visible at a glance
    case1 = conditions[0][0].astype(float)
    for ax in panels[1:7]:
        ax.contour(d["x"], d["y"], case1, levels=[0.5], colors="k", linewidths=1.0,
                   linestyles="--")
    for i, ax in enumerate(panels):
        ax.plot(*PAPER_POINT, marker="x", color="#ffd700" if i == 7 else "red", ms=10, mew=2.5,
                zorder=5)
        ax.set_xlim(d["x"][0], d["x"][-1])
        ax.set_ylim(d["y"][0], d["y"][-1])
        if i >= 4:
            ax.set_xlabel(LABELS.get(d["xname"], d["xname"]), fontsize=12)
        if i % 4 == 0:
            ax.set_ylabel(LABELS.get(d["yname"], d["yname"]), fontsize=12)
    fig.suptitle("Wheel on a turntable: where the two-fold is a nondeterministic Teixeira "
                 f"singularity.  ×: the paper's point (r*, ω*) = {PAPER_POINT}; "
                 "dashed: the region of (a)", fontsize=13)
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
