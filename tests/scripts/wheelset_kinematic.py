#!/usr/bin/python3
"""wheelset_kinematic.py — the kinematic oscillation of a railway wheelset with exact profile
geometry (Antali 2017, chapter 1; model wheelset-kinematic, configs/wheelset-kinematic.yaml)
against values computed here, independently of the engine:

1. omega_L, the small-amplitude limit of the engine's frequencies, against Meijaard's formula
   (1.57);
2. the nonlinearity factor beta, the small-amplitude limit of (omega_N/omega_L - 1)/ybar^2,
   against (1.38) with the Taylor coefficients a_ij, b_ij of (1.32) computed here: the contact
   problem (1.17)-(1.18) is solved in vector form (surfaces (1.13)-(1.15), not the unfolded
   equations (1.46)-(1.47) the kernel uses) at 40 digits with mpmath, and the rolling
   velocities come from the instantaneous axis through both contact points (not from
   (1.48)-(1.50)); then omega_N - omega_L against beta omega_L ybar^2 along the shipped grid;
3. constant curvature (R_w' = 0): beta against (1.38) and against the thesis' (1.62)
   (Example 1.2: -2.0e-6 1/mm^2); small conicity: the engine's beta approaches the thesis'
   (1.61), which neglects a term of order h^0 (at Example 1.2's h = 0.04 it gives 2.4e-3
   1/mm^2, the exact value is 5.73e-3 1/mm^2);
4. one large amplitude (3 mm, +7 %) against a scipy integration of the same vector-form model;
5. the orbits do not depend on the speed: the second point of each line (1.5 v) has 1.5 times
   the frequency; 1 and 2 ranks give the same bits;
6. bad input (R_w <= R_r): file, line and key, exit 2, no output;
7. the figure (postproc/wheelset_kinematic.py): the arrays drawn against the values here.
"""
import math
import os
import subprocess

import h5py
import mpmath
import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

import testlib as T

T.setup()
CFG = os.path.join(T.CONFIGS, "wheelset-kinematic.yaml")
POST = os.path.join(os.environ["SOURCE_DIR"], "postproc", "wheelset_kinematic.py")

# Example 1.2 as the config gives it, written out here
P = dict(v=58.0, r=0.4, b=0.75, h=0.04, Rw=0.5, Rr=0.25, dRw=24.0, dRr=0.0, ddRw=0.0, ddRr=0.0)


# --- the reference model: vector form of the contact and rolling constraints ------------------
def profile(h, R, R1, R2, M):
    """Quartic c(U) with c(0) = 0, c'(0) = h and radius of curvature R, R', R'' at U = 0
    (R = -(1 + c'^2)^(3/2)/c'' differentiated twice, solved for c'', c''', c'''')."""
    s = M.sqrt(1 + h * h)
    return (h, -s ** 3 / R, (R1 * s ** 3 + 3 * h * s ** 4) / R ** 2,
            s ** 3 * (R * R2 - 2 * R1 ** 2 - 9 * R1 * h * s - 15 * h ** 4 - 18 * h ** 2 - 3)
            / R ** 3)


def curve(c, U):
    h, c2, c3, c4 = c
    return (h * U + c2 * U ** 2 / 2 + c3 * U ** 3 / 6 + c4 * U ** 4 / 24,
            h + c2 * U + c3 * U ** 2 / 2 + c4 * U ** 3 / 6)


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


