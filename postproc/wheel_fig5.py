#!/usr/bin/python3
"""wheel_fig5.py — Fig. 5 of Szalai & Jeffrey (2014) from an ensemble results file of the wheel.

    /usr/bin/python3 postproc/wheel_fig5.py RESULTS.h5 OUT.png [--window r0 r1 w0 w1]
                                            [--members N]

Panel (a) is the sticking-flow picture on the switching surface Sigma = {h = 0} around the
Teixeira two-fold, in the coordinates (r, omega) (on Sigma, v follows from h = 0, eq 4).  With
L+- = grad h . f(x, +-1), the Lie derivatives of h along the two slip limits (stick field with
F = mu*lambda, M = s*kappa*mu*lambda, lambda = +-1), Sigma splits into sliding regions S
(L+ < 0 < L-, grey), the escaping region E (L+ > 0 > L-, white) and crossing regions C (green
where the flow crosses downwards, L+- < 0; red where it crosses upwards, L+- > 0).  The fold
curves L+ = 0 and L- = 0 bound them and cross at the two-fold.  With the signed sticking
moment (signed_moment = 1) the fields on Sigma jump where the rolling speed g changes sign;
that line (omega = omega0 on Sigma) is drawn dashed, and above it lies the paper's second,
"top" sliding region.  The streamlines are the sliding (sticking) vector field f(x, lambda),
lambda = (L+ + L-)/(L- - L+) (eqs 15-16), projected onto (r, omega), drawn in S and E; a few
sliding orbits that funnel into the two-fold (along the weak eigenvector) are traced in
blue, continued beyond it into E.  The logged exit points of the ensemble (/members/exits)
are dotted in, coloured by the side they leave to; they lie within the exit distance of the
two-fold, so an inset zooms onto it to show them in the escaping wedge.

Panels (b) and (c) show the "cone" of trajectories in (r, v, omega) from two viewpoints:
the sampled trajectories of up to N members (default 150), each leaving the two-fold by a
random choice and returning to it, with the fold curves of (a) lifted onto Sigma.

All model parameters come from the file's /model attributes; the physics mirrors
kernels/wheel.c (eqs 1-7 and the stick field).  configs/wheel-fig5.yaml is the paper's run:
    twofold run configs/wheel-fig5.yaml -o f5.h5 --set ensemble.members=200
"""
import argparse

import os
import sys

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
from scipy.ndimage import distance_transform_edt, label  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from filippov_logs import EXIT_KIND_TWOFOLD, EnsembleLogs, text_attr  # noqa: E402

DEFAULT_WINDOW = (0.17, 0.205, -1.08, -0.98)  # r0 r1 omega0 omega1 around the paper's two-fold
GRID = 400                                      # cells per axis of the region picture
STREAM_GRID = 120                               # streamplot grid per axis
SLIDING, ESCAPING, CROSS_DOWN, CROSS_UP = 0, 1, 2, 3
REGION_COLOURS = ["#a6a6a6", "#ffffff", "#b7e1b0", "#f4b6b0"]  # S grey, E white, C green/red
FOLD_PLUS, FOLD_MINUS = "#1a7f1a", "#c0392b"  # L+ = 0 (green side), L- = 0 (red side)
ORBIT = "#1f3d99"                               # highlighted sliding orbits
G_ZERO = "#555555"                              # g = 0 on Sigma: the sticking moment flips
TWOFOLD_STYLE = dict(marker="*", s=160, c="gold", edgecolors="k", linewidths=0.8, zorder=6)
FULL_STICK_STYLE = dict(marker="x", s=14, c="#d4007a", linewidths=0.8, zorder=5)


# ---------------------------------------------------------------- reading the results file

