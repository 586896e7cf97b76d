"""codim2_examples.py — the extended Filippov analysis of the codim2-point job against the
thesis' worked examples, with every expected value derived here by sympy from the model
equations alone (Antali 2017):

1. Examples 2.9, 2.16, 2.18 (eq 2.19, with the minus sign of (2.20)): F*(phi) as the limit
   of F(x0 + eps n(phi)), R and V (2.24), limit directions = zeros of V, sliding region
   |x3| < 1, the mean Fbar, the harmonics F_A, F_B, the weights a, b and the sliding vector
   of Theorem 2.17 — at points inside and outside the sliding region and at x3 = 0, where
   V vanishes identically (every direction is a limit direction).
2. The ball on the bottom of the pool (eqs 2.39-2.45): limit directions atan2(v_z, v_y) and
   + pi, R there, the critical speed 7 mu g m/(2K) separating sliding from crossing, and the
   rolling field — derived by sympy from (2.39), not from the thesis' results.
3. Bad input: a model without a codimension-2 discontinuity is refused naming the key.
"""
import math
import subprocess

import sympy as sp
from scipy.optimize import brentq

import testlib as T

T.setup()
phi, eps = sp.symbols("phi epsilon", positive=True)


def analyse(F, x_sigma, normals):
    """F: sympy vector field in the state symbols; x_sigma: substitution putting the state
    at eps n(phi) off the point of Sigma.  Returns F*, R, V, Fbar, FA, FB, Fs, a, b."""
    def lim(c):  # the friction terms depend on x only through x/|x|: substitute, simplify
        c = sp.simplify(c.subs(x_sigma))
        return c.subs(eps, 0) if c.has(eps) and sp.limit(c, eps, 0, "+") == c.subs(eps, 0) \
            else (sp.limit(c, eps, 0, "+") if c.has(eps) else c)
    Fstar = sp.simplify(sp.Matrix([lim(c) for c in F]))
    n1, n2 = normals
    n = sp.cos(phi) * n1 + sp.sin(phi) * n2
    nperp = -sp.sin(phi) * n1 + sp.cos(phi) * n2
    R = sp.simplify(Fstar.dot(n))
    V = sp.simplify(Fstar.dot(nperp))
    Fbar = (Fstar.applyfunc(lambda c: sp.integrate(c, (phi, 0, 2 * sp.pi))) / (2 * sp.pi))
    FA = Fstar.applyfunc(lambda c: sp.integrate(c * sp.cos(phi), (phi, 0, 2 * sp.pi))) / sp.pi
    FB = Fstar.applyfunc(lambda c: sp.integrate(c * sp.sin(phi), (phi, 0, 2 * sp.pi))) / sp.pi
    a, b = sp.symbols("a b")
    Fs = Fbar + a * FA + b * FB
    sol = sp.solve([Fs.dot(n1), Fs.dot(n2)], [a, b], dict=True)[0]
    return dict(Fstar=Fstar, R=R, V=V, Fbar=sp.simplify(Fbar), FA=sp.simplify(FA),
                FB=sp.simplify(FB), Fs=sp.simplify(Fs.subs(sol)), a=sol[a], b=sol[b])


def close(u, v, tol=1e-9):
    return len(u) == len(v) and all(abs(p - q) <= tol * (1 + abs(q)) for p, q in zip(u, v))


def point(model, state, name, params=""):
    cfg = T.write(name + ".yaml", f"""
job: codim2-point
model: {{name: {model}{params}}}
initial: {{state: {state}}}
""")
    return T.run(cfg, name + ".h5")


def limit_directions(V, subs):
    """Zeros of V on [0, 2 pi) at numbers `subs`: a fine scan of the sympy expression and
    scipy's brentq on every sign change."""
    f = sp.lambdify(phi, sp.simplify(V.subs(subs)), "math")
    grid = [2 * math.pi * i / 3600 for i in range(3601)]
    vals = [f(p) for p in grid]
    roots = []
    for i in range(3600):
        if vals[i] == 0:
            roots.append(grid[i])
        elif vals[i] * vals[i + 1] < 0:
            roots.append(brentq(f, grid[i], grid[i + 1], xtol=1e-15))
    return roots


def angle_match(got, want):
    dist = lambda p, q: abs(math.remainder(p - q, 2 * math.pi))
    return len(got) == len(want) and all(min(dist(g, w) for w in want) < 1e-9 for g in got)


# --- 1: Examples 2.9, 2.16, 2.18 ---------------------------------------------------------
x1, x2, x3 = sp.symbols("x1 x2 x3", real=True)
rho = sp.sqrt(x1**2 + x2**2)
F = sp.Matrix([-x1 / rho + x3, -x2 / rho, -x1 / rho - x3])  # (2.19), minus sign as (2.20)
ex = analyse(F, {x1: eps * sp.cos(phi), x2: eps * sp.sin(phi)},
             (sp.Matrix([1, 0, 0]), sp.Matrix([0, 1, 0])))
