"""wheel_oracle.py — the independent sympy model of Szalai & Jeffrey 2014, "Non-deterministic
dynamics of a mechanical system", eqs (1)-(11), (22), (30), used as a test oracle by
wheel_singularity.py and wheel_fig4.py.

State x = (r, v, omega).  On the switching surface h = 0 (eq 4) the friction is F = lambda,
M = kappa*lambda, so f(x, lambda) = f(x, 0) + lambda*f_lambda(x) (eqs 1-3) is affine in lambda.
v*, kappa and k2 are solved from the two-fold conditions h = 0, h_x.f(x,0) = 0, h_x.f_lambda = 0
(the quantities of eqs 9-11); K++, K+-, K-+, K-- (eq 22) are exact second Lie derivatives of h;
J1, J2 and the class follow section IV (the non-deterministic case 1 of eq 30).

Nothing here reuses engine code or engine output.  Importing this module only builds the
symbolic model; it runs no checks.
"""
import sympy as sp

DIGITS = 30

# --- symbols and the paper's parameters --------------------------------------------------------
r, v, w = sp.symbols("r v omega", real=True)
lam, kappa, k2 = sp.symbols("lambda kappa k2", real=True)
d, m, c1, c2, beta, r0, w0, mu, gamma = sp.symbols("d m c1 c2 beta r0 omega0 mu gamma", real=True)
rs, ws, vs = sp.symbols("rstar omegastar vstar", real=True)
X = sp.Matrix([r, v, w])

# Section V: d=1, m=1, c1=c2=1e-3, beta=1/20, r0=0.1, omega0=-1, mu=1, gamma=-3pi/4 (exact values).
PAPER = {d: 1, m: 1, c1: sp.Rational(1, 1000), c2: sp.Rational(1, 1000), beta: sp.Rational(1, 20),
         r0: sp.Rational(1, 10), w0: -1, mu: 1, gamma: -3 * sp.pi / 4}


# --- model --------------------------------------------------------------------------------------
def vector_field():
    """f(x, lambda) of eqs (1)-(3) on h = 0, where F = lambda and M = kappa*lambda."""
    p1 = k2 * (r0 - r) - c2 * v + m * r * w**2
    p2 = d * r * sp.cos(gamma) + (beta**2 + r**2) * sp.sin(gamma)
    damp = c1 + 2 * m * r * v
    return sp.Matrix([
        m * (beta**2 + r**2) * v,
        (beta**2 + d**2 + r**2) * p1 - d * damp * w + lam * p2 + d * kappa * lam,
        d * p1 - damp * w + lam * r * sp.cos(gamma) + kappa * lam,
    ])


def switching_function():
    """h of eq (4)."""
    return -(v - d * (w - w0)) * sp.sin(gamma) - r * (w - w0) * sp.cos(gamma)


def lie(scalar, field):
    """Lie derivative grad(scalar) . field."""
    return (sp.Matrix([scalar]).jacobian(X) * field)[0]


F = vector_field()
H = switching_function()
F0, FLAM = F.subs(lam, 0), F.diff(lam)


# --- the two-fold -------------------------------------------------------------------------------
def derive_twofold():
    """v*(r*, w*), kappa(r*), k2(r*, w*) solved from the two-fold conditions (general parameters)."""
    (v_star,) = sp.solve(H.subs({r: rs, w: ws}), v)
    (kap,) = sp.solve(lie(H, FLAM).subs(r, rs), kappa)          # h_x.f_lambda = 0 (no v, w in it)
    g0 = lie(H, F0).subs({r: rs, v: vs, w: ws})
    assert sp.degree(sp.expand(g0), k2) == 1, "h_x.f(x,0) must be linear in k2"
    (k2_star,) = sp.solve(g0, k2)                                # h_x.f(x*,0) = 0, v* kept symbolic
    return v_star, kap, k2_star


def twofold_point(derived, rstar, wstar, rational_v=False):
    """The substitution for the two-fold at (r*, w*) with the paper's other parameters: PAPER plus
    rstar, omegastar, vstar, kappa, k2 (exact).  r*, w* are anything sp.Rational accepts; with
    rational_v, v* is passed through sp.nsimplify."""
    v_star, kap, k2_star = derived
    at = dict(PAPER)
    at.update({rs: sp.Rational(rstar), ws: sp.Rational(wstar)})
    at[vs] = sp.nsimplify(v_star.subs(at)) if rational_v else v_star.subs(at)
    at[kappa] = kap.subs(at)
    at[k2] = k2_star.subs(at)
    return at


# --- K's (eq 22), J's and the class -------------------------------------------------------------
def curvatures(f=None, h=None):
    """K^{ab} = grad(L_a).f(x, b), a, b = +-mu, as expressions in x (eq 22).  By default f and h
    carry the paper's constants with kappa and k2 still symbols."""
    f = F.subs(PAPER) if f is None else f
    h = H.subs(PAPER) if h is None else h
    fp, fm = f.subs(lam, PAPER[mu]), f.subs(lam, -PAPER[mu])
    gp, gm = lie(h, fp), lie(h, fm)                                   # h_x.f(x, +-mu)
    return {"K_pp": lie(gp, fp), "K_pm": lie(gp, fm), "K_mp": lie(gm, fp), "K_mm": lie(gm, fm)}


def jays(K):
    """(J1, J2) from the K values; (None, None) where -K++ K-- <= 0 (J undefined)."""
    prod = -K["K_pp"] * K["K_mm"]
    if prod > 0:
        return K["K_mp"] / sp.sqrt(prod), -K["K_pm"] / sp.sqrt(prod)
    return None, None


def classify(Kpp, Kmm, J1, J2):
    """Class names as the engine reports them (the three Teixeira cases follow section IV)."""
    if Kpp == 0 or Kmm == 0:
        return "degenerate"
    if Kpp < 0 < Kmm:
        if J1 * J2 == 1:
            return "degenerate"
        if J1 * J2 < 1:
            return "teixeira-case3"
        return "teixeira-case1" if J1 < 0 else "teixeira-case2"   # J1*J2 > 1: J1, J2 share a sign
    if Kpp > 0 > Kmm:
        return "visible"
    return "visible-invisible"


def margin(ref):
    """Smallest relative distance of the classifying quantities (K_pp, K_mm, J1, J2, J1*J2) in ref
    from their thresholds."""
    scale = max(abs(ref[k]) for k in ("K_pp", "K_pm", "K_mp", "K_mm"))
    ms = [abs(ref["K_pp"]) / scale, abs(ref["K_mm"]) / scale]
    if ref["J1"] is not None:
        ms += [abs(ref["J1"]), abs(ref["J2"]), abs(ref["J1"] * ref["J2"] - 1)]
    return min(ms)