def load(path):
    """The file's parameters, trajectories and logs.  Counts (full stick, returns) come from
    /members/events and /members/twofold_visits, complete for every member; the exit points
    and full-stick points drawn are the logged ones (postproc/filippov_logs.py), and the
    title says how many the logs left out."""
    logs = EnsembleLogs(path)
    with h5py.File(path, "r") as f:
        if text_attr(f, "model") != "wheel":
            raise SystemExit(f"{path}: model is {text_attr(f, 'model')!r}, not the wheel")
        p = {k: float(v) for k, v in f["model"].attrs.items() if k != "name"}
        traj = f["members/trajectory"]
        n = traj.shape[0]
        trajectory = traj[:].reshape(n, int(traj.attrs["samples"]), 3)
        t_end = float(traj.attrs["t_end"])
        # the visits depend on the rule at full stick: the title names it (older files: uniform)
        rule = text_attr(f, "intersection_policy") if "intersection_policy" in f.attrs else "uniform"
        status_names = {v: k for k, v in
                        (h5py.check_enum_dtype(f["members/status"].dtype) or {}).items()}
    fields = logs.exit_fields
    draws = np.concatenate([logs.exit_rows(i) for i in range(n)]) if n else np.zeros((0, 7))
    if "kind" in fields:  # exits from the two-fold only, not choices at full stick
        draws = draws[draws[:, fields.index("kind")] == EXIT_KIND_TWOFOLD]
    stick_kinds = logs.intersection_kinds()
    meet = [logs.kinds.index(k) for k in stick_kinds]
    kind = logs.event_fields.index("kind")
    events = np.concatenate([logs.event_rows(i) for i in range(n)]) if n else np.zeros((0, 7))
    meets = events[np.isin(events[:, kind], meet)]
    arrivals = logs.count(*stick_kinds) if stick_kinds else np.zeros(n, int)
    return {
        "p": p,
        "traj": trajectory,
        "t_end": t_end,
        "rule": rule,
        "exits": draws,
        "exits_drawn_of": int(logs.count("exit").sum()),
        "exit_fields": fields,
        "meets": meets[:, 4:7],  # states of the logged arrivals at full stick
        "meet_members": int(np.sum(arrivals > 0)),
        "meet_count": int(arrivals.sum()),
        "visits": int(logs.visits.sum()),
        "events": {k: int(logs.count(k).sum()) for k in logs.kinds},
        "status": {status_names.get(s, str(s)): int(c)
                   for s, c in zip(*np.unique(logs.status, return_counts=True))},
    }


# ---------------------------------------------------------------- the model (kernels/wheel.c)

def v_on_sigma(r, w, p):
    """Solve h = 0 (eq 4) for v."""
    dw = w - p["omega0"]
    return dw * (p["d"] - r / np.tan(p["gamma"]))


def grad_h(x, p):
    r, _, w = x
    g, dw = p["gamma"], w - p["omega0"]
    return np.array([-dw * np.cos(g), np.full_like(r, -np.sin(g)),
                     p["d"] * np.sin(g) - r * np.cos(g)])


def rolling_speed(x, p):  # eq (5)
    r, v, w = x
    g, dw = p["gamma"], w - p["omega0"]
    return -(v - p["d"] * dw) * np.cos(g) + r * dw * np.sin(g)


def field(x, p, force, moment):
    """Right-hand side of eqs (1)-(3) for friction force F and moment M."""
    r, v, w = x
    b2, d, m = p["beta"] ** 2, p["d"], p["m"]
    p1 = p["k2"] * (p["r0"] - r) - p["c2"] * v + m * r * w * w
    p2 = d * r * np.cos(p["gamma"]) + (b2 + r * r) * np.sin(p["gamma"])
    coupling = p["c1"] + 2 * m * r * v
    return np.array([
        m * (b2 + r * r) * v,
        (b2 + d * d + r * r) * p1 - d * coupling * w + force * p2 + d * moment,
        d * p1 - coupling * w + force * r * np.cos(p["gamma"]) + moment,
    ])


def stick_field(x, lam, p):
    """f(x, lambda) on Sigma: F = mu*lambda, M = s*kappa*mu*lambda."""
    s = np.sign(rolling_speed(x, p)) if p.get("signed_moment", 1.0) == 1.0 else 1.0
    return field(x, p, p["mu"] * lam, s * p["kappa"] * p["mu"] * lam)


def sigma_point(r, w, p):
    return np.array([r, v_on_sigma(r, w, p), w])