T.check(sp.simplify(ex["R"] - (-1 + x3 * sp.cos(phi))) == 0 and
        sp.simplify(ex["V"] + x3 * sp.sin(phi)) == 0, f"sympy reproduces (2.25): R = {ex['R']}, "
        f"V = {ex['V']}")
for z in (0.4, -0.7, 1.5, -2.0, 0.0):
    s = point("antali-example", f"[0, 0, {z}]", f"ex{z}")
    num = {x3: z}
    R = [float(ex["R"].subs(num).subs(phi, p)) for p in s["limit_directions"]]
    if z == 0.0:
        T.check(s["all_directions"] and s["region"] == "sliding",
                f"x3 = 0: V vanishes identically, R = -1 everywhere: sliding ({s['region']})")
    else:
        want = limit_directions(ex["V"], num)
        T.check(angle_match(s["limit_directions"], want),
                f"x3 = {z}: limit directions {s['limit_directions']} = zeros of V {want}")
        T.check(close(s["R_limit"], R), f"x3 = {z}: R at them {s['R_limit']} vs {R}")
        region = "sliding" if all(r < 0 for r in R) else "crossing"
        T.check(s["region"] == region, f"x3 = {z}: region {s['region']} (expected {region})")
    Fs = [float(c) for c in ex["Fs"].subs(num)]
    T.check(close(s["sliding_vector"], Fs, 1e-12),
            f"x3 = {z}: sliding vector {s['sliding_vector']} vs {Fs}")
    T.check(s["decomposition"] == "harmonic" and abs(s["a"] - float(ex["a"].subs(num))) < 1e-12
            and abs(s["b"] - float(ex["b"].subs(num))) < 1e-12,
            f"x3 = {z}: a = {s['a']:.6g}, b = {s['b']:.3g} (Theorem 2.17 with A = cos, B = sin)")
    for key in ("Fbar", "F_A", "F_B"):
        want = [float(c) for c in ex[{"Fbar": "Fbar", "F_A": "FA", "F_B": "FB"}[key]].subs(num)]
        T.check(close(s[key], want, 1e-12), f"x3 = {z}: {key} {s[key]} vs {want}")

# --- 2: the ball in the pool --------------------------------------------------------------
uy, uz, vy, vz = sp.symbols("u_y u_z v_y v_z", real=True)
m, mu, g, K = sp.Rational(17, 100), sp.Rational(1, 5), sp.Rational(981, 100), sp.Rational(1, 2)
un = sp.sqrt(uy**2 + uz**2)
Fb = sp.Matrix([-sp.Rational(7, 2) * mu * g * uy / un - K / m * vy,
                -sp.Rational(7, 2) * mu * g * uz / un - K / m * vz,
                -mu * g * uy / un - K / m * vy, -mu * g * uz / un - K / m * vz])  # (2.39)
ball = analyse(Fb, {uy: eps * sp.cos(phi), uz: eps * sp.sin(phi)},
               (sp.Matrix([1, 0, 0, 0]), sp.Matrix([0, 1, 0, 0])))
v_crit = float(7 * mu * g * m / (2 * K))
params = ", params: {m: 0.17, mu: 0.2, g: 9.81, K: 0.5}"
for speed, ang in ((0.5 * v_crit, 0.3), (0.99 * v_crit, 2.0), (1.01 * v_crit, -1.0),
                   (2 * v_crit, 4.0)):
    vyn, vzn = speed * math.cos(ang), speed * math.sin(ang)
    s = point("ball-pool", f"[0, 0, {vyn!r}, {vzn!r}]", f"ball{speed:.3f}", params)
    num = {vy: vyn, vz: vzn}
    want = limit_directions(ball["V"], num)
    R = [float(ball["R"].subs(num).subs(phi, p)) for p in s["limit_directions"]]
    T.check(angle_match(s["limit_directions"], want),
            f"|v| = {speed:.4f}: limit directions {s['limit_directions']} vs {want}")
    T.check(close(s["R_limit"], R), f"|v| = {speed:.4f}: R {s['R_limit']} vs {R}")
    region = "sliding" if speed < v_crit else "crossing"
    T.check(s["region"] == region,
            f"|v| = {speed:.4f}, v_crit = {v_crit:.4f}: {s['region']} (expected {region})")
    Fs = [float(c) for c in ball["Fs"].subs(num)]
    T.check(close(s["sliding_vector"], Fs, 1e-11),
            f"|v| = {speed:.4f}: rolling field {s['sliding_vector']} vs {Fs}")

# --- 3: bad input -------------------------------------------------------------------------
cfg = T.write("bad.yaml", "job: codim2-point\nmodel: {name: lorenz}\n")
r = subprocess.run([T.TWOFOLD, "run", cfg, "-o", "bad.h5"], capture_output=True, text=True)
T.check(r.returncode == 2 and "bad.yaml:2" in r.stderr and "model.name" in r.stderr,
        f"a model without Sigma is refused (exit {r.returncode}): {r.stderr.strip()}")
T.finish()
