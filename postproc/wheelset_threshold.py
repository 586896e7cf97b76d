#!/usr/bin/python3
"""wheelset_threshold.py — the maximum amplitude of the kinematic oscillation of a railway
wheelset without slipping, against the speed (Antali 2017, §5.4.2, Figs 5.6-5.7): the
thresholds that the job slip-onset found by bisection on simulations (points) over the
thesis' closed forms

    ybar_1 = 2C/|alpha_y^2 - omega_L^2|            (5.63, dashed)
    ybar_2 = 2 C M_psi eta/|alpha_psi^2 - omega_L^2| (5.65, solid)

and their minimum (thick), the largest amplitude for which the wheelset rolls at both
contacts.  The resonances omega_L = alpha_y, alpha_psi and the crossings omega_L1, omega_L2
of (5.66) are marked.  Right panel: the phase plane of dual rolling at the speed of the
scan point nearest to `--phase-speed` (km/h): the boundary ellipse of Proposition 5.1 (5.58),
the lines |Psi| = Psi_sli of (5.52) and the rolling ellipses (5.61) at the simulated
threshold and 10% above it (Fig. 5.5).

    twofold run configs/wheelset-threshold.yaml -o wheelset-threshold.h5
    /usr/bin/python3 postproc/wheelset_threshold.py wheelset-threshold.h5 out.png
        [--phase-speed KMH]
"""
import argparse
import math

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def closed_form(p, omega):
    C = 0.5 * p["mu"] * p["load_per_mass"]
    y1 = 2 * C / np.abs(p["alpha_y"] ** 2 - omega ** 2)
    y2 = 2 * C * p["M_psi"] * p["eta"] / np.abs(p["alpha_psi"] ** 2 - omega ** 2)
    return y1, y2, C


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("h5")
    ap.add_argument("png")
    ap.add_argument("--phase-speed", type=float, default=200.0)
    a = ap.parse_args()
    with h5py.File(a.h5, "r") as f:
        g = f["threshold"]
        v = g["values"][...]
        th = g["threshold"][...]
        failed = g["failed"][...]
        p = {k: float(val) for k, val in f["model"].attrs.items()
             if np.ndim(val) == 0 and not isinstance(val, (bytes, str))}
        scan = g.attrs["scan_param"]
        scan = scan.decode() if isinstance(scan, bytes) else str(scan)
    if scan != "v":
        raise SystemExit(f"{a.h5}: the scan runs over '{scan}', this figure needs 'v'")
    k = p["omega_per_v"]
    vv = np.linspace(min(v.min(), 1.0), v.max() * 1.05, 2000)
    y1, y2, C = closed_form(p, k * vv)
    ok = failed == 0
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 5))
    kmh = 3.6
    ax.plot(vv * kmh, y1 * 1e3, "b--", lw=1, label=r"$\bar y_1 = 2C/|\alpha_y^2-\omega_L^2|$ (5.63)")
    ax.plot(vv * kmh, y2 * 1e3, "g-", lw=1,
            label=r"$\bar y_2 = 2CM_\psi\eta/|\alpha_\psi^2-\omega_L^2|$ (5.65)")
    ax.plot(vv * kmh, np.minimum(y1, y2) * 1e3, "k-", lw=3, alpha=0.35,
            label=r"$\min(\bar y_1, \bar y_2)$: thesis")
    ax.plot(v[ok] * kmh, th[ok] * 1e3, "ro", ms=5, label="simulation (bisection, slip-onset)")
    if (~ok).any():
        ax.plot(v[~ok] * kmh, np.zeros((~ok).sum()), "kx", label="no threshold found")
    for w, name in ((p["alpha_y"], r"$\omega_L=\alpha_y$"), (p["alpha_psi"], r"$\omega_L=\alpha_\psi$")):
        ax.axvline(w / k * kmh, color="0.6", ls=":", lw=1)
        ax.text(w / k * kmh, 0.03, name, rotation=90, va="bottom", ha="right",
                transform=ax.get_xaxis_transform(), fontsize=8)
    Me = p["M_psi"] * p["eta"]
    w1 = math.sqrt((p["alpha_psi"] ** 2 + Me * p["alpha_y"] ** 2) / (1 + Me))
    ax.axvline(w1 / k * kmh, color="m", ls=":", lw=1)
    ax.text(w1 / k * kmh, 0.97, rf"$\omega_{{L1}}$: {w1 / k * kmh:.1f} km/h", rotation=90,
            va="top", ha="right", transform=ax.get_xaxis_transform(), fontsize=8, color="m")
    if Me != 1 and (p["alpha_psi"] ** 2 - Me * p["alpha_y"] ** 2) / (1 - Me) > 0:
        w2 = math.sqrt((p["alpha_psi"] ** 2 - Me * p["alpha_y"] ** 2) / (1 - Me))
        ax.axvline(w2 / k * kmh, color="m", ls="-.", lw=1)
    top = np.nanmax(th[ok]) * 1e3 * 2.2 if ok.any() else 20
    ax.set_ylim(0, top)
    ax.set_xlim(v.min() * kmh * 0.97, v.max() * kmh * 1.02)
    ax.set_xlabel("speed v (km/h)")
    ax.set_ylabel("maximum amplitude without slipping (mm)")
    ax.set_title(rf"wheelset, Coulomb contact: $C$ = {C:.2f} N/kg, $M_\psi$ = {p['M_psi']:g}, "
                 rf"$\eta$ = {p['eta']:g}", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")

    # phase plane at one scan speed
    i = int(np.argmin(np.abs(v * kmh - a.phase_speed)))
    w = k * v[i]
    q = abs(p["alpha_y"] ** 2 - w ** 2)
    s = abs(p["alpha_psi"] ** 2 - w ** 2) / p["M_psi"]
    t = np.linspace(0, 2 * np.pi, 721)
    bx.plot(2 * C / q * np.cos(t) * 1e3, 2 * C / s * np.sin(t) * 1e3, "k-", lw=2,
            label="slipping starts (5.58)")
    psi_sli = 2 * C / s
    bx.axhline(psi_sli * 1e3, color="k", ls="--", lw=1, label=r"$|\Psi| = \Psi_{sli}$ (5.52)")
    bx.axhline(-psi_sli * 1e3, color="k", ls="--", lw=1)
    if ok[i]:
        for fac, style, lab in ((1.0, "r-", "rolling ellipse at the simulated threshold"),
                                (1.1, "r:", "10% above: leaves the rolling set")):
            A = th[i] * fac
            bx.plot(A * np.cos(t) * 1e3, -A / p["eta"] * np.sin(t) * 1e3, style, label=lab)
    bx.set_aspect("equal", adjustable="datalim")
    bx.set_xlabel("y (mm)")
    bx.set_ylabel(r"$\Psi = b\psi$ (mm)")
    bx.set_title(f"dual-rolling phase plane at v = {v[i] * kmh:.0f} km/h", fontsize=10)
    bx.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(a.png, dpi=120)


if __name__ == "__main__":
    main()
