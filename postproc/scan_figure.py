#!/usr/bin/python3
"""scan_figure.py — a `scan` results file as a PNG.

    /usr/bin/python3 postproc/scan_figure.py RESULTS.h5 FIGURE.png

One parameter: every Lyapunov exponent against it, with the standard-error band and the
zero line.  The title counts lambda_1 > 0 (chaos) only where it exceeds SIGNIFICANCE standard
errors of its block spread: a periodic orbit's lambda_1 is 0 and its estimate scatters around
0 by about that error.  Two parameters: lambda_1 as a colour map (diverging around 0).
Reads /members/{grid, spectrum, error} and the attributes scan_x_param, scan_y_param.
"""
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def load(path):
    """What the figure draws: the grid, the spectrum and its error band, the axis names."""
    with h5py.File(path, "r") as f:
        grid = f["members/grid"][...]
        spec = f["members/spectrum"][...]
        err = f["members/error"][...]
        xname = str(f.attrs["scan_x_param"])
        yname = str(f.attrs["scan_y_param"]) if "scan_y_param" in f.attrs else None
        model = str(f.attrs.get("model", "?"))
    if spec.ndim == 1:
        spec, err = spec[:, None], err[:, None]
    return dict(grid=grid, spec=spec, err=err, xname=xname, yname=yname, model=model)


SIGNIFICANCE = 2  # standard errors


def positive(d):
    """Per point: lambda_1 > 0 beyond SIGNIFICANCE standard errors (False where undefined)."""
    l1, e1 = d["spec"][:, 0], d["err"][:, 0]
    with np.errstate(invalid="ignore"):
        return l1 > SIGNIFICANCE * e1


def title(d):
    """The one-parameter figure's title: the share of points with lambda_1 > 0 (positive)."""
    share = np.mean(positive(d))
    return (f"{d['model']}: Lyapunov spectrum versus {d['xname']} ({len(d['grid'])} points, "
            f"lambda_1 > 0 beyond {SIGNIFICANCE} s.e. on {100 * share:.0f} %)")


def main(path, out):
    d = load(path)
    grid, spec, err, xname, yname, model = (d[k] for k in ("grid", "spec", "err", "xname", "yname",
                                                          "model"))
    if yname is None:
        fig, ax = plt.subplots(figsize=(9, 4.5))
        x = grid[:, 0]
        for i in range(spec.shape[1]):
            ax.plot(x, spec[:, i], lw=0.8, label=f"$\\lambda_{i + 1}$")
            ax.fill_between(x, spec[:, i] - err[:, i], spec[:, i] + err[:, i], alpha=0.3)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_xlabel(xname)
        ax.set_ylabel("Lyapunov exponent")
        ax.legend()
        ax.set_title(title(d))
    else:
        xs, ys = np.unique(grid[:, 0]), np.unique(grid[:, 1])
        l1 = spec[:, 0].reshape(len(ys), len(xs))
        lim = np.nanmax(np.abs(l1))
        fig, ax = plt.subplots(figsize=(8, 6))
        im = ax.pcolormesh(xs, ys, l1, cmap="RdBu_r", vmin=-lim, vmax=lim, shading="nearest")
        fig.colorbar(im, ax=ax, label="$\\lambda_1$")
        ax.set_xlabel(xname)
        ax.set_ylabel(yname)
        ax.set_title(f"{model}: $\\lambda_1$ over ({xname}, {yname})")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
