#!/usr/bin/env python3
"""devs_fig5.py — lambda_1 versus normal load P of the DEVS friction model (Feldstein &
Kuzmin 1998, Fig. 5), and why the model as the paper writes it cannot give the curve the
paper describes (falling with load, no sharp peaks).

    /usr/bin/python3 postproc/devs_fig5.py devs-load-scan.h5 devs-load-scan.png [devs-load-mu-sweep.h5]

(a) lambda_1 of the full state (x^1, ..., x^N) from a `scan` over P (the paper's quantity),
with the mean of the elements' own exponents and P lambda_elem(mu / P) of ONE element map
iterated here in numpy: the tangent map of the ensemble is diagonal and element k's
derivative is applied only on the steps it is updated (probability q = P), so
lambda_1 = P lambda_elem(mu / P) for every N, windows (sharp dips) included.
(b), (c) with the optional 2-D scan over (P, mu): lambda_1 over the plane and, per mu, the
fraction of loads where it is positive — mu only slides the load axis along the element
map's exponent, which is negative for most xi = mu / P.

drawn() returns the arrays drawn, for tests."""
import sys

import h5py
import numpy as np


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def element_exponent(xi, a, orbits=8, steps=3000, skip=1000):
    """Lyapunov exponent per update of the paper's element map at each xi (largest over a
    few orbits from spread-out starts, as the full state's norm takes the largest)."""
    xi = np.asarray(xi, float)[:, None]
    root = np.sqrt(xi * xi - 4 * a * xi)
    x1, x2 = (xi + root) / (2 * xi), (xi - root) / (2 * xi)
    x = np.tile(np.linspace(0.05, 0.95, orbits), (xi.shape[0], 1))
    acc = np.zeros_like(x)
    with np.errstate(over="ignore", divide="ignore"):
        for i in range(skip + steps):
            up, low = x >= x1, x <= x2
            y = np.where(up, a * np.exp(x1 - x), np.where(low, a * np.exp(x - x2), xi * x * (1 - x)))
            if i >= skip:
                d = np.where(up | low, y, xi * np.abs(1 - 2 * x))  # |f'| = f on the tails
                acc += np.log(np.maximum(d, 1e-300))
            x = y
    return (acc / steps).max(axis=1)


def read_scan(path):
    with h5py.File(path, "r") as f:
        grid = f["members/grid"][:]
        lam = f["members/lambda1"][:]
        elem = f["members/lambda1_elements"][:]
        valid = f["members/valid"][:].astype(bool)
        model = {k: float(v) for k, v in f["model"].attrs.items() if np.ndim(v) == 0 and np.issubdtype(np.asarray(v).dtype, np.number)}
        xparam = text(f.attrs["scan_x_param"])
        yparam = text(f.attrs["scan_y_param"]) if "scan_y_param" in f.attrs else None
    return grid, lam, elem, valid, model, xparam, yparam


def drawn(scan_path, sweep_path=None):
    """The arrays the figure draws: P, lambda1, elements (the engine's), reference
    (P lambda_elem(mu / P), numpy), positive_fraction; with a sweep file also sweep_P,
    sweep_mu, sweep_lambda1 (mu x P), sweep_positive (fraction of valid loads with
    lambda1 > 0, per mu)."""
    grid, lam, elem, valid, model, xparam, _ = read_scan(scan_path)
    if xparam != "P":
        raise ValueError(f"{scan_path}: a scan over P expected, not over {xparam}")
    order = np.argsort(grid[:, 0])
    keep = order[valid[order]]
    P = grid[keep, 0]
    out = {"P": P, "lambda1": lam[keep], "elements": elem[keep], "N": int(round(model["N"])),
           "mu": model["mu"], "a": model["a"]}
    out["reference"] = P * element_exponent(model["mu"] / P, model["a"])
    out["positive_fraction"] = float(np.mean(out["lambda1"] > 0))
    if sweep_path:
        grid, lam, _, valid, model, xparam, yparam = read_scan(sweep_path)
        if (xparam, yparam) != ("P", "mu"):
            raise ValueError(f"{sweep_path}: a scan over P (x) and mu (y) expected")
        xs, ys = np.unique(grid[:, 0]), np.unique(grid[:, 1])
        table = np.full((len(ys), len(xs)), np.nan)
        table[np.searchsorted(ys, grid[:, 1]), np.searchsorted(xs, grid[:, 0])] = np.where(valid, lam, np.nan)
        ok = np.isfinite(table)
        out.update(sweep_P=xs, sweep_mu=ys, sweep_lambda1=table,
                   sweep_positive=np.sum((table > 0) & ok, axis=1) / np.maximum(ok.sum(axis=1), 1))
    return out


