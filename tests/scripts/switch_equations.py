"""switch_equations.py — Filippov systems with several switching functions written as equations.

* A two-mass chain on a belt (springs wall-mass 1 and mass 1-mass 2, Stribeck friction at each
  contact, F_i = s_i (muk + (mus - muk) exp(-|v_i - vb| / vs)), s_i the sign of v_i - vb) with
  `switching` a mapping {s1: v1 - vb, s2: v2 - vb} and one `field` using s1, s2:
  `twofold model check` passes, off and on the switching surfaces; the plugin source twofold
  generated into its cache is compiled with a harness and its field, field_jacobian,
  switching functions and gradients equal sympy's evaluation of the same equation text at
  random states and random signs in [-1, 1]^2 (relative 1e-12).  The same for a synthetic
  model with four switching functions, nonlinear in the state, and a field depending on t.
* Bad inputs (a sign named like a state, a parameter, t or a function; a field not affine in
  the signs: a product of two signs, a square, a function or a step of one; an unknown name;
  a missing field equation; slip or noise with signs; a switching function depending on t or
  on a sign; 0 or 5 switching functions; a sign no equation uses): `run` and `model check`
  exit 2 naming file:line, the key and, inside an expression, the column found here in the
  YAML text, and no results file is written.
* `model check` of C plugins (model.source): the affine model passes; a field with a term
  c s1 s2 FAILS the pair (s[0], s[1]) only, with residual c; a term c s1^2 FAILS the axis s[0]
  with residuals 2c (a = -1) and -c/4 (a = 1/2); a wrong field_jacobian entry FAILS with that
  entry named and central differences equal to the analytic derivative.
* Models of the single-switch form and flows still generate the source they did before.
"""
import ctypes
import glob
import os
import re
import subprocess

import numpy as np
import sympy as sp

import testlib as T

T.setup()
INCLUDE = os.path.join(os.environ["SOURCE_DIR"], "include")
os.environ["TWOFOLD_CACHE"] = os.path.join(T.WORK, "cache")
rng = np.random.default_rng(20261125)


def twofold(*args):
    return subprocess.run([T.TWOFOLD, *args], capture_output=True, text=True)


CHAIN = {
    "name": "belt-chain",
    "state": ["x1", "v1", "x2", "v2"],
    "initial": [0.1, 0.0, -0.2, 0.3],
    "params": {"m1": 1.0, "m2": 1.5, "k1": 1.0, "k2": 0.7, "mus": 0.4, "muk": 0.25, "vs": 0.1,
               "vb": 0.2},
    "switching": {"s1": "v1 - vb", "s2": "v2 - vb"},
    "field": {
        "x1": "v1",
        "v1": "(-k1*x1 + k2*(x2 - x1) - s1*(muk + (mus - muk)*exp(-abs(v1 - vb)/vs)))/m1",
        "x2": "v2",
        "v2": "(-k2*(x2 - x1) - s2*(muk + (mus - muk)*exp(-abs(v2 - vb)/vs)))/m2",
    },
}
# four switching functions, curved; signs multiplying functions of the state and of t
SYN = {
    "name": "four-switches",
    "state": ["a", "b", "c"],
    "initial": [0.3, -0.4, 0.5],
    "params": {"p": 0.8, "q": 0.2},
    "switching": {"r1": "a^2 + b - 1", "r2": "sin(c) - p*a", "r3": "a*b*c - q",
                  "r4": "atan2(b, 1 + a^2)"},
    "field": {
        "a": "r1*cos(b) - r2*a*c + q + r4*sqrt(1 + c^2)",
        "b": "(r1 + r3)*exp(-a^2) + b*c - r4*sin(t)",
        "c": "atan(a) - r3*(1 + b^2)/2 + r1/(2 + c^2) + (r2 - r4)*pow(abs(b) + 1, p)",
    },
}


def yaml_model(m, extra=""):
    lines = ["job: trajectory", "model:", "  equations:", f"    name: {m['name']}",
             f"    state: [{', '.join(m['state'])}]",
             f"    initial: [{', '.join(repr(v) for v in m['initial'])}]", "    parameters:"]
    lines += [f"      {k}: {v!r}" for k, v in m["params"].items()]
    lines.append("    switching:")
    lines += [f"      {k}: {e}" for k, e in m["switching"].items()]
    lines.append("    field:")
    lines += [f"      {k}: {e}" for k, e in m["field"].items()]
    lines += ["integrator: {t_end: 1}"]
    return "\n".join(lines) + "\n" + extra


