"""equations_run.py — a model written as model.equations runs like the built-in kernel it
restates.

The built-in lorenz (a flow with additive noise) and stick-slip (a Filippov system) are
written as equations with the same operations in the same order, so every job must give the
same numbers bit for bit: the stochastic ensemble of configs/smoke.yaml (Euler–Maruyama; the
noise and its derivative generated), a Lyapunov spectrum of each (the generated Jacobian and
slip Jacobian against the kernels' hand-written ones), a stick-slip trajectory and ensemble
with crossings and sticking (also on 2 ranks).  `twofold check` reports an expression error with file:line, key
and column and exits 2; the compiled model is cached (one library after several runs).
"""
import glob
import os
import subprocess

import h5py
import numpy as np

import testlib as T

T.setup()
os.environ["TWOFOLD_CACHE"] = os.path.join(T.WORK, "cache")

LORENZ_EQ = """  equations:
    name: lorenz-eq
    state: [x, y, z]
    initial: [1, 1, 1]
    parameters:
      sigma: {default: 10, min: 0}
      rho: {default: 28, min: 0}
      beta: {default: 2.6666666666666665, min: 0}
      noise: {default: 0, min: 0}
    field: {x: "sigma*(y - x)", y: "x*(rho - z) - y", z: "x*y - beta*z"}
    noise: {x: noise, y: noise, z: noise}
"""
STICK_EQ = """  equations:
    name: stick-slip-eq
    state: [x, v, theta]
    initial: [0.2, 0, 0]
    parameters: {zeta: 0.05, mu: 0.6, vb: 0.5, a: 2.0, omega: 1.25}
    switching: v - vb
    slip:
      plus: {x: v, v: "-x - 2*zeta*v + a*cos(theta) - mu", theta: omega}
      minus: {x: v, v: "-x - 2*zeta*v + a*cos(theta) + mu", theta: omega}
"""


def pair(tag, builtin_model, eq_model, rest):
    """Two configs that differ only in how the model is given."""
    b = T.write(f"{tag}_builtin.yaml", f"model:\n{builtin_model}{rest}")
    e = T.write(f"{tag}_eq.yaml", f"model:\n{eq_model}{rest}")
    return b, e


def datasets(path, names):
    with h5py.File(path) as f:
        return {n: f[n][...] for n in names}


def same(tag, b, e, names):
    db, de = datasets(b, names), datasets(e, names)
    for n in names:
        T.check(db[n].shape == de[n].shape and np.array_equal(db[n], de[n]),
                f"{tag}: {n} bitwise equal ({db[n].size} values)")


# --- lorenz: stochastic ensemble (Euler-Maruyama) and Lyapunov spectrum -------------------------
LORENZ_PARAMS = "  params: {sigma: 10, rho: 28, beta: 2.6666666666666665, noise: 0.5}\n"
b, e = pair("smoke", "  name: lorenz\n" + LORENZ_PARAMS, LORENZ_EQ + LORENZ_PARAMS, """job: ensemble
initial: {state: [1.0, 1.0, 20.0], spread: 0.01}
integrator: {method: euler-maruyama, t_end: 2.0, dt: 0.001}
ensemble: {members: 64, seed: 20141}
""")
rb, re_ = T.run(b, "smoke_b.h5"), T.run(e, "smoke_e.h5")
T.check(re_["model"] == "lorenz-eq", f"the model's name is the equations' ({re_['model']})")
same("lorenz + noise ensemble", "smoke_b.h5", "smoke_e.h5", ["/members/final_state"])
b, e = pair("lyap", "  name: lorenz\n", LORENZ_EQ, """job: lyapunov
initial: {state: [1.0, 1.0, 20.0]}
integrator: {rtol: 1.0e-9, atol: 1.0e-9}
lyapunov: {exponents: 3, transient: 10, duration: 100, interval: 1.0, blocks: 4}
""")
lb, le = T.run(b, "lyap_b.h5"), T.run(e, "lyap_e.h5")
T.check(lb["spectrum"] == le["spectrum"] and lb["spectrum"][0] > 0.5,
        f"lorenz spectrum equal: {le['spectrum']} vs {lb['spectrum']}")

