"""testlib.py — helpers shared by the Python integration tests (run with /usr/bin/python3)."""
import json
import os
import shutil
import subprocess
import sys

TWOFOLD = os.environ["TWOFOLD"]
MPIEXEC = os.environ["MPIEXEC"]
CONFIGS = os.environ["CONFIGS"]
WORK = os.environ["WORK"]

failures = []


# The smoothed Jeffrey oscillator (eps 0.05) as the lanes tests run it: 40 members from a spread
# around (0, 0, 1, 0), DOPRI5 to t = 5.
JEFFREY_SMOOTHED = """job: ensemble
model:
  name: jeffrey-oscillator
  params: {k: 1, c: 0.1, N: 1, a: 1.5, omega: 0.2, rho: 2, beta: 0.01, eps: 0.05}
initial:
  state: [0, 0, 1, 0]
  spread: 0.1
integrator:
  method: dopri5
  t_end: 5
  rtol: 1.0e-8
  atol: 1.0e-10
ensemble:
  members: 40
"""


def lorenz_ensemble(members):
    """Lorenz members from a spread around (1, 1, 20), DOPRI5 to t = 4 at tolerance 1e-9, five
    trajectory samples each: the lanes tests' smooth ensemble."""
    return f"""job: ensemble
model:
  name: lorenz
initial:
  state: [1, 1, 20]
  spread: 0.5
integrator:
  t_end: 4
  rtol: 1.0e-9
  atol: 1.0e-9
ensemble:
  members: {members}
output:
  trajectory_samples: 5
"""


def valve_scan(t_end, transient, count, points):
    """The valve's bifurcation scan over q in [0.2, 10] (configs/valve-bifurcation.yaml's model,
    impacts and extrema of x, DOP853 at tolerance 1e-9), shortened."""
    return f"""job: scan
model:
  name: pressure_valve
  params: {{kappa: 1.25, beta: 20, delta: 10, r: 0.8}}
initial:
  state: [0.2, 0.0, 0.0]
integrator:
  method: dop853
  t_end: {t_end}
  rtol: 1e-9
  atol: 1e-9
impact:
  event_tol: 1e-9
poincare:
  event: impact+extremum
  component: x
  transient: {transient}
  count: {count}
  tol: 1e-9
scan:
  quantity: poincare
  x: {{param: q, min: 0.2, max: 10, points: {points}}}
"""

def setup():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    os.chdir(WORK)
    if os.geteuid() == 0:
        os.environ["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        os.environ["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    os.environ["OMPI_MCA_rmaps_base_oversubscribe"] = "1"


def write(name, text):
    with open(name, "w") as f:
        f.write(text)
    return name


def run(config, out, *sets, ranks=1, extra=(), code=0):
    """Runs twofold, expecting exit status `code`, and returns its --json summary."""
    cmd = [TWOFOLD, "run", config, "-o", out, "--quiet", "--json", "--overwrite", *extra]
    for s in sets:
        cmd += ["--set", s]
    if ranks > 1:
        cmd = [MPIEXEC, "-n", str(ranks)] + cmd
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != code:
        raise RuntimeError(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def run_one_member(name, model, method, x0, t_end, rtol, atol):
    """One member of `model` from x0 to t_end by integrator `method` at (rtol, atol): the
    engine's accepted steps and final state, to hold against an independent integration."""
    import h5py
    cfg = write(f"{name}.yaml", f"""job: ensemble
model: {model}
initial:
  state: {[float(v) for v in x0]}
integrator:
  method: {method}
  t_end: {t_end}
  rtol: {rtol}
  atol: {atol}
ensemble:
  members: 1
""")
    run(cfg, f"{name}.h5")
    with h5py.File(f"{name}.h5") as f:
        return int(f["members/steps"][0]), f["members/final_state"][0][()]


def relay3_equations(zeta, omega, lam, rho, k, sigma):
    """The third-order relay feedback system as a model.equations block (indented for a
    `model:` section): x' = A x - B sign(x1), the Filippov model the relay tests hold against
    their independent solutions; lam may be a number or any YAML scalar."""
    return f"""  equations:
    name: relay3
    state: [x1, x2, x3]
    parameters: {{zeta: {zeta}, omega: {omega}, lam: {lam}, rho: {rho}, k: {k}, sigma: {sigma}}}
    switching: x1
    slip:
      plus:
        x1: "-(2*zeta*omega + lam)*x1 + x2 - k"
        x2: "-(2*zeta*omega*lam + omega^2)*x1 + x3 + 2*sigma*rho*k"
        x3: "-lam*omega^2*x1 - k*rho^2"
      minus:
        x1: "-(2*zeta*omega + lam)*x1 + x2 + k"
        x2: "-(2*zeta*omega*lam + omega^2)*x1 + x3 - 2*sigma*rho*k"
        x3: "-lam*omega^2*x1 + k*rho^2"
"""


def refused(config, sets, needle, command="check"):
    """`twofold COMMAND config --set S ...` must exit 2 with `needle` in its message."""
    cmd = [TWOFOLD, command, config]
    for s in sets:
        cmd += ["--set", s]
    res = subprocess.run(cmd, capture_output=True, text=True)
    check(res.returncode == 2 and needle in res.stderr,
          f"{' '.join(sets) or config}: exit {res.returncode}, {res.stderr.strip()[:220]}")


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def finish():
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("all passed")


def sym(text, names):
    """An expression of model.equations as sympy reads it (an independent parse for tests)."""
    import sympy as sp
    funcs = {f: getattr(sp, f) for f in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                                         "cosh", "tanh", "exp", "log", "sqrt", "atan2")}
    funcs.update({"abs": sp.Abs, "sign": sp.sign, "min": sp.Min, "max": sp.Max, "pow": sp.Pow})
    funcs.update({n: sp.Symbol(n, real=True) for n in names})
    return sp.sympify(text.replace("^", "**"), locals=funcs)


def datasets(path):
    """Every dataset of an HDF5 file as (dtype, shape, bytes), by name (h5py imported here)."""
    import h5py
    out = {}
    with h5py.File(path) as f:
        f.visititems(lambda name, o: out.__setitem__(name, (o.dtype.str, o.shape, o[()].tobytes()))
                     if isinstance(o, h5py.Dataset) else None)
    return out


def same_files(name, ref, other):
    """Checks that two results files hold the same datasets, byte for byte."""
    a, b = datasets(ref), datasets(other)
    differing = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    check(not differing and len(a) > 3, f"{name}: {other} equals {ref} ({len(a)} datasets)"
          + (f"; differ: {differing}" if differing else ""))