D = ctypes.POINTER(ctypes.c_double)


def arr(v):
    return (ctypes.c_double * len(v))(*v)


HARNESS = """
int m(void) { return model.switches->nswitches; }
double h(int i, const double *x, const double *p, double *grad) {
  return model.switches->switching(i, x, p, grad);
}
void f(double t, const double *x, const double *s, const double *p, double *o) {
  model.switches->field(t, x, s, p, o);
}
void j(double t, const double *x, const double *s, const double *p, double *o) {
  model.switches->field_jacobian(t, x, s, p, o);
}
int kind(void) { return model.kind == TF_MODEL_SWITCHES; }
"""


def load_generated(m):
    """The source twofold wrote into its cache for this model, compiled with a harness."""
    found = glob.glob(os.path.join(os.environ["TWOFOLD_CACHE"], f"equations-{m['name']}-*.c"))
    T.check(len(found) == 1, f"{m['name']}: one generated source in the cache ({found})")
    T.write(m["name"] + "_harness.c", f'#include "{found[0]}"\n{HARNESS}')
    so = os.path.abspath(m["name"] + "_harness.so")
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-I", INCLUDE,
                    "-o", so, m["name"] + "_harness.c", "-lm"], check=True)
    lib = ctypes.CDLL(so)
    lib.h.restype = ctypes.c_double
    lib.h.argtypes = [ctypes.c_int, D, D, D]
    lib.f.argtypes = lib.j.argtypes = [ctypes.c_double, D, D, D, D]
    return lib


def close(got, want, what, worst):
    err = abs(got - want) / max(1.0, abs(want))
    worst[what] = max(worst.get(what, 0.0), err)


def against_sympy(m, points, sample_state):
    cfg = T.write(m["name"] + ".yaml", yaml_model(m))
    r = twofold("model", "check", cfg)
    T.check(r.returncode == 0 and "result: ok" in r.stdout
            and "kind: Filippov system with several switching functions" in r.stdout,
            f"{m['name']}: model check passes (exit {r.returncode}) {r.stderr.strip()}")
    nsw = len(m["switching"])
    pairs = nsw * (nsw - 1) // 2
    T.check(len(re.findall(r"^  ok    pair \(s\[\d\], s\[\d\]\)", r.stdout, re.M)) == pairs
            and len(re.findall(r"^  ok    axis s\[\d\], a = ", r.stdout, re.M)) == 2 * nsw
            and len(re.findall(r"^  ok    field_jacobian, s = ", r.stdout, re.M)) == 3
            and len(re.findall(r"^  ok    switching gradient h\[\d\]", r.stdout, re.M)) == nsw
            and len(re.findall(r"^  ok    field, s = ", r.stdout, re.M)) == 2 ** nsw + 1,
            f"{m['name']}: model check reports every pair, axis, gradient and Jacobian")
    lib = load_generated(m)
    T.check(lib.kind() == 1 and lib.m() == nsw,
            f"{m['name']}: kind TF_MODEL_SWITCHES, {nsw} switches")
    st, pn, sg = m["state"], list(m["params"]), list(m["switching"])
    names = st + pn + ["t"] + sg
    X = [sp.Symbol(s, real=True) for s in st]
    H = [T.sym(m["switching"][k], names) for k in sg]
    F = [T.sym(m["field"][s], names) for s in st]
    hn = sp.lambdify(names, [[Hk] + [sp.diff(Hk, v) for v in X] for Hk in H])
    fn = sp.lambdify(names, F)
    jn = sp.lambdify(names, sp.Matrix(F).jacobian(X))
    n = len(st)
    p = [m["params"][k] for k in pn]
    worst = {}
    for k in range(points):
        x = sample_state()
        t = float(rng.uniform(0, 5))
        # corners of [-1, 1]^m first (slipping contacts), then multipliers inside it
        s = list(rng.choice([-1.0, 1.0], nsw)) if k % 4 == 0 else list(rng.uniform(-1, 1, nsw))
        vals = x + p + [t] + s
        want_h = hn(*vals)
        grad = (ctypes.c_double * n)()
        for i in range(nsw):
            close(lib.h(i, arr(x), arr(p), grad), want_h[i][0], "switching", worst)
            for q in range(n):
                close(grad[q], want_h[i][1 + q], "gradient", worst)
        o = (ctypes.c_double * (n * n))()
        lib.f(t, arr(x), arr(s), arr(p), o)
        for q, w in enumerate(fn(*vals)):
            close(o[q], float(w), "field", worst)
        lib.j(t, arr(x), arr(s), arr(p), o)
        for q, w in enumerate(np.array(jn(*vals), dtype=float).ravel()):
            close(o[q], w, "field_jacobian", worst)
    for what in ("switching", "gradient", "field", "field_jacobian"):
        e = worst.get(what, np.inf)
        T.check(e < 1e-12, f"{m['name']}: {what} equals sympy's at {points} random points "
                f"(worst relative {e:.1e})")
    return cfg


