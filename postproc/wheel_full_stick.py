#!/usr/bin/python3
"""wheel_full_stick.py — the wheel's passage through full stick, Filippov against smoothed.

    /usr/bin/python3 postproc/wheel_full_stick.py FILIPPOV.h5 SMOOTHED.h5... OUT.png

FILIPPOV.h5 is a one-member ensemble of the event-driven engine, SMOOTHED.h5 the same member
with the friction law smoothed (model.smoothing, PETSc TS) at several epsilon, all from the
same initial state, to the same end time, with trajectory samples.  The engine continues the
Filippov member through full stick (h = g = 0: v = 0, omega = omega0) by the extended
Filippov verdict at the arrival (src/geometry/intersection.h); the smoothed members need no such
verdict.  Panel (a): the distance of each smoothed member's final state from the Filippov
member's, and its closest approach to the full-stick line, against epsilon (log-log): both
fall with epsilon if the verdict is the limit of the smoothed dynamics.  Panel (b): the
trajectories in the (omega, v) plane over the last tenth of the run (the arrival at full stick
and the departure from it), the Filippov member dashed.
"""
import re
import sys

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


def member(path):
    """(epsilon or None, final state, trajectory samples, omega0) of member 0."""
    with h5py.File(path, "r") as f:
        # the effective config (with every --set) is the file's fingerprint
        found = re.search(r"\nsmoothing:\n(?:  .*\n)*?  epsilon: (\S+)\n", f.attrs["fingerprint"])
        traj = f["members/trajectory"][0].reshape(-1, 3)
        return (float(found.group(1)) if found else None, f["members/final_state"][0], traj,
                float(f["model"].attrs["omega0"]))


def convergence(filippov, smoothed):
    """The arrays panel (a) draws: epsilon, |x_eps(T) - x_F(T)|, min over samples of the
    distance to full stick hypot(v, omega - omega0), and the Filippov member's own."""
    _, xf, trf, w0 = member(filippov)
    eps, dist, approach = [], [], []
    for path in smoothed:
        e, x, tr, _ = member(path)
        eps.append(e)
        dist.append(float(np.linalg.norm(x - xf)))
        approach.append(float(np.min(np.hypot(tr[:, 1], tr[:, 2] - w0))))
    order = np.argsort(eps)[::-1]
    return (np.array(eps)[order], np.array(dist)[order], np.array(approach)[order],
            float(np.min(np.hypot(trf[:, 1], trf[:, 2] - w0))))


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    filippov, smoothed, out = argv[1], argv[2:-1], argv[-1]
    eps, dist, approach, _ = convergence(filippov, smoothed)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.5))
    a.loglog(eps, dist, "o-", label=r"$|x_\varepsilon(T) - x_{Filippov}(T)|$")
    a.loglog(eps, approach, "s--", label=r"closest approach to full stick")
    a.set_xlabel(r"smoothing $\varepsilon$")
    a.set_ylabel("distance")
    a.set_title("(a) smoothed wheel -> engine's verdict at full stick")
    a.legend()
    a.grid(True, which="both", alpha=0.3)
    _, _, trf, w0 = member(filippov)
    last = slice(-len(trf) // 10, None)  # the last tenth of the run: arrival and departure
    for path in smoothed:
        e, _, tr, _ = member(path)
        b.plot(tr[last, 2], tr[last, 1], lw=2.5, alpha=0.6, label=rf"smoothed, $\varepsilon$ = {e:g}")
    b.plot(trf[last, 2], trf[last, 1], "k--", lw=1, label="Filippov (engine)")
    b.plot([w0], [0], "r*", ms=12, label="full stick (v = 0, omega = omega0)")
    b.set_xlabel("omega")
    b.set_ylabel("v")
    b.set_title("(b) through full stick")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv)