class Reference:
    """Wheel surfaces (1.14) turned by Rx(roll) Rz(yaw) (phi = w = 0) and shifted by (0, y, z);
    rails (1.13).  Unknowns X = (roll, z, then U_r, V_r, U_w, V_w for the + and - sides)."""

    def __init__(self, p, M=math):
        num = (lambda x: M.mpf(x)) if M is mpmath else float
        self.M = M
        self.v, self.r, self.b, self.h = (num(p[k]) for k in ("v", "r", "b", "h"))
        self.cw = profile(self.h, num(p["Rw"]), num(p["dRw"]), num(p["ddRw"]), M)
        self.cr = profile(self.h, num(p["Rr"]), num(p["dRr"]), num(p["ddRr"]), M)

    def frame(self, roll, yaw):
        c, s, C, S = self.M.cos(roll), self.M.sin(roll), self.M.cos(yaw), self.M.sin(yaw)
        rx = [[1, 0, 0], [0, c, -s], [0, s, c]]
        rz = [[C, -S, 0], [S, C, 0], [0, 0, 1]]
        return [[sum(rx[i][k] * rz[k][j] for k in range(3)) for j in range(3)] for i in range(3)]

    def contacts(self, y, yaw, X):
        M, R = self.M, self.frame(X[0], yaw)
        turn = lambda u: [dot(row, u) for row in R]  # noqa: E731
        out = []
        for k, sd in enumerate((1, -1)):
            Ur, Vr, Uw, Vw = X[2 + 4 * k:6 + 4 * k]
            cw, cw1 = curve(self.cw, Uw)
            cr, cr1 = curve(self.cr, Ur)
            a = cw - self.r
            wheel = [q + o for q, o in zip(turn([a * M.sin(Vw), sd * (self.b + Uw), a * M.cos(Vw)]),
                                           [0, y, X[1]])]
            normal = cross(turn([cw1 * M.sin(Vw), sd, cw1 * M.cos(Vw)]),
                           turn([a * M.cos(Vw), 0, -a * M.sin(Vw)]))
            rail = [Vr, sd * (self.b + Ur), -self.r + cr]
            out.append((wheel, rail, normal, [0, sd, cr1], [1, 0, 0]))
        return out

    def residual(self, y, yaw, X):
        e = []
        for wheel, rail, n, tu, tv in self.contacts(y, yaw, X):
            e += [wheel[i] - rail[i] for i in range(3)] + [dot(n, tu), dot(n, tv)]
        return e

    def solve(self, y, yaw, X0):
        if self.M is mpmath:
            tol = mpmath.mpf(10) ** (-2 * mpmath.mp.dps + 10)
            return list(mpmath.findroot(lambda *X: self.residual(y, yaw, list(X)),
                                        [mpmath.mpf(x) for x in X0], tol=tol))
        X, info, ier, msg = fsolve(lambda X: self.residual(y, yaw, list(X)), X0, xtol=1e-13,
                                   full_output=True)
        if ier != 1 and max(abs(e) for e in info["fvec"]) > 1e-15:
            raise RuntimeError(msg)
        return list(X)

    def velocity(self, y, yaw, X0=None):
        """Both contact points at rest: the wheelset turns about the line through them, at the
        rate that moves its centre forward at v; yaw rate from Omega of R = Rx Rz Ry (1.16)."""
        X = self.solve(y, yaw, X0 if X0 is not None else [0] * 10)
        (p1, *_), (p2, *_) = self.contacts(y, yaw, X)
        n = [p1[i] - p2[i] for i in range(3)]
        vc = cross(n, [0 - p1[0], y - p1[1], X[1] - p1[2]])
        rate = self.v / vc[0]
        return rate * vc[1], rate * (-n[1] * self.M.sin(X[0]) + n[2] * self.M.cos(X[0])), X