def lie_derivatives(r, w, p):
    """L+ and L- = grad h . f(x, +-1) at the points (r, omega) of Sigma."""
    x = sigma_point(r, w, p)
    gh = grad_h(x, p)
    return (np.sum(gh * stick_field(x, 1.0, p), axis=0),
            np.sum(gh * stick_field(x, -1.0, p), axis=0))


def classify(lp, lm):
    return np.select([(lp < 0) & (lm > 0), (lp > 0) & (lm < 0), (lp < 0) & (lm < 0)],
                     [SLIDING, ESCAPING, CROSS_DOWN], CROSS_UP)


def sliding_field(r, w, p):
    """(dr/dt, domega/dt) of the sliding vector field (eq 16); NaN outside S and E."""
    lp, lm = lie_derivatives(r, w, p)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = (lp + lm) / (lm - lp)
    f = stick_field(sigma_point(r, w, p), lam, p)
    sticking = np.isin(classify(lp, lm), (SLIDING, ESCAPING))
    return np.where(sticking, f[0], np.nan), np.where(sticking, f[2], np.nan)


# ---------------------------------------------------------------- panel (a)

def grid(window, n):
    r = np.linspace(window[0], window[1], n)
    w = np.linspace(window[2], window[3], n)
    return r, w, *np.meshgrid(r, w)


def fold_contours(ax, r, w, R, W, p):
    """Contours L+ = 0, L- = 0 and g = 0 on Sigma; returns [(contour set, colour)].

    With the signed sticking moment, L+- jump where g changes sign; the jump is not a fold,
    so each sign of g is contoured on its own and g = 0 is drawn dashed instead."""
    lp, lm = lie_derivatives(R, W, p)
    g = rolling_speed(sigma_point(R, W, p), p)
    signs = (1, -1) if p.get("signed_moment", 1.0) == 1.0 else (0,)
    sets = []
    for values, colour in ((lp, FOLD_PLUS), (lm, FOLD_MINUS)):
        for s in signs:
            part = values[np.sign(g) == s] if s else values
            if part.size and part.min() < 0 < part.max():
                masked = np.ma.masked_where(np.sign(g) != s, values) if s else values
                sets.append((ax.contour(r, w, masked, levels=[0], colors=colour,
                                        linewidths=1.3), colour))
    if signs != (0,) and g.min() < 0 < g.max():
        sets.append((ax.contour(r, w, g, levels=[0], colors=G_ZERO, linewidths=1.0,
                                linestyles="--"), G_ZERO))
    return sets


def draw_regions(ax, window, p, n=GRID):
    """Shade S/E/C and draw the fold curves; returns the contour sets of fold_contours."""
    r, w, R, W = grid(window, n)
    ax.pcolormesh(r, w, classify(*lie_derivatives(R, W, p)), shading="nearest",
                  cmap=ListedColormap(REGION_COLOURS), vmin=-0.5, vmax=3.5, rasterized=True)
    sets = fold_contours(ax, r, w, R, W, p)
    ax.set_xlim(window[:2])
    ax.set_ylim(window[2:])
    return sets


def draw_sliding_flow(ax, window, p):
    r, w, R, W = grid(window, STREAM_GRID)
    dr, dw = sliding_field(R, W, p)
    # directions only: the sliding field blows up near the fold curves
    scale = np.hypot(dr / np.ptp(r), dw / np.ptp(w))
    with np.errstate(invalid="ignore", divide="ignore"):
        u, v = np.ma.masked_invalid(dr / scale), np.ma.masked_invalid(dw / scale)
    ax.streamplot(r, w, u, v, density=1.3, color="#333333", linewidth=0.6, arrowsize=0.8,
                  broken_streamlines=True)


def sliding_orbit(start, p, window, step=2e-3, max_steps=3000):
    """Streamline of the sliding field from `start` (r, omega), traced by RK4 in window units
    (direction only) until it leaves S and E or the window, or reaches the two-fold.
    Returns the (n, 2) polyline and whether it ended at the two-fold."""
    span = np.array([window[1] - window[0], window[3] - window[2]])
    origin = np.array([window[0], window[2]])
    star = (np.array([p["rstar"], p["omegastar"]]) - origin) / span

    def direction(y):
        dr, dw = sliding_field(*(origin + y * span), p)
        u = np.array([dr, dw]) / span
        return u / np.hypot(*u)

    y = (np.asarray(start, float) - origin) / span
    path, reached = [y], False
    for _ in range(max_steps):
        k1 = direction(y)
        k2 = direction(y + step / 2 * k1)
        k3 = direction(y + step / 2 * k2)
        k4 = direction(y + step * k3)
        y = y + step / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if not np.all(np.isfinite(y)) or np.any(y < 0) or np.any(y > 1):
            break
        path.append(y)
        if np.hypot(*(y - star)) < 3 * step:
            path.append(star)
            reached = True
            break
    return origin + np.array(path) * span, reached