# --- stick-slip: trajectory, ensemble, Lyapunov spectrum ----------------------------------------
PARAMS = "  params: {zeta: 0.05, mu: 0.8, vb: 0.5, a: 1.2, omega: 1.1}\n"
b, e = pair("traj", "  name: stick-slip\n" + PARAMS, STICK_EQ + PARAMS, """job: trajectory
initial: {state: [0.2, 0.0, 0.0]}
integrator: {t_end: 60, rtol: 1.0e-10, atol: 1.0e-12}
output: {samples: 601, event_log: 200}
""")
tb, te = T.run(b, "traj_b.h5"), T.run(e, "traj_e.h5")
with h5py.File("traj_b.h5") as f:
    names = [n for n in ("/trajectory", "/events", "/trajectory/state", "/events/t")
             if n in f and isinstance(f[n], h5py.Dataset)]
    names += [f"/trajectory/{k}" for k in f.get("trajectory", {}) if isinstance(f["trajectory"][k], h5py.Dataset)]
    names += [f"/events/{k}" for k in f.get("events", {}) if isinstance(f["events"][k], h5py.Dataset)]
names = sorted(set(names))
T.check(len(names) > 0, f"trajectory datasets compared: {names}")
same("stick-slip trajectory", "traj_b.h5", "traj_e.h5", names)
b, e = pair("ens", "  name: stick-slip\n" + PARAMS, STICK_EQ + PARAMS, """job: ensemble
initial: {state: [0.2, 0.0, 0.0], spread: 0.5}
integrator: {t_end: 100, rtol: 1.0e-9, atol: 1.0e-9}
ensemble: {members: 40, seed: 7}
""")
eb, ee = T.run(b, "ens_b.h5"), T.run(e, "ens_e.h5")
T.check(ee["events"]["slide_start"] > 0 and ee["events"] == eb["events"],
        f"stick-slip ensemble: same events {ee['events']['crossing']} crossings, "
        f"{ee['events']['slide_start']} sticks")
same("stick-slip ensemble", "ens_b.h5", "ens_e.h5", ["/members/final_state", "/members/steps"])
T.run(e, "ens_e2.h5", ranks=2)  # every rank writes the same source, rank 0 compiles
same("stick-slip ensemble on 2 ranks", "ens_b.h5", "ens_e2.h5", ["/members/final_state"])
b, e = pair("sslyap", "  name: stick-slip\n" + PARAMS, STICK_EQ + PARAMS, """job: lyapunov
initial: {state: [0.2, 0.0, 0.0]}
integrator: {rtol: 1.0e-9, atol: 1.0e-9}
lyapunov: {exponents: 2, transient: 50, duration: 200, interval: 1.0, blocks: 4}
""")
sb, se = T.run(b, "sslyap_b.h5"), T.run(e, "sslyap_e.h5")
T.check(sb["spectrum"] == se["spectrum"] and se["method"] == "events+saltation",
        f"stick-slip spectrum equal: {se['spectrum']} vs {sb['spectrum']}")
libs = glob.glob(os.path.join(T.WORK, "cache", "equations-stick-slip-eq-*.so"))
T.check(len(libs) == 1, f"the stick-slip equations compiled once for 3 jobs: {libs}")

# --- an expression error through the command line -----------------------------------------------
bad = T.write("bad.yaml", "model:\n" + STICK_EQ.replace("- 2*zeta*v", "- 2*zeta*vv") + PARAMS
              + "job: trajectory\ninitial: {state: [0.2, 0.0, 0.0]}\nintegrator: {t_end: 1}\n")
res = subprocess.run([T.TWOFOLD, "check", bad], capture_output=True, text=True)
line = next(i for i, l in enumerate(open(bad).read().splitlines()) if "vv" in l) + 1
col = '-x - 2*zeta*vv + a*cos(theta) - mu'.index("vv") + 1
want = f"bad.yaml:{line}: key 'model.equations.slip.plus.v': column {col}: unknown name 'vv'"
T.check(res.returncode == 2 and want in res.stderr, f"check exits 2 with {want!r}: {res.stderr.strip()!r}")
both = T.write("both.yaml", "model:\n  name: stick-slip\n" + STICK_EQ
               + "job: trajectory\ninitial: {state: [0.2, 0.0, 0.0]}\nintegrator: {t_end: 1}\n")
res = subprocess.run([T.TWOFOLD, "check", both], capture_output=True, text=True)
T.check(res.returncode == 2 and "both.yaml:3: key 'model.equations': give the model as equations "
        "or by model.name, not both" in res.stderr, f"equations and name refused: {res.stderr.strip()!r}")
# the generated derivatives pass the loader's own finite-difference check
res = subprocess.run([T.TWOFOLD, "model", "check", e], capture_output=True, text=True)
T.check(res.returncode == 0 and "FAIL" not in res.stdout,
        f"twofold model check passes: {res.stdout.strip().splitlines()[-1:]} {res.stderr.strip()}")
T.finish()
