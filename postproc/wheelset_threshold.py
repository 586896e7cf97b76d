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

`load` returns every curve, point and line the figure draws (SI units: m/s, m) and
`make_figure` draws only those, so a test can check them against the closed forms.
"""
import argparse
import math

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KMH, MM = 3.6, 1e3  # axis units: km/h and mm
ABOVE = 1.1         # the second rolling ellipse, this factor above the threshold


def closed_form(p, omega):
    C = 0.5 * p["mu"] * p["load_per_mass"]
    y1 = 2 * C / np.abs(p["alpha_y"] ** 2 - omega ** 2)
    y2 = 2 * C * p["M_psi"] * p["eta"] / np.abs(p["alpha_psi"] ** 2 - omega ** 2)
    return y1, y2, C


def crossings(p):
    """The speeds where ybar_1 = ybar_2 (5.66): omega_L1 always, omega_L2 where it exists."""
    k, Me = p["omega_per_v"], p["M_psi"] * p["eta"]
    out = [math.sqrt((p["alpha_psi"] ** 2 + Me * p["alpha_y"] ** 2) / (1 + Me)) / k]
    if Me != 1 and (p["alpha_psi"] ** 2 - Me * p["alpha_y"] ** 2) / (1 - Me) > 0:
        out.append(math.sqrt((p["alpha_psi"] ** 2 - Me * p["alpha_y"] ** 2) / (1 - Me)) / k)
    return out


def load(path, phase_speed=200.0):
    with h5py.File(path, "r") as f:
        g = f["threshold"]
        v = g["values"][...]
        th = g["threshold"][...]
        failed = g["failed"][...]
        p = {k: float(val) for k, val in f["model"].attrs.items()
             if np.ndim(val) == 0 and not isinstance(val, (bytes, str))}
        scan = g.attrs["scan_param"]
        scan = scan.decode() if isinstance(scan, bytes) else str(scan)
    if scan != "v":
        raise SystemExit(f"{path}: the scan runs over '{scan}', this figure needs 'v'")
    k = p["omega_per_v"]
    vv = np.linspace(min(v.min(), 1.0), v.max() * 1.05, 2000)
    y1, y2, C = closed_form(p, k * vv)
    ok = failed == 0
    xlim = (v.min() * 0.97, v.max() * 1.02)

    def inside(speeds):
        return [(j, x) for j, x in enumerate(speeds) if xlim[0] < x < xlim[1]]

    d = {"p": p, "C": C, "v_curve": vv, "ybar1": y1, "ybar2": y2, "ybar_min": np.minimum(y1, y2),
         "v_points": v[ok], "threshold": th[ok], "v_failed": v[~ok], "xlim": xlim,
         # marked where they fall inside the speed axis: (index, speed)
         "resonances": inside([p["alpha_y"] / k, p["alpha_psi"] / k]),
         "crossings": inside(crossings(p)),
         "top": np.nanmax(th[ok]) * 2.2 if ok.any() else 0.02}
    # phase plane at one scan speed
    i = int(np.argmin(np.abs(v * KMH - phase_speed)))
    w = k * v[i]
    q = abs(p["alpha_y"] ** 2 - w ** 2)
    s = abs(p["alpha_psi"] ** 2 - w ** 2) / p["M_psi"]
    t = np.linspace(0, 2 * np.pi, 721)
    d.update(v_phase=v[i], boundary=(2 * C / q * np.cos(t), 2 * C / s * np.sin(t)),
             psi_sli=2 * C / s, ellipses=[])
    if ok[i]:
        for fac in (1.0, ABOVE):
            A = th[i] * fac
            d["ellipses"].append((fac, A * np.cos(t), -A / p["eta"] * np.sin(t)))
    return d


def draw_thresholds(ax, d):
    p = d["p"]
    ax.plot(d["v_curve"] * KMH, d["ybar1"] * MM, "b--", lw=1,
            label=r"$\bar y_1 = 2C/|\alpha_y^2-\omega_L^2|$ (5.63)")
    ax.plot(d["v_curve"] * KMH, d["ybar2"] * MM, "g-", lw=1,
            label=r"$\bar y_2 = 2CM_\psi\eta/|\alpha_\psi^2-\omega_L^2|$ (5.65)")
    ax.plot(d["v_curve"] * KMH, d["ybar_min"] * MM, "k-", lw=3, alpha=0.35,
            label=r"$\min(\bar y_1, \bar y_2)$: thesis")
    ax.plot(d["v_points"] * KMH, d["threshold"] * MM, "ro", ms=5,
            label="simulation (bisection, slip-onset)")
    if len(d["v_failed"]):
        ax.plot(d["v_failed"] * KMH, np.zeros(len(d["v_failed"])), "kx",
                label="no threshold found")
    names = (r"$\omega_L=\alpha_y$", r"$\omega_L=\alpha_\psi$")
    for j, vr in d["resonances"]:
        ax.axvline(vr * KMH, color="0.6", ls=":", lw=1)
        ax.text(vr * KMH, 0.03, names[j], rotation=90, va="bottom", ha="right",
                transform=ax.get_xaxis_transform(), fontsize=8)
    for j, vc in d["crossings"]:
        ax.axvline(vc * KMH, color="m", ls=":" if j == 0 else "-.", lw=1)
        ax.text(vc * KMH, 0.97, rf"$\omega_{{L{j + 1}}}$: {vc * KMH:.1f} km/h", rotation=90,
                va="top", ha="right", transform=ax.get_xaxis_transform(), fontsize=8, color="m")
    ax.set_ylim(0, d["top"] * MM)
    ax.set_xlim(d["xlim"][0] * KMH, d["xlim"][1] * KMH)
    ax.set_xlabel("speed v (km/h)")
    ax.set_ylabel("maximum amplitude without slipping (mm)")
    ax.set_title(rf"wheelset, Coulomb contact: $C$ = {d['C']:.2f} N/kg, $M_\psi$ = "
                 rf"{p['M_psi']:g}, $\eta$ = {p['eta']:g}", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")


def draw_phase_plane(bx, d):
    y, psi = d["boundary"]
    bx.plot(y * MM, psi * MM, "k-", lw=2, label="slipping starts (5.58)")
    bx.axhline(d["psi_sli"] * MM, color="k", ls="--", lw=1, label=r"$|\Psi| = \Psi_{sli}$ (5.52)")
    bx.axhline(-d["psi_sli"] * MM, color="k", ls="--", lw=1)
    for fac, y, psi in d["ellipses"]:
        style, lab = (("r-", "rolling ellipse at the simulated threshold") if fac == 1.0 else
                      ("r:", f"{100 * (fac - 1):.0f}% above: leaves the rolling set"))
        bx.plot(y * MM, psi * MM, style, label=lab)
    bx.set_aspect("equal", adjustable="datalim")
    bx.set_xlabel("y (mm)")
    bx.set_ylabel(r"$\Psi = b\psi$ (mm)")
    bx.set_title(f"dual-rolling phase plane at v = {d['v_phase'] * KMH:.0f} km/h", fontsize=10)
    bx.legend(fontsize=8, loc="lower left")


def make_figure(d):
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 5))
    draw_thresholds(ax, d)
    draw_phase_plane(bx, d)
    fig.tight_layout()
    return fig


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("h5")
    ap.add_argument("png")
    ap.add_argument("--phase-speed", type=float, default=200.0)
    a = ap.parse_args()
    make_figure(load(a.h5, a.phase_speed)).savefig(a.png, dpi=120)


if __name__ == "__main__":
    main()
