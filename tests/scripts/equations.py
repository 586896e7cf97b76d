"""equations.py — models written as equations: the generated C against sympy.

For a flow and a Filippov model written in model.equations, the C source twofold generates is
compiled (with a small harness that calls its functions) and evaluated at random points; the
field, its Jacobian, the noise and dg_i/dx_i, the switching function and its gradient and both
slip fields with their Jacobians must equal what sympy computes independently from the same
expression text (relative 1e-12).  Then parse errors must name file:line, the key and the
column.
"""
import ctypes
import os
import subprocess

import numpy as np
import sympy as sp

import testlib as T

T.setup()
GEN = os.path.join(os.path.dirname(T.TWOFOLD), "tests", "test_equations")
INCLUDE = os.path.join(os.environ["SOURCE_DIR"], "include")
rng = np.random.default_rng(20261124)

FLOW = {
    "state": ["x", "y", "z"],
    "params": {"a": 1.3, "b": 0.7, "s": 0.2},
    "field": {
        "x": "a*(y - x) + sin(x*y)^2 - atan2(y, x)",
        "y": "x*(b - z) - y/(1 + z^2) + exp(-t*x)*cosh(z)",
        "z": "x*y - b*z + sqrt(1 + x^2)*log(2 + y^2) + tanh(a*z) - z^3 + pow(abs(x) + 1, b)",
    },
    "noise": {"x": "s*x", "z": "s*sqrt(1 + z^2) + asin(0.1*x)"},
}
FIL = {
    "state": ["u", "w"],
    "params": {"k": 2.0, "mu": 0.4, "vb": 0.3},
    "switching": "w - vb + 0.1*u^2",
    "plus": {"u": "w", "w": "-k*u - mu*(1 + atan(w - vb))*exp(-u^2)"},
    "minus": {"u": "w", "w": "-k^2*u + mu*cos(u)/(2 + min(u, w)) - max(0.5, w)"},
}


def yaml_model(m, filippov):
    lines = ["job: trajectory", "model:", "  equations:", "    name: sympy-check",
             f"    state: [{', '.join(m['state'])}]", "    parameters:"]
    lines += [f"      {k}: {v!r}" for k, v in m["params"].items()]
    def block(key, d, indent):
        out = [f"{' ' * indent}{key}:"]
        out += [f"{' ' * (indent + 2)}{s}: \"{e}\"" for s, e in d.items()]
        return out
    if filippov:
        lines.append(f"    switching: \"{m['switching']}\"")
        lines.append("    slip:")
        lines += block("plus", m["plus"], 6) + block("minus", m["minus"], 6)
    else:
        lines += block("field", m["field"], 4) + block("noise", m["noise"], 4)
    return "\n".join(lines) + "\n"


def compile_model(name, yaml_text, harness):
    cfg = T.write(name + ".yaml", yaml_text)
    res = subprocess.run([GEN, "--generate", cfg], capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(res.stderr)
    T.write(name + "_gen.c", res.stdout)
    T.write(name + "_harness.c", f'#include "{name}_gen.c"\n{harness}')
    so = os.path.abspath(name + ".so")
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-I", INCLUDE,
                    "-o", so, name + "_harness.c", "-lm"], check=True)
    return ctypes.CDLL(so)


def close(got, want, what, worst):
    err = abs(got - want) / max(1.0, abs(want))
    worst[what] = max(worst.get(what, 0.0), err)


D = ctypes.POINTER(ctypes.c_double)


def arr(v):
    return (ctypes.c_double * len(v))(*v)


# --- a flow with noise -------------------------------------------------------------------------
lib = compile_model("flow", yaml_model(FLOW, False), """
void f(double t, const double *x, const double *p, double *o) { model.flow->rhs(t, x, p, o); }
void j(double t, const double *x, const double *p, double *o) { model.flow->jacobian(t, x, p, o); }
void g(double t, const double *x, const double *p, double *o) { model.flow->diffusion(t, x, p, o); }
void gx(double t, const double *x, const double *p, double *o) {
  model.flow->diffusion_dx(t, x, p, o);
}
""")
st, pn = FLOW["state"], list(FLOW["params"])
names = st + pn + ["t"]
X = [sp.Symbol(s, real=True) for s in st]
F = [T.sym(FLOW["field"][s], names) for s in st]
G = [T.sym(FLOW["noise"][s], names) if s in FLOW["noise"] else sp.Integer(0) for s in st]
fn = sp.lambdify(names, F), sp.lambdify(names, sp.Matrix(F).jacobian(X))
gn = sp.lambdify(names, G), sp.lambdify(names, [sp.diff(G[i], X[i]) for i in range(3)])
worst = {}
p = [FLOW["params"][k] for k in pn]
for _ in range(50):
    x = list(rng.uniform(-1.5, 1.5, 3))
    x[0] = x[0] if abs(x[0]) > 1e-3 else 0.5  # away from abs's kink
    t = float(rng.uniform(0, 3))
    vals = x + p + [t]
    o = (ctypes.c_double * 9)()
    for cfun, ref, n, what in ((lib.f, fn[0], 3, "rhs"), (lib.j, fn[1], 9, "jacobian"),
                               (lib.g, gn[0], 3, "diffusion"), (lib.gx, gn[1], 3, "diffusion_dx")):
        cfun(ctypes.c_double(t), arr(x), arr(p), o)
        want = np.array(ref(*vals), dtype=float).ravel()
        for i in range(n):
            close(o[i], want[i], what, worst)