def chain_state():
    while True:
        x = list(rng.uniform(-1.0, 1.0, 4))
        if min(abs(x[1] - 0.2), abs(x[3] - 0.2)) > 1e-3:  # off the kinks of |v_i - vb|
            return x


def syn_state():
    while True:
        x = list(rng.uniform(-1.2, 1.2, 3))
        if abs(x[1]) > 1e-3:  # off the kink of |b|
            return x


chain_cfg = against_sympy(CHAIN, 200, chain_state)
against_sympy(SYN, 200, syn_state)

# both masses at rest on the belt, and both within 1e-7 of it (on either side): the state is
# on or next to both switching surfaces, where the Stribeck terms have their kinks and central
# differences straddling them mean nothing; the Jacobian is checked beside them
for state, h0 in (("[0.05, 0.2, -0.1, 0.2]", "(0)"),
                  ("[0.05, 0.2000001, -0.1, 0.1999999]", "(1e-07)")):
    r = twofold("model", "check", chain_cfg, "--set", f"initial.state={state}")
    T.check(r.returncode == 0 and "result: ok" in r.stdout
            and re.search(r"switching function h\[1\] = \(-?" + re.escape(h0[1:]), r.stdout)
            and "moved off the switching surfaces" in r.stdout,
            f"model check at {state}, on or next to both switching surfaces, passes "
            f"(exit {r.returncode})")

# --- bad inputs: exit 2, file:line: key: column, no results file ---------------------------------
BASE = "model.equations"


def expect_error(name, text, key, line_has, what=None, message=""):
    """The error must name name:line (the first line holding line_has), the key and, if `what`
    is given, the column of `what` in that line's expression, and contain `message`."""
    T.write(name, text)
    lines = text.splitlines()
    line = next(i for i, l in enumerate(lines) if line_has in l)
    want = f"{name}:{line + 1}: key '{key}': "
    if what is not None:
        expr = lines[line].split(": ", 1)[1]
        want += f"column {expr.index(what) + 1}: "
    out = name[:-5] + ".h5"
    for cmd in (["run", name, "-o", out], ["model", "check", name]):
        res = twofold(*cmd)
        T.check(res.returncode == 2 and want in res.stderr and message in res.stderr
                and not glob.glob(out + "*"),
                f"{cmd[0]} {name}: exit {res.returncode}, {res.stderr.strip()!r} has {want!r} "
                f"and {message!r}, no results file")


def variant(**changes):
    m = {k: (dict(v) if isinstance(v, dict) else v) for k, v in CHAIN.items()}
    for k, v in changes.items():
        m[k] = v
    return m


def with_field(state, expr):
    return variant(field={**CHAIN["field"], state: expr})


def sign_renamed(old, new):
    return variant(switching={(new if k == old else k): v for k, v in CHAIN["switching"].items()},
                   field={s: re.sub(rf"\b{old}\b", new, e) for s, e in CHAIN["field"].items()})


for bad, why in (("x1", "is used twice (already a state)"),
                 ("vb", "is used twice (already a parameter)"), ("t", "is reserved for time"),
                 ("exp", "is the name of a function"), ("2s", "is not a name")):
    m = sign_renamed("s1", bad)
    expect_error(f"sign_{bad}.yaml", yaml_model(m), f"{BASE}.switching.{bad}",
                 f"      {bad}: v1 - vb", message=f"sign name '{bad}' {why}")

V1 = CHAIN["field"]["v1"]
for name, expr, what, message in (
        ("product", V1.replace("s1*(", "s1*s2*("), "s1*s2",
         "the field of 'v1' is not affine in the signs: its derivative with respect to 's1' "
         "depends on 's2'"),
        ("square", V1.replace("s1*(", "s1^2*("), "s1^2",
         "its derivative with respect to 's1' depends on 's1' itself"),
        ("function", V1.replace("s1*(", "exp(s1)*("), "exp(s1)",
         "its derivative with respect to 's1' depends on 's1' itself"),
        ("quotient", V1 + " + x1/(2 + s2)", "x1/(2 + s2)",
         "its derivative with respect to 's2' depends on 's2' itself"),
        ("step", V1.replace("s1*(", "sign(s1 + 0.5)*("), "sign(s1",
         "sign() of an expression of 's1' is a step in it"),
        ("unknown", V1.replace("s1*(", "s3*("), "s3", "unknown name 's3'")):
    expect_error(f"{name}.yaml", yaml_model(with_field("v1", expr)), f"{BASE}.field.v1",
                 "      v1: ", what, message)