def beta_exact(p):
    """(1.38) from a_01, a_03, a_21, b_10, b_30, b_12 (1.33) of the reference model at 40
    digits: each a polynomial fit in e^2 to three samples at e = d, 2d, 3d."""
    mpmath.mp.dps = 40
    m = Reference(p, mpmath)
    fy = lambda y, s: m.velocity(mpmath.mpf(y), mpmath.mpf(s))[0]  # noqa: E731
    fp = lambda y, s: m.velocity(mpmath.mpf(y), mpmath.mpf(s))[1]  # noqa: E731
    d, tiny = mpmath.mpf("1e-4"), mpmath.mpf("1e-14")

    def fit(g):
        A = mpmath.matrix([[1, (k * d) ** 2, (k * d) ** 4] for k in (1, 2, 3)])
        return mpmath.lu_solve(A, mpmath.matrix([g(k * d) for k in (1, 2, 3)]))

    a01, a03, _ = fit(lambda e: fy(0, e) / e)
    _, a21, _ = fit(lambda e: fy(e, tiny) / tiny)
    b10, b30, _ = fit(lambda e: fp(e, 0) / e)
    _, b12, _ = fit(lambda e: fp(tiny, e) / tiny)
    beta = (3 * b30 / b10 + a21 / a01 - b12 / a01 - 3 * a03 * b10 / a01 ** 2) / 8
    # the same through the second-order equation (1.34)-(1.35) and harmonic balance (1.43)
    c03 = -a01 * b30 - a21 * b10
    c21 = -(a01 * b12 + 2 * a01 * a21 + 3 * a03 * b10) / a01 ** 2
    beta_hb = c21 / 8 + 3 * c03 / (8 * (-a01 * b10))
    return float(beta), float(mpmath.sqrt(-a01 * b10)), float(beta_hb)


def meijaard(p):  # (1.57)
    h, r, b, Rw, Rr = p["h"], p["r"], p["b"], p["Rw"], p["Rr"]
    s = math.sqrt(1 + h * h)
    return p["v"] * math.sqrt(h / (b * r) * Rw / (Rw - Rr) * (1 + Rr * h / (b * s)))


def beta_161(p):  # the thesis' small-conicity formula
    h, r, Rw, Rr = p["h"], p["r"], p["Rw"], p["Rr"]
    d = Rw - Rr
    return ((3 * r - 4 * Rw) / (16 * r * d ** 2) + (p["dRw"] * d + 3 * Rr * (p["dRw"] - p["dRr"]))
            / (16 * h * d ** 3) - Rr * (p["ddRw"] * Rw - p["ddRr"] * Rr) / (16 * d ** 3))


# --- the engine -------------------------------------------------------------------------------
def scan(out, *sets, ranks=1):
    """The scan's lines: amplitudes, omega_N at v and at the second speed, statuses."""
    s = T.run(CFG, out, *sets, ranks=ranks)
    with h5py.File(out, "r") as f:
        m, phase = f["members"], float(f.attrs["time"])
        ybar = m["y"][...]
        t = m["state"][...].reshape(len(ybar), 2, 3)[:, :, 2]
        v = m["x"][...].reshape(len(ybar), 2)[0]
        status = m["point_status"][...].reshape(len(ybar), 2)
        raw = m["state"][...].tobytes()
    return dict(ybar=ybar, w1=phase / t[:, 0], w2=phase / (t[:, 1] - t[:, 0]), v=v,
                status=status, raw=raw, summary=s)


def small_amplitude_limit(p_sets, ybars=(1e-4, 3e-4)):
    """omega_L and beta from three small amplitudes: omega_N = omega_L + c1 ybar^2 + c2 ybar^4
    through the three points, so the error is the O(ybar^6) term."""
    r = scan("small.h5", *p_sets, f"scan.y.min={ybars[0]}", f"scan.y.max={ybars[1]}",
             "scan.y.points=3")
    A = np.array([[1.0, y ** 2, y ** 4] for y in r["ybar"]])
    wl, c1, _ = np.linalg.solve(A, r["w1"])
    return wl, c1 / wl, r


# --- 1, 2: omega_L and beta --------------------------------------------------------------------
wl_ref = meijaard(P)
beta_ref, wl_taylor, beta_hb = beta_exact(P)
print(f"reference: omega_L (1.57) = {wl_ref:.10f} 1/s, from the Taylor coefficients "
      f"{wl_taylor:.10f}; beta (1.38) = {beta_ref * 1e-6:.6e} 1/mm^2, (1.61) = "
      f"{beta_161(P) * 1e-6:.6e} 1/mm^2")
