#!/usr/bin/python3
"""relay_bifurcation.py — the relay feedback system's bifurcation diagram over lam.

    /usr/bin/python3 postproc/relay_bifurcation.py RESULTS.h5 FIGURE.png

RESULTS.h5 is a Filippov `scan` with quantity poincare (configs/relay-bifurcation.yaml).  Top:
x2 at every recorded section crossing (x3 = 0 upwards) against lam, dark where the orbit slides
on Sigma = {x1 = 0} between the recorded crossings, light where it crosses Sigma transversally.
Bottom: the fraction of the time the orbit spends sliding (/members/sliding: its time over the
recorded window).  Prints the lam intervals without sliding: between them the symmetric orbit
gains or loses its sliding segments (sliding bifurcations).
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
from poincare_diagram import load  # noqa: E402


def sliding_fraction(path):
    """Per grid point: lam, the fraction of the recorded window spent sliding, ok."""
    with h5py.File(path, "r") as f:
        m = f["members"]
        lam = m["grid"][:, 0]
        dim = len(names_attr(f, "state_names"))
        samples = m["poincare"][...].reshape(len(lam), -1, 1 + dim)
        rec = m["poincare_recorded"][...]
        sliding = m["sliding"][...].reshape(len(lam), -1, 3)
        ok = m["status"][...] == 1
    window = np.array([s[r - 1, 0] - s[0, 0] if r > 1 else np.nan for s, r in zip(samples, rec)])
    return lam, sliding[:, :, 2].sum(axis=1) / window, ok


def main(path, figure):
    d = load(path, "x2")
    lam, frac, ok = sliding_fraction(path)
    slides = dict(zip(lam, frac > 0))
    dark = np.array([slides[q] for q in d["q"]])
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 6),
                                      gridspec_kw={"height_ratios": [2, 1]})
    top.plot(d["q"][dark], d["x"][dark], ".", ms=3, color="k", label="orbit slides on Σ")
    top.plot(d["q"][~dark], d["x"][~dark], ".", ms=3, color="tab:orange",
             label="orbit crosses Σ transversally")
    top.set_ylabel("x2 where x3 = 0 (upwards)")
    top.legend(loc="best", fontsize=8)
    top.set_title(f"relay feedback system: {d['points']} values of lam, {d['failed']} failed")
    bottom.plot(lam[ok], frac[ok], "-", color="k")
    bottom.set_ylabel("fraction of time sliding")
    bottom.set_xlabel("lam")
    fig.tight_layout()
    fig.savefig(figure, dpi=120)
    no_slide = lam[ok & (frac == 0)]
    print(f"points {len(lam)}, failed {int((~ok).sum())}")
    if len(no_slide):
        below = lam[ok & (frac > 0) & (lam < no_slide.min())]
        above = lam[ok & (frac > 0) & (lam > no_slide.max())]
        print(f"no sliding for lam in [{no_slide.min():.4g}, {no_slide.max():.4g}]; sliding at "
              f"lam <= {below.max() if len(below) else float('nan'):.4g} and lam >= "
              f"{above.min() if len(above) else float('nan'):.4g}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