missing = variant(field={k: v for k, v in CHAIN["field"].items() if k != "x2"})
expect_error("missing.yaml", yaml_model(missing), f"{BASE}.field", "    field:",
             message="state 'x2' has no equation here")
expect_error("slip.yaml", yaml_model(CHAIN).replace(
    "    field:", "    slip:\n      plus: {x1: v1, v1: 0, x2: v2, v2: 0}\n    field:"),
    f"{BASE}.slip", "    slip:", message="not slip fields")
expect_error("noise.yaml",
             yaml_model(CHAIN).replace("    field:", "    noise: {v1: 0.1}\n    field:"),
             f"{BASE}.noise", "    noise:", message="noise is for flows")
expect_error("h_t.yaml", yaml_model(variant(switching={"s1": "v1 - vb*t", "s2": "v2 - vb"})),
             f"{BASE}.switching.s1", "      s1: ", "t",
             "a switching function cannot depend on t")
expect_error("h_sign.yaml", yaml_model(variant(switching={"s1": "v1 - vb", "s2": "v2 - vb + s1"})),
             f"{BASE}.switching.s2", "      s2: ", "s1",
             "a switching function cannot depend on the sign 's1'")
five = variant(switching={f"s{i}": f"v1 - {i}" for i in range(1, 6)})
expect_error("five.yaml", yaml_model(five), f"{BASE}.switching", "    switching:",
             message="5 switching functions: expected 1 to 4")
expect_error("none.yaml", yaml_model(CHAIN).replace(
    "    switching:\n      s1: v1 - vb\n      s2: v2 - vb\n", "    switching: {}\n"),
    f"{BASE}.switching", "    switching:", message="0 switching functions: expected 1 to 4")
unused = variant(switching={**CHAIN["switching"], "s3": "x1 - 1"})
expect_error("unused.yaml", yaml_model(unused), f"{BASE}.switching.s3", "      s3: ",
             message="the sign 's3' appears in no equation of 'field'")

# --- the single-switch form and flows are generated as before ----------------------------------
# The cache is keyed by a hash of the generated source: these are the names these two models
# have had since model ABI 3 (size fields first, field functions returning int; before it
# 8d9792ceec13c76b and 55aa30fc1a9692b5), the Filippov one since its lanes slip field
# (slip_lanes; before it 19e34c528867df3c); a change of the printer that alters them must say so.
OLD = {
    "e077c765159cda3a": """    switching: "w - vb + 0.1*u^2"
    slip:
      plus:
        u: "w"
        w: "-k*u - mu*(1 + atan(w - vb))*exp(-u^2)"
      minus:
        u: "w"
        w: "-k^2*u + mu*cos(u)/(2 + min(u, w)) - max(0.5, w)"
""",
    "a1cb95162fa7c83d": """    field:
      x: "a*(y - x) + sin(x*y)^2 - atan2(y, x)"
      y: "x*(b - z) - y/(1 + z^2) + exp(-t*x)*cosh(z)"
      z: "x*y - b*z + sqrt(1 + x^2)*log(2 + y^2) + tanh(a*z) - z^3 + pow(abs(x) + 1, b)"
    noise:
      x: "s*x"
      z: "s*sqrt(1 + z^2) + asin(0.1*x)"
"""}
for h, body in OLD.items():
    state, params = ("[u, w]", "k: 2.0\n      mu: 0.4\n      vb: 0.3") if "slip" in body else (
        "[x, y, z]", "a: 1.3\n      b: 0.7\n      s: 0.2")
    T.write(f"old_{h}.yaml", f"job: trajectory\nmodel:\n  equations:\n    name: sympy-check\n"
            f"    state: {state}\n    parameters:\n      {params}\n{body}")
    twofold("model", "check", f"old_{h}.yaml")  # writes the source to the cache; verdict aside
    path = os.path.join(os.environ["TWOFOLD_CACHE"], f"equations-sympy-check-{h}.c")
    T.check(os.path.exists(path), f"{'Filippov' if 'slip' in body else 'flow'} equations: "
            f"generated source unchanged ({os.path.basename(path)})")