T.check(abs(wl_taylor / wl_ref - 1) < 1e-8 and abs(beta_hb / beta_ref - 1) < 1e-12,
        f"reference model: omega_L = sqrt(-a01 b10) = {wl_taylor:.10f} equals (1.57) "
        f"{wl_ref:.10f}; beta by (1.43) equals (1.38)")
wl, beta, small = small_amplitude_limit([])
T.check(abs(wl / wl_ref - 1) < 1e-9,
        f"omega_L from ybar = 0.1, 0.2, 0.3 mm: {wl:.10f} 1/s against (1.57) {wl_ref:.10f} 1/s "
        f"(30.15 1/s, 4.798 Hz in Example 1.2)")
T.check(abs(beta / beta_ref - 1) < 1e-4,
        f"beta = {beta * 1e-6:.6e} 1/mm^2 against (1.38) {beta_ref * 1e-6:.6e} 1/mm^2")

grid = scan("wk1.h5")
T.check(np.all(grid["status"] == 1) and len(grid["ybar"]) == 14,
        f"shipped grid: all {len(grid['ybar'])} lines end ok")
shift, parabola = grid["w1"] - wl_ref, beta_ref * wl_ref * grid["ybar"] ** 2
rel = shift / parabola - 1
print("ybar (mm), omega_N (1/s), (omega_N - omega_L)/(beta omega_L ybar^2) - 1:")
for y, w, q in zip(grid["ybar"], grid["w1"], rel):
    print(f"  {y * 1e3:5.2f}  {w:.8f}  {q:+.5f}")
T.check(abs(rel[0]) < 2e-3 and abs(rel[1]) < 8e-3,
        f"omega_N - omega_L = beta omega_L ybar^2 at 0.25 and 0.5 mm to {rel[0]:+.1e}, "
        f"{rel[1]:+.1e}")
# the deviation is the O(ybar^4) term: (rel / ybar^2) settles to a constant as ybar -> 0
q4 = rel[:4] / grid["ybar"][:4] ** 2
T.check(np.ptp(q4) < 0.1 * abs(q4[0]) and np.all(np.diff(rel) > 0),
        f"the rest grows like ybar^2 (relative), i.e. omega_N - omega_L - beta omega_L ybar^2 "
        f"~ ybar^4: rel/ybar^2 = {np.round(q4 * 1e-6, 5)} 1/mm^2")

# --- 3: constant curvature, and small conicity ------------------------------------------------
P0 = dict(P, dRw=0.0)
beta0_ref, _, _ = beta_exact(P0)
_, beta0, _ = small_amplitude_limit(["model.params.dR_w=0"], ybars=(1e-3, 3e-3))
b162 = (3 * P["r"] - 4 * P["Rw"]) / (16 * P["r"] * (P["Rw"] - P["Rr"]) ** 2)
T.check(abs(beta0 / beta0_ref - 1) < 1e-3 and abs(beta0 / b162 - 1) < 0.05,
        f"R_w' = 0: beta = {beta0 * 1e-6:.5e} 1/mm^2 against (1.38) {beta0_ref * 1e-6:.5e} and "
        f"(1.62) {b162 * 1e-6:.5e} 1/mm^2 (small h: O(h) apart)")
Ph = dict(P, h=0.0025)
betah_ref, _, _ = beta_exact(Ph)
_, betah, _ = small_amplitude_limit(["model.params.h=0.0025"])
T.check(abs(betah / betah_ref - 1) < 1e-4 and 1.0 < betah / beta_161(Ph) < 1.12
        and beta / beta_161(P) > 2,
        f"h = 0.0025: beta = {betah * 1e-6:.5e} 1/mm^2, (1.38) {betah_ref * 1e-6:.5e}, (1.61) "
        f"{beta_161(Ph) * 1e-6:.5e}: (1.61) is the small-h limit (ratio "
        f"{betah / beta_161(Ph):.3f}; "
        f"{beta / beta_161(P):.2f} at h = 0.04)")