def orbits_through_twofold(p, window, seeds=40, keep=3, beyond=0.03):
    """Sliding orbits from the lower edge of the window that reach the two-fold (up to `keep`
    of them), and their common continuation into E along the arrival direction (the weak
    eigenvector): a straight piece of `beyond` window units, then the sliding flow of E.
    Returns a list of (n, 2) polylines."""
    r = np.linspace(window[0], window[1], 400)
    w = np.full_like(r, window[2])
    in_s = r[classify(*lie_derivatives(r, w, p)) == SLIDING]
    if not len(in_s):
        return []
    arrivals = [o for o, reached in (sliding_orbit((r0, window[2]), p, window)
                                     for r0 in np.linspace(in_s[0], in_s[-1], seeds))
                if reached and len(o) > 10]
    if not arrivals:
        return []
    orbits = [arrivals[i] for i in np.linspace(0, len(arrivals) - 1, keep).astype(int)]
    end, before = orbits[0][-1], orbits[0][-8]
    span = np.array([window[1] - window[0], window[3] - window[2]])
    heading = (end - before) / span
    start = end + beyond * heading / np.hypot(*heading) * span
    if classify(*lie_derivatives(start[0], start[1], p)) == ESCAPING:
        orbits.append(np.vstack([end, sliding_orbit(start, p, window)[0]]))
    return orbits


def draw_orbits(ax, orbits):
    for orbit in orbits:
        ax.plot(orbit[:, 0], orbit[:, 1], color=ORBIT, lw=1.6, zorder=3)
        i = len(orbit) // 2
        if len(orbit) > 3:
            ax.annotate("", orbit[i + 1], orbit[i - 1], zorder=3,
                        arrowprops=dict(arrowstyle="-|>", color=ORBIT, lw=1.6,
                                        mutation_scale=14))


def label_regions(ax, window, p):
    """Put S/E/C at the deepest point of each region in the window."""
    r, w, R, W = grid(window, GRID)
    cls = classify(*lie_derivatives(R, W, p))
    names = {SLIDING: "S", ESCAPING: "E", CROSS_DOWN: "C", CROSS_UP: "C"}
    for code, name in names.items():
        parts, count = label(cls == code)
        for k in range(1, count + 1):
            part = parts == k
            if part.sum() < 0.01 * part.size:
                continue
            depth = distance_transform_edt(np.pad(part, 1))[1:-1, 1:-1]
            i, j = np.unravel_index(np.argmax(depth), depth.shape)
            ax.text(r[j], w[i], name, fontsize=13, fontweight="bold", ha="center", va="center",
                    color="k", alpha=0.8, zorder=5)


def draw_exits(ax, exits, fields, size):
    """Exit points coloured by the side they leave to, drawn in a shuffled order: the side is
    an independent coin, so the two colours share the same arc."""
    ir, iw, iside = fields.index("r"), fields.index("omega"), fields.index("side")
    order = np.random.default_rng(0).permutation(len(exits))
    e = exits[order]
    colours = np.where(e[:, iside] > 0, FOLD_PLUS, FOLD_MINUS)
    ax.scatter(e[:, ir], e[:, iw], s=size, c=colours, edgecolors="k", linewidths=0.2, zorder=4)


def exit_fraction_escaping(exits, fields, p):
    lp, lm = lie_derivatives(exits[:, fields.index("r")], exits[:, fields.index("omega")], p)
    return np.mean(classify(lp, lm) == ESCAPING) if len(exits) else np.nan


