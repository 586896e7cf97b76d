#!/usr/bin/python3
"""poincare_diagram.py — a bifurcation diagram from a `scan` with quantity poincare.

    /usr/bin/python3 postproc/poincare_diagram.py RESULTS.h5 FIGURE.png [COMPONENT]

Every recorded event of every grid point is one dot: the chosen state component (default: the
one poincare.component compared, else the first) at the event against the scanned parameter.
For the pressure-relief valve (configs/valve-bifurcation.yaml) that is the lift x at impacts
and extrema versus the flow rate q.  Points of members that did not end ok are left out and
counted in the title.
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


def load(path, component=None):
    """What the figure draws: parameter values and component values of every recorded event."""
    with h5py.File(path, "r") as f:
        m = f["members"]
        names = names_attr(f, "state_names")
        dim = len(names)
        grid = m["grid"][:, 0]
        samples = m["poincare"][...].reshape(len(grid), -1, 1 + dim)
        status = m["status"][...]
        xname = str(f.attrs["scan_x_param"])
        model = str(f.attrs.get("model", "?"))
    c = names.index(component) if component else 0
    ok = status == 1
    vals = samples[ok, :, 1 + c]
    par = np.repeat(grid[ok], vals.shape[1])
    vals = vals.ravel()
    keep = np.isfinite(vals)
    return dict(q=par[keep], x=vals[keep], xname=xname, yname=names[c], model=model,
                failed=int((~ok).sum()), points=len(grid))


def main(path, out, component=None):
    d = load(path, component)
    fig, ax = plt.subplots(figsize=(9, 5))
    ax.plot(d["q"], d["x"], ".k", ms=1.2, alpha=0.6)
    ax.set_xlabel(d["xname"])
    ax.set_ylabel(f"{d['yname']} at the recorded events")
    title = f"{d['model']}: {d['points']} values of {d['xname']}"
    if d["failed"]:
        title += f" ({d['failed']} failed)"
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(out, dpi=150)
    print(out)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else None)