def main(path, out, sweep=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = drawn(path, sweep)
    rows = 3 if sweep else 1
    fig = plt.figure(figsize=(6.4, 9.6 if sweep else 4.4))
    gs = fig.add_gridspec(rows, 1, height_ratios=[1.2, 1, 0.7][:rows])
    ax = fig.add_subplot(gs[0])
    ax.plot(d["P"], d["lambda1"], "-", color="C0", lw=1.5, label=r"$\lambda_1$ of the full state (engine)")
    ax.plot(d["P"], d["elements"], "--", color="C1", lw=1, label="mean element exponent (engine)")
    ax.plot(d["P"], d["reference"], ":", color="k", lw=1.2,
            label=r"$P\,\lambda_{elem}(\mu/P)$, one element (numpy)")
    ax.axhline(0, color="0.6", lw=0.6)
    ax.set_ylabel(r"$\lambda_1$ per step")
    ax.set_xlabel("normal load P (= update probability q)")
    ax.set_title(f"(a) DEVS friction model (Feldstein & Kuzmin 1998, Fig. 5): N = {d['N']}, "
                 f"$\\mu$ = {d['mu']:g}, a = {d['a']:g}\n"
                 f"paper: $\\lambda_1$ falls with load, no sharp peaks; model as written: "
                 f"$\\lambda_1 = P\\,\\lambda_{{elem}}(\\mu/P)$,\n"
                 f"> 0 at {100 * d['positive_fraction']:.0f}% of the loads, dips at the element "
                 f"map's windows", fontsize=8, loc="left")
    ax.legend(fontsize=7, loc="lower left")
    if sweep:
        ax2 = fig.add_subplot(gs[1])
        xs, ys = d["sweep_P"], d["sweep_mu"]
        dx, dy = (xs[1] - xs[0]) / 2, (ys[1] - ys[0]) / 2
        im = ax2.imshow(d["sweep_lambda1"], origin="lower", aspect="auto", cmap="RdBu_r", vmin=-0.5,
                        vmax=0.5, extent=(xs[0] - dx, xs[-1] + dx, ys[0] - dy, ys[-1] + dy),
                        interpolation="nearest")
        fig.colorbar(im, ax=ax2, label=r"$\lambda_1$ (clipped at $\pm$0.5)", pad=0.02)
        ax2.set_xlabel("normal load P")
        ax2.set_ylabel(r"$\mu$")
        ax2.set_title("(b) $\\lambda_1$ over load and $\\mu$ (engine): positive (red) only where\n"
                      "$\\xi = \\mu/P$ lies in a chaotic band of the element map (3.57-4.25, 12.3-21.7)",
                      fontsize=8, loc="left")
        ax3 = fig.add_subplot(gs[2])
        best = int(np.argmax(d["sweep_positive"]))
        ax3.plot(ys, d["sweep_positive"], ".-", color="C3")
        ax3.axhline(0.5, color="0.6", lw=0.6, ls="--")
        ax3.set_ylim(0, 1)
        ax3.set_xlabel(r"$\mu$")
        ax3.set_ylabel(r"loads with $\lambda_1 > 0$")
        ax3.set_title(f"(c) at most {100 * d['sweep_positive'][best]:.0f}% of the loads "
                      f"(at $\\mu$ = {ys[best]:g}): no $\\mu$ makes $\\lambda_1$ mostly positive",
                      fontsize=8, loc="left")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: devs_fig5.py SCAN.h5 OUT.png [MU_SWEEP.h5]")
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else None)