# --- model check of C plugins (model.source) ------------------------------------------------------
# m x'' = -k x - s1 F1 - s2 F2 (two frictional contacts on one mass), with optional defects
PLUGIN = r"""
#include "twofold/model.h"
static const char *const names[] = {"x", "v"};
static const double x0[] = {0.3, -0.2};
static const tf_param params[] = {{"k", 2.0, 0, 10, "stiffness", 0},
                                  {"m", 0.5, 0.1, 10, "mass", 0}};
static double switching(int i, const double *x, const double *p, double *grad) {
  (void)p;
  if (grad) grad[0] = i ? 1.0 : 0.0, grad[1] = i ? 0.0 : 1.0;
  return i ? x[0] - 1.0 : x[1] - 0.1;
}
static int field(double t, const double *x, const double *s, const double *p, double *dx) {
  (void)t;
  dx[0] = x[1];
  dx[1] = (-p[0] * x[0] - s[0] * 0.3 - s[1] * 0.2 * x[1] * x[1]) / p[1] + EXTRA;
  return 0;
}
static void field_jacobian(double t, const double *x, const double *s, const double *p, double *j) {
  (void)t;
  j[0] = 0.0;
  j[1] = 1.0;
  j[2] = -p[0] / p[1] + JAC_ERROR;
  j[3] = -s[1] * 0.4 * x[1] / p[1];
}
static const tf_switches_ops ops = {TF_OPS_SIZE(tf_switches_ops), 2, switching, field,
                                    field_jacobian};
static const tf_model_def model = {TF_MODEL_HEAD, .name = "two-contacts",
    .doc = "one mass, two frictional contacts", .kind = TF_MODEL_SWITCHES, .dim = 2,
    .state_names = names, .initial = x0, .nparams = 2, .params = params, .switches = &ops};
TWOFOLD_MODELS(&model);
"""
C = 0.375
for name, extra, jac in (("good", "0.0", "0.0"), ("product", f"{C!r} * s[0] * s[1]", "0.0"),
                         ("square", f"{C!r} * s[0] * s[0]", "0.0"), ("jacobian", "0.0", "0.01")):
    T.write(f"plugin_{name}.c", PLUGIN.replace("EXTRA", extra).replace("JAC_ERROR", jac))
    T.write(f"plugin_{name}.yaml", f"job: trajectory\nmodel: {{source: plugin_{name}.c}}\n"
            "integrator: {t_end: 1}\n")
checks = {n: twofold("model", "check", f"plugin_{n}.yaml") for n in
          ("good", "product", "square", "jacobian")}
for n, r in checks.items():
    print(f"--- model check plugin_{n}.yaml (exit {r.returncode})\n{r.stdout}{r.stderr}")
fails = {n: re.findall(r"^  FAIL  (.*)$", r.stdout, re.M) for n, r in checks.items()}
T.check(checks["good"].returncode == 0 and not fails["good"], "an affine C plugin passes")
r = checks["product"]
m = re.search(r"FAIL  pair \(s\[0\], s\[1\]\).*\n\s+component 1 \(v\): residual (\S+)", r.stdout)
T.check(r.returncode == 1 and len(fails["product"]) == 1 and m and abs(float(m[1]) - C) < 1e-12,
        f"a term {C} s1 s2 fails the pair (s[0], s[1]) alone, residual {C} ({fails['product']})")
r = checks["square"]
res = {a: re.search(rf"FAIL  axis s\[0\], a = {a}: .*\n\s+component 1 \(v\): residual (\S+)",
                    r.stdout) for a in ("-1", "0.5")}
T.check(r.returncode == 1 and len(fails["square"]) == 2 and all(res.values())
        and abs(float(res["-1"][1]) - 2 * C) < 1e-12
        and abs(float(res["0.5"][1]) + C / 4) < 1e-12,
        f"a term {C} s1^2 fails the axis s[0] with residuals 2c and -c/4 ({fails['square']})")
r = checks["jacobian"]
m = re.search(r"entry \[1\]\[0\]: given (\S+), central differences (\S+)", r.stdout)
T.check(r.returncode == 1 and fails["jacobian"]
        and all(f.startswith("field_jacobian") for f in fails["jacobian"])
        and m and abs(float(m[1]) - (-2.0 / 0.5 + 0.01)) < 1e-9
        and abs(float(m[2]) - (-2.0 / 0.5)) < 1e-6,
        f"a wrong field_jacobian entry fails, entry [1][0] named ({fails['jacobian']})")
T.finish()
