#!/usr/bin/python3
"""ball_trajectory.py — a codimension-2 friction trajectory (job `trajectory` on ball-pool or
ball-spring): slip, then roll.

    /usr/bin/python3 postproc/ball_trajectory.py RESULTS.h5 [OUT.png]   (default RESULTS.png)

Panels: (a) centre speed |v| and slip speed |u| against time, rolling intervals shaded and
the engine's transitions marked; (b) the velocity hodograph (v_y, v_z), dashed while
slipping and solid while rolling, with the slip velocity u drawn as arrows at a few slipping
samples — for the pool ball it shrinks along a straight line to Sigma (u = 0), where rolling
starts; (c) the slip direction phi = atan2(u_z, u_y) while slipping and the limit directions
the engine logged at its transitions.

`load` returns every array the figure draws and `make_figure` draws only those, so a test
can check the picture's data against the file and the closed forms.
"""
import os
import sys

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_layout import names_attr, text_attr  # noqa: E402

KINDS = {0: "roll start", 1: "roll end", 2: "crossing"}
COLOURS = {0: "#2ca02c", 1: "#d62728", 2: "#9467bd"}
ARROW_SCALE = 0.2  # arrows in (b) are ARROW_SCALE * u long
ARROWS = 8         # about this many arrows along the slipping part


def load(path):
    """The arrays drawn in panels (a)-(c) of a trajectory results file."""
    with h5py.File(path, "r") as f:
        names = names_attr(f, "state_names")
        model = text_attr(f, "model")
        tr = f["trajectory"]
        if "mode" not in tr:
            sys.exit(f"{path}: not a codimension-2 trajectory (no /trajectory/mode)")
        t, x, mode = tr["t"][:], tr["state"][:], tr["mode"][:].astype(int)
        ev = tr["events"][:] if tr["events"].shape[0] else np.zeros((0, 3 + x.shape[1]))
    iu = [names.index("u_y"), names.index("u_z")]
    iv = [names.index("v_y"), names.index("v_z")]
    u, v = x[:, iu], x[:, iv]
    slipping, rolling = mode == 1, mode == 0
    idx = np.nonzero(slipping)[0][:: max(1, int(np.sum(slipping)) // ARROWS)]
    kinds = ev[:, 1].astype(int)
    return {
        "model": model,
        "t": t,
        "speed": np.hypot(v[:, 0], v[:, 1]),                    # (a) |v|
        "slip": np.hypot(u[:, 0], u[:, 1]),                     # (a) |u|
        "rolling": rolling,                                     # (a) shaded samples
        "event_t": ev[:, 0],                                    # (a) vertical lines, (c) marks
        "event_kind": kinds,
        "v_slipping": np.where(slipping[:, None], v, np.nan),   # (b) dashed
        "v_rolling": np.where(rolling[:, None], v, np.nan),     # (b) solid
        "arrow_from": v[idx],                                   # (b) arrows, ARROW_SCALE * u
        "arrow_to": v[idx] + ARROW_SCALE * u[idx],
        "event_v": ev[:, [3 + iv[0], 3 + iv[1]]],               # (b) transitions
        "start": v[0],
        "phi": np.where(slipping, np.arctan2(u[:, 1], u[:, 0]), np.nan),  # (c) dots
        "event_phi": np.angle(np.exp(1j * ev[:, 2])),           # (c) limit directions
    }


def unique_legend(ax):
    handles, labels = ax.get_legend_handles_labels()
    keep = dict(zip(labels, handles))
    ax.legend(keep.values(), keep.keys(), fontsize=8)


def make_figure(d):
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.6))
    a = ax[0]
    a.plot(d["t"], d["speed"], color="#1f77b4", label="centre speed |v|")
    a.plot(d["t"], d["slip"], color="#ff7f0e", label="slip speed |u|")
    a.fill_between(d["t"], 0, 1, where=d["rolling"], transform=a.get_xaxis_transform(),
                   color="#2ca02c", alpha=0.12, label="rolling (on Sigma)")
    for te, k in zip(d["event_t"], d["event_kind"]):
        a.axvline(te, color=COLOURS[k], lw=0.8, ls=":")
    a.set_xlabel("t")
    a.set_ylabel("speed")
    a.set_title(f"(a) {d['model']}: slip and roll")
    a.legend(loc="upper right", fontsize=8)

    b = ax[1]
    b.plot(d["v_slipping"][:, 0], d["v_slipping"][:, 1], "--", color="#1f77b4", label="slipping")
    b.plot(d["v_rolling"][:, 0], d["v_rolling"][:, 1], "-", color="#1f77b4", label="rolling")
    for p, q in zip(d["arrow_from"], d["arrow_to"]):
        b.annotate("", xy=q, xytext=p, arrowprops=dict(arrowstyle="->", color="#ff7f0e", lw=0.8))
    for pv, k in zip(d["event_v"], d["event_kind"]):
        b.plot(pv[0], pv[1], "o", color=COLOURS[k], ms=5, label=KINDS[k])
    b.plot(d["start"][0], d["start"][1], "k^", ms=6, label="start")
    b.set_xlabel("$v_y$")
    b.set_ylabel("$v_z$")
    b.set_aspect("equal", adjustable="datalim")
    unique_legend(b)
    b.set_title(f"(b) velocity of the centre (arrows: {ARROW_SCALE:g} u)")

    c = ax[2]
    c.plot(d["t"], d["phi"], ".", ms=2, color="#ff7f0e", label="slip direction")
    for te, ph, k in zip(d["event_t"], d["event_phi"], d["event_kind"]):
        c.plot(te, ph, "o", color=COLOURS[k], ms=6, label=f"{KINDS[k]}: limit direction")
    unique_legend(c)
    c.set_ylim(-np.pi * 1.05, np.pi * 1.05)
    c.set_xlabel("t")
    c.set_ylabel(r"$\varphi$")
    c.set_title("(c) slip direction and limit directions")
    fig.tight_layout()
    return fig


def main(path, out):
    make_figure(load(path)).savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    default = sys.argv[1].removesuffix(".h5") + ".png"
    main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else default)
