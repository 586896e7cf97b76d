#!/usr/bin/python3
"""ensemble_figure.py — a results file of an `ensemble` job as one PNG.

    /usr/bin/python3 postproc/ensemble_figure.py RESULTS.h5 FIGURE.png

Left: final states projected on the first two state components, coloured by the third (or by
member id); right: histograms of every final-state component.  Members that failed are
counted in the title.  Uses Debian's python3-h5py, numpy and matplotlib.
"""
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_layout import names_attr  # noqa: E402


def load(path):
    """What the figure draws: the final states of the members that ended ok, the state names,
    the time in the left title and the counts in the suptitle."""
    with h5py.File(path, "r") as f:
        x = f["members/final_state"][...]
        status = f["members/status"][...]
        done = f["members/done"][...].astype(bool)
        names = names_attr(f, "state_names")
        model = f.attrs.get("model", "?")
        t_end = f["members/t_final"][...]
    ok = done & (status == 1)
    if x.ndim == 1:
        x = x[:, None]
    dim = x.shape[1]
    names = names if len(names) == dim else [f"x{i}" for i in range(dim)]
    return dict(x=x[ok], members=np.flatnonzero(ok), names=names, model=model,
                t=t_end[ok].max() if ok.any() else 0, ok=int(ok.sum()),
                failed=int(done.sum() - ok.sum()), pending=int((~done).sum()))


def title(d):
    return f"{d['model']}: {d['ok']} members ok, {d['failed']} failed, {d['pending']} pending"


def main(path, out):
    d = load(path)
    x, names, dim = d["x"], d["names"], d["x"].shape[1]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    if dim >= 2:
        c = x[:, 2] if dim >= 3 else d["members"]
        sc = axes[0].scatter(x[:, 0], x[:, 1], c=c, s=3, cmap="viridis", alpha=0.7)
        fig.colorbar(sc, ax=axes[0], label=names[2] if dim >= 3 else "member")
        axes[0].set_xlabel(names[0])
        axes[0].set_ylabel(names[1])
    else:
        axes[0].plot(d["members"], x[:, 0], ".", ms=2)
        axes[0].set_xlabel("member")
        axes[0].set_ylabel(names[0])
    axes[0].set_title(f"final states, t = {d['t']:g}")
    for i in range(dim):
        axes[1].hist(x[:, i], bins=60, histtype="step", label=names[i], density=True)
    axes[1].set_xlabel("value")
    axes[1].set_ylabel("density")
    axes[1].legend()
    axes[1].set_title("distribution of final-state components")
    fig.suptitle(title(d))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