# --- 4: one large amplitude against scipy ----------------------------------------------------
i3 = int(np.argmin(abs(grid["ybar"] - 3e-3)))
ref = Reference(P)
warm = [None]


def field(t, s):
    ydot, psidot, warm[0] = ref.velocity(s[0], s[1], warm[0])
    return [ydot, psidot]


def back(t, s):  # psi returns to 0 going up: y = -ybar, half a period (symmetry (1.25))
    return s[1]


back.terminal, back.direction = True, 1.0
sol = solve_ivp(field, (0, 1.0), [grid["ybar"][i3], 0.0], method="DOP853", rtol=1e-12,
                atol=1e-15, events=back)
w_scipy = math.pi / sol.t_events[0][0]
T.check(abs(grid["w1"][i3] / w_scipy - 1) < 1e-8
        and abs(sol.y_events[0][0][0] / grid["ybar"][i3] + 1) < 1e-8,
        f"ybar = 3 mm: engine {grid['w1'][i3]:.10f} 1/s, scipy (vector-form model) "
        f"{w_scipy:.10f} 1/s "
        f"(omega_N/omega_L = {w_scipy / wl_ref:.5f}); y(T/2) = -ybar")

# --- 5: speed and ranks -----------------------------------------------------------------------
scale = grid["w2"] / grid["w1"] / (grid["v"][1] / grid["v"][0])
T.check(np.all(abs(scale - 1) < 1e-9),
        f"v = {grid['v'][1]:g} continuing on the same orbit: omega scales with v "
        f"(max deviation {np.max(abs(scale - 1)):.1e})")
grid2 = scan("wk2.h5", ranks=2)
T.check(grid2["raw"] == grid["raw"], "1 and 2 ranks: the same bits")

# --- 6: bad input -------------------------------------------------------------------------------
r = subprocess.run([T.TWOFOLD, "run", CFG, "-o", "bad.h5", "--quiet", "--set",
                    "model.params.R_w=0.2"], capture_output=True, text=True)
# a model refusing its parameters cannot be set up: exit 5 (docs/CONFIG.md, exit statuses)
T.check(r.returncode == 5 and "wheelset-kinematic.yaml:" in r.stderr and "R_w > R_r" in r.stderr
        and not os.path.exists("bad.h5"), f"R_w < R_r: exit {r.returncode}, {r.stderr.strip()}")

# --- 7: the figure -------------------------------------------------------------------------------
res = subprocess.run([os.environ["PYTHON"], POST, "wk1.h5",
                      "wk.png", "--data", "wk.npz"], capture_output=True, text=True)
ok = res.returncode == 0 and os.path.exists("wk.npz")
T.check(ok, f"postproc/wheelset_kinematic.py ran: {res.stderr.strip()[-300:]}")
if ok:
    d = np.load("wk.npz")
    T.check(np.allclose(d["ybar"], grid["ybar"])
            and np.allclose(d["ratio"], grid["w1"] / wl_ref, rtol=1e-12)
            and abs(d["omega_L"] / wl_ref - 1) < 1e-12,
            "figure: the points are the engine's omega_N over (1.57)")
    T.check(abs(d["beta_engine"] / beta_ref - 1) < 1e-4
            and np.allclose(d["curve_engine"], 1 + beta_ref * d["yy"] ** 2, rtol=1e-5, atol=0)
            and abs(d["beta_thesis"] / beta_161(P) - 1) < 1e-12,
            f"figure: the solid parabola has beta {d['beta_engine'] * 1e-6:.6e} 1/mm^2 = (1.38), "
            f"the dashed one (1.61)")
    T.check(os.path.getsize("wk.png") < 200_000, "figure under 200 kB")
T.finish()
