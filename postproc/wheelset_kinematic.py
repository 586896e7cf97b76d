#!/usr/bin/python3
"""wheelset_kinematic.py — the angular frequency of the kinematic oscillation of a railway
wheelset against its amplitude (Antali 2017, chapter 1, (1.41)): omega_N(ybar)/omega_L from
a scan of model `wheelset-kinematic` (configs/wheelset-kinematic.yaml) over the amplitude
ybar (points), with

    omega_L = v sqrt(h/(b r) R_w/(R_w - R_r) (1 + R_r h/(b sqrt(1 + h^2))))   (1.57)

and the parabola 1 + beta ybar^2 of (1.41) for two values of beta: the engine's own (the
small-amplitude limit of (omega_N/omega_L - 1)/ybar^2, Richardson from the two smallest
amplitudes of the scan; solid) and the thesis' small-conicity formula (1.61) (dashed).

Each line of the scan starts at y = ybar, psi = 0 and runs over the phase theta to
scan.time = 2 pi N, so it ends after exactly N periods: omega_N = scan.time / t_final.

    mpiexec -n 2 twofold run configs/wheelset-kinematic.yaml -o wk.h5
    /usr/bin/python3 postproc/wheelset_kinematic.py wk.h5 out.png [--data out.npz]
"""
import argparse
import math

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def omega_linear(p):
    """Meijaard's formula, exact for the linearised kinematics (1.57)."""
    h, r, b, Rw, Rr = p["h"], p["r"], p["b"], p["R_w"], p["R_r"]
    return p["v"] * math.sqrt(h / (b * r) * Rw / (Rw - Rr)
                              * (1 + Rr * h / (b * math.sqrt(1 + h * h))))


def beta_small_conicity(p):
    """The thesis' approximation (1.61) for small h (1/m^2)."""
    h, r, Rw, Rr = p["h"], p["r"], p["R_w"], p["R_r"]
    d = Rw - Rr
    return ((3 * r - 4 * Rw) / (16 * r * d ** 2)
            + (p["dR_w"] * d + 3 * Rr * (p["dR_w"] - p["dR_r"])) / (16 * h * d ** 3)
            - Rr * (p["ddR_w"] * Rw - p["ddR_r"] * Rr) / (16 * d ** 3))


def read(path):
    """Amplitudes, omega_N at the first speed of each line, and the model parameters."""
    with h5py.File(path, "r") as f:
        model = f.attrs["model"]
        model = model.decode() if isinstance(model, bytes) else str(model)
        if model != "wheelset-kinematic":
            raise SystemExit(f"{path}: model '{model}', this figure needs wheelset-kinematic")
        yparam = f.attrs.get("scan_y_param", b"")
        yparam = yparam.decode() if isinstance(yparam, bytes) else str(yparam)
        if yparam != "ybar":
            raise SystemExit(f"{path}: the scan lines run over '{yparam}', this figure needs "
                             "scan.y.param ybar")
        p = {k: float(v) for k, v in f["model"].attrs.items()
             if np.ndim(v) == 0 and not isinstance(v, (bytes, str))}
        m = f["members"]
        ybar = m["y"][...]
        nx = int(f.attrs["points_per_line"])
        state = m["state"][...].reshape(len(ybar), nx, 3)
        status = m["point_status"][...].reshape(len(ybar), nx)
        speed = m["x"][...].reshape(len(ybar), nx)[0, 0]
        phase = float(f.attrs["time"])
    ok = status[:, 0] == 1  # TF_MEMBER_OK
    p = dict(p, v=float(speed))
    return ybar[ok], phase / state[ok, 0, 2], p, ybar[~ok]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("h5")
    ap.add_argument("png")
    ap.add_argument("--data", help="also save the arrays drawn (npz)")
    a = ap.parse_args()
    ybar, omega, p, failed = read(a.h5)
    if len(ybar) < 2:
        raise SystemExit(f"{a.h5}: fewer than two amplitudes ended ok")
    wl = omega_linear(p)
    ratio = omega / wl
    # (ratio - 1)/ybar^2 = beta + gamma ybar^2 + ...: Richardson on the two smallest amplitudes
    i0, i1 = np.argsort(ybar)[:2]
    q0, q1 = (ratio[i0] - 1) / ybar[i0] ** 2, (ratio[i1] - 1) / ybar[i1] ** 2
    beta_engine = (q0 * ybar[i1] ** 2 - q1 * ybar[i0] ** 2) / (ybar[i1] ** 2 - ybar[i0] ** 2)
    beta_thesis = beta_small_conicity(p)
    yy = np.linspace(0.0, ybar.max() * 1.05, 200)
    curve_engine = 1 + beta_engine * yy ** 2
    curve_thesis = 1 + beta_thesis * yy ** 2

    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    ax.plot(yy * 1e3, curve_engine, "-", color="C0",
            label=rf"(1.41), $\beta$ = {beta_engine * 1e-6:.3e} 1/mm$^2$ (engine, $\bar y\to 0$)")
    ax.plot(yy * 1e3, curve_thesis, "--", color="C1",
            label=rf"(1.41), $\beta$ = {beta_thesis * 1e-6:.3e} 1/mm$^2$ (small-$h$ (1.61))")
    ax.plot(ybar * 1e3, ratio, "o", color="k", ms=5, label="engine (exact geometry)")
    if len(failed):
        ax.axvline(failed.min() * 1e3, color="0.6", lw=0.8, ls=":")
        ax.text(failed.min() * 1e3, ax.get_ylim()[0], " contact jumps", color="0.4",
                va="bottom", ha="left", fontsize=8)
    ax.set_xlabel(r"amplitude $\bar y$ (mm)")
    ax.set_ylabel(r"$\omega_N(\bar y)/\omega_L$")
    ax.set_title(rf"kinematic wheelset oscillation, $\omega_L$ = {wl:.4g} 1/s (1.57)",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.png, dpi=80)
    if a.data:
        np.savez(a.data, ybar=ybar, ratio=ratio, omega=omega, omega_L=wl,
                 beta_engine=beta_engine, beta_thesis=beta_thesis, yy=yy,
                 curve_engine=curve_engine, curve_thesis=curve_thesis)
    print(f"omega_L {wl:.10g} 1/s  beta engine {beta_engine:.6e} 1/m^2  (1.61) "
          f"{beta_thesis:.6e} 1/m^2")


if __name__ == "__main__":
    main()