def zoom_window(exits, fields, p):
    """Square-ish window around the two-fold holding every exit point."""
    rs, ws = p["rstar"], p["omegastar"]
    if len(exits):
        half = 1.3 * max(np.max(np.abs(exits[:, fields.index("r")] - rs)),
                         np.max(np.abs(exits[:, fields.index("omega")] - ws)))
    else:
        half = 1e-4
    return rs - half, rs + half, ws - half, ws + half


def draw_inset(ax, d):
    """Zoom onto the two-fold: the exit points in the escaping wedge."""
    p, exits, fields = d["p"], d["exits"], d["exit_fields"]
    zw = zoom_window(exits, fields, p)
    inset = ax.inset_axes([0.07, 0.03, 0.34, 0.34])
    draw_regions(inset, zw, p, n=200)
    draw_exits(inset, exits, fields, 3)
    inset.scatter([p["rstar"]], [p["omegastar"]], **{**TWOFOLD_STYLE, "s": 70})
    inset.set_xticks([])
    inset.set_yticks([])
    frac = exit_fraction_escaping(exits, fields, p)
    inset.set_title(f"zoom ±{(zw[1] - zw[0]) / 2:.0e}: {100 * frac:.0f}% of exits in E",
                    fontsize=7, pad=2)
    ax.indicate_inset_zoom(inset, edgecolor="k", alpha=0.6)


def legend_handles():
    def patch(code, text):
        return Patch(fc=REGION_COLOURS[code], ec="k", lw=0.5, label=text)

    def dot(colour, text, marker="o", size=4):
        return Line2D([], [], ls="", marker=marker, mfc=colour, mec="k", ms=size, label=text)

    return [patch(SLIDING, "S sliding"), patch(ESCAPING, "E escaping"),
            patch(CROSS_DOWN, r"C crossing, $h$ decreasing"),
            patch(CROSS_UP, r"C crossing, $h$ increasing"),
            Line2D([], [], color=FOLD_PLUS, label=r"fold $L^+ = 0$"),
            Line2D([], [], color=FOLD_MINUS, label=r"fold $L^- = 0$"),
            Line2D([], [], color=G_ZERO, ls="--", label=r"$g = 0$ (moment flips)"),
            Line2D([], [], color="#333333", lw=0.8, marker=">", ms=4, label="sticking flow"),
            Line2D([], [], color=ORBIT, lw=1.6, label="sticking orbits through the two-fold"),
            dot("gold", "two-fold", "*", 11), dot(FOLD_PLUS, r"exit into $h > 0$"),
            dot(FOLD_MINUS, r"exit into $h < 0$"),
            dot(FULL_STICK_STYLE["c"], r"full stick $h = g = 0$", "x", 5)]


def draw_panel_a(ax, d, window):
    p = d["p"]
    draw_regions(ax, window, p)
    draw_sliding_flow(ax, window, p)
    draw_orbits(ax, orbits_through_twofold(p, window))
    label_regions(ax, window, p)
    draw_exits(ax, d["exits"], d["exit_fields"], 4)
    if len(d["meets"]):
        ax.scatter(d["meets"][:, 0], d["meets"][:, 2], **FULL_STICK_STYLE)
    ax.scatter([p["rstar"]], [p["omegastar"]], **TWOFOLD_STYLE)
    ax.set_xlabel(r"$r$")
    ax.set_ylabel(r"$\omega$")
    ax.set_title(r"(a) sticking flow on $\Sigma$ ($h = 0$, $v$ from eq. 4)", fontsize=11)
    ax.tick_params(labelsize=8)
    draw_inset(ax, d)
    ax.legend(handles=legend_handles(), loc="upper center", bbox_to_anchor=(0.5, -0.11),
              fontsize=7, ncol=3, frameon=False, handlelength=1.6, columnspacing=1.0)


# ---------------------------------------------------------------- panels (b), (c)

def fold_curves_3d(window, p, n=GRID):
    """The curves of fold_contours as (r, v, omega, colour) polylines on Sigma."""
    r, w, R, W = grid(window, n)
    fig = plt.figure()
    curves = []
    for cs, colour in fold_contours(fig.gca(), r, w, R, W, p):
        for seg in cs.allsegs[0]:
            curves.append((seg[:, 0], v_on_sigma(seg[:, 0], seg[:, 1], p), seg[:, 1], colour))
    plt.close(fig)
    return curves