for what, e in worst.items():
    T.check(e < 1e-12, f"flow {what} equals sympy's at 50 random points (worst relative {e:.1e})")

# --- a Filippov system --------------------------------------------------------------------------
lib = compile_model("fil", yaml_model(FIL, True), """
double h(const double *x, const double *p, double *grad) {
  return model.filippov->switching(x, p, grad);
}
void s(const double *x, int side, const double *p, double *o) {
  model.filippov->slip(0.0, x, side, p, o);
}
void sj(const double *x, int side, const double *p, double *o) {
  model.filippov->slip_jacobian(0.0, x, side, p, o);
}
""")
lib.h.restype = ctypes.c_double
st, pn = FIL["state"], list(FIL["params"])
names = st + pn + ["t"]
X = [sp.Symbol(s, real=True) for s in st]
H = T.sym(FIL["switching"], names)
hn = sp.lambdify(names, [H] + [sp.diff(H, v) for v in X])
side_fn = {}
for side, key in ((1, "plus"), (-1, "minus")):
    Fs = [T.sym(FIL[key][s], names) for s in st]
    side_fn[side] = sp.lambdify(names, Fs), sp.lambdify(names, sp.Matrix(Fs).jacobian(X))
worst = {}
p = [FIL["params"][k] for k in pn]
for _ in range(50):
    x = list(rng.uniform(-1.5, 1.5, 2))
    if abs(x[0] - x[1]) < 1e-3 or abs(x[1] - 0.5) < 1e-3:
        continue  # min's and max's kinks
    vals = x + p + [0.0]
    grad = (ctypes.c_double * 2)()
    want = hn(*vals)
    close(lib.h(arr(x), arr(p), grad), want[0], "switching", worst)
    close(grad[0], want[1], "gradient", worst)
    close(grad[1], want[2], "gradient", worst)
    for side in (1, -1):
        o = (ctypes.c_double * 4)()
        lib.s(arr(x), side, arr(p), o)
        for i, w in enumerate(side_fn[side][0](*vals)):
            close(o[i], w, f"slip side {side:+d}", worst)
        lib.sj(arr(x), side, arr(p), o)
        for i, w in enumerate(np.array(side_fn[side][1](*vals), dtype=float).ravel()):
            close(o[i], w, f"slip_jacobian side {side:+d}", worst)
for what, e in worst.items():
    T.check(e < 1e-12, f"Filippov {what} equals sympy's at random points (worst relative {e:.1e})")

# --- errors: file:line: key: column -------------------------------------------------------------
def expect_error(name, text, old, new, key, what):
    """Replaces old by new in text; the message must point at the line and column of `what`."""
    text = T.write(name, text.replace(old, new))
    lines = open(name).read().splitlines()
    line = next(i for i, l in enumerate(lines) if new in l)
    expr = lines[line].split('"')[1]
    want = f"{name}:{line + 1}: key '{key}': column {expr.index(what) + 1}: "
    res = subprocess.run([GEN, "--generate", name], capture_output=True, text=True)
    T.check(res.returncode == 2 and want in res.stderr, f"{res.stderr.strip()!r} starts {want!r}")


expect_error("bad.yaml", yaml_model(FIL, True), "-k*u - mu", "-k*u - mu*foo(w)",
             "model.equations.slip.plus.w", "foo")
expect_error("bad2.yaml", yaml_model(FLOW, False), "a*(y - x)", "a*(y - x))",
             "model.equations.field.x", ") + sin")
expect_error("bad3.yaml", yaml_model(FLOW, False), "b*z +", "b*z + kappa",
             "model.equations.field.z", "kappa")
T.finish()
