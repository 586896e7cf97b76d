#!/usr/bin/python3
"""ball_trajectory.py — a codimension-2 friction trajectory (job `trajectory` on ball-pool or
ball-spring): slip, then roll.

    /usr/bin/python3 postproc/ball_trajectory.py RESULTS.h5 OUT.png

Panels: (a) centre speed |v| and slip speed |u| against time, rolling intervals shaded and
the engine's transitions marked; (b) the velocity hodograph (v_y, v_z), dashed while
slipping and solid while rolling, with the slip velocity u drawn as arrows at a few slipping
samples — for the pool ball it shrinks along a straight line to Sigma (u = 0), where rolling
starts; (c) the slip direction phi = atan2(u_z, u_y) while slipping and the limit directions
the engine logged at its transitions.
"""
import sys

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KINDS = {0: "roll start", 1: "roll end", 2: "crossing"}
COLOURS = {0: "#2ca02c", 1: "#d62728", 2: "#9467bd"}


def main(path, out):
    with h5py.File(path, "r") as f:
        names = f.attrs["state_names"]
        names = (names.decode() if isinstance(names, bytes) else str(names)).split(",")
        model = f.attrs["model"]
        model = model.decode() if isinstance(model, bytes) else str(model)
        tr = f["trajectory"]
        if "mode" not in tr:
            sys.exit(f"{path}: not a codimension-2 trajectory (no /trajectory/mode)")
        t, x, mode = tr["t"][:], tr["state"][:], tr["mode"][:].astype(int)
        ev = tr["events"][:] if tr["events"].shape[0] else np.zeros((0, 3 + x.shape[1]))
    iu = [names.index("u_y"), names.index("u_z")]
    iv = [names.index("v_y"), names.index("v_z")]
    u, v = x[:, iu], x[:, iv]
    speed, slip = np.hypot(v[:, 0], v[:, 1]), np.hypot(u[:, 0], u[:, 1])

    fig, ax = plt.subplots(1, 3, figsize=(15, 4.6))
    a = ax[0]
    a.plot(t, speed, color="#1f77b4", label="centre speed |v|")
    a.plot(t, slip, color="#ff7f0e", label="slip speed |u|")
    rolling = mode == 0
    a.fill_between(t, 0, 1, where=rolling, transform=a.get_xaxis_transform(), color="#2ca02c",
                   alpha=0.12, label="rolling (on Sigma)")
    for e in ev:
        a.axvline(e[0], color=COLOURS[int(e[1])], lw=0.8, ls=":")
    a.set_xlabel("t")
    a.set_ylabel("speed")
    a.set_title(f"(a) {model}: slip and roll")
    a.legend(loc="upper right", fontsize=8)

    b = ax[1]
    for m_, style in ((1, "--"), (0, "-")):
        vv = np.where((mode == m_)[:, None], v, np.nan)
        b.plot(vv[:, 0], vv[:, 1], style, color="#1f77b4",
               label="slipping" if m_ == 1 else "rolling")
    idx = np.nonzero(mode == 1)[0]
    for i in idx[:: max(1, len(idx) // 8)]:
        b.annotate("", xy=(v[i, 0] + u[i, 0] * 0.2, v[i, 1] + u[i, 1] * 0.2),
                   xytext=(v[i, 0], v[i, 1]),
                   arrowprops=dict(arrowstyle="->", color="#ff7f0e", lw=0.8))
    for e in ev:
        b.plot(e[3 + iv[0]], e[3 + iv[1]], "o", color=COLOURS[int(e[1])], ms=5,
               label=KINDS[int(e[1])])
    b.plot(v[0, 0], v[0, 1], "k^", ms=6, label="start")
    b.set_xlabel("$v_y$")
    b.set_ylabel("$v_z$")
    b.set_aspect("equal", adjustable="datalim")
    handles, labels = b.get_legend_handles_labels()
    keep = dict(zip(labels, handles))
    b.legend(keep.values(), keep.keys(), fontsize=8)
    b.set_title("(b) velocity of the centre (arrows: 0.2 u)")

    c = ax[2]
    phi = np.where(mode == 1, np.arctan2(u[:, 1], u[:, 0]), np.nan)
    c.plot(t, phi, ".", ms=2, color="#ff7f0e", label="slip direction")
    for e in ev:
        c.plot(e[0], np.angle(np.exp(1j * e[2])), "o", color=COLOURS[int(e[1])], ms=6,
               label=f"{KINDS[int(e[1])]}: limit direction")
    handles, labels = c.get_legend_handles_labels()
    keep = dict(zip(labels, handles))
    c.legend(keep.values(), keep.keys(), fontsize=8)
    c.set_ylim(-np.pi * 1.05, np.pi * 1.05)
    c.set_xlabel("t")
    c.set_ylabel(r"$\varphi$")
    c.set_title("(c) slip direction and limit directions")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