def draw_cone(ax, d, max_members, view, curves, tag):
    p = d["p"]
    traj = d["traj"][:max_members]
    colours = plt.cm.viridis(np.linspace(0, 1, len(traj)))
    for x, c in zip(traj, colours):
        ax.plot(x[:, 0], x[:, 1], x[:, 2], color=c, lw=0.35, alpha=0.35)
    for r, v, w, colour in curves:
        ax.plot(r, v, w, color=colour, lw=1.8, ls="--" if colour == G_ZERO else "-", zorder=5)
    if len(d["meets"]):
        m = d["meets"]
        ax.scatter(m[:, 0], m[:, 1], m[:, 2], marker="x", s=6, c=FULL_STICK_STYLE["c"],
                   depthshade=False, zorder=6)
    ax.scatter([p["rstar"]], [v_on_sigma(p["rstar"], p["omegastar"], p)], [p["omegastar"]],
               marker="*", s=160, c="gold", edgecolors="k", linewidths=0.8, depthshade=False,
               zorder=6)
    ax.view_init(*view)
    ax.set_box_aspect(None, zoom=0.88)
    ax.set_xlabel(r"$r$", labelpad=2)
    ax.set_ylabel(r"$v$", labelpad=2)
    ax.set_zlabel(r"$\omega$", labelpad=2)
    ax.tick_params(labelsize=7, pad=0)
    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        axis.set_major_locator(MaxNLocator(4))
    ax.set_title(f"({tag}) {len(traj)} trajectories, elev {view[0]}°, azim {view[1]}°",
                 fontsize=11)


# ---------------------------------------------------------------- figure

def title(d):
    """Counts from /members/events and /members/twofold_visits (every member, logged or not);
    the markers drawn are the logged ones, and the title says so where the logs fell short."""
    n = len(d["traj"])
    bad = {k: v for k, v in d["status"].items() if k != "ok"}
    extra = ("; ended in " + ", ".join(f"{k} {v}" for k, v in bad.items())) if bad else ""
    ev = d["events"]
    drawn = ""
    if len(d["meets"]) < d["meet_count"] or len(d["exits"]) < d["exits_drawn_of"]:
        drawn = (f"; drawn: the logged {len(d['meets'])} arrivals and {len(d['exits'])} "
                 f"of {d['exits_drawn_of']} exits")
    return (f"Wheel on a turntable, Szalai & Jeffrey (2014) Fig. 5: {n} members, "
            f"{d['visits']} two-fold visits (full-stick rule: {d['rule']}), "
            f"t_end = {d['t_end']:g}{extra}\n"
            f"full stick (x) reached by {d['meet_members']} of {n} members, {d['meet_count']} "
            f"times (pass {ev.get('intersection_pass', 0)}, choice "
            f"{ev.get('intersection_choice', 0)}, rest {ev.get('intersection_rest', 0)}, "
            f"undefined {ev.get('intersection_undefined', 0)}){drawn}")


def make_figure(d, window, max_members):
    fig = plt.figure(figsize=(15, 6))
    ax_a = fig.add_axes([0.05, 0.25, 0.28, 0.61])
    draw_panel_a(ax_a, d, window)
    curves = fold_curves_3d(window, d["p"])
    for rect, view, tag in (([0.35, 0.02, 0.32, 0.86], (24, -58), "b"),
                            ([0.67, 0.02, 0.32, 0.86], (12, -105), "c")):
        draw_cone(fig.add_axes(rect, projection="3d"), d, max_members, view, curves, tag)
    fig.suptitle(title(d), fontsize=12, y=0.995)
    return fig


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("out")
    ap.add_argument("--window", nargs=4, type=float, default=DEFAULT_WINDOW,
                    metavar=("R0", "R1", "W0", "W1"), help="(r, omega) window of panel (a)")
    ap.add_argument("--members", type=int, default=150, help="trajectories drawn in (b), (c)")
    args = ap.parse_args()
    d = load(args.results)
    fig = make_figure(d, args.window, args.members)
    fig.savefig(args.out, dpi=150)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
