"""reduce.py — per-member reductions (output.reduce) and a chosen set of tables (output.columns).

A linear model, x' = -a x, y' = -b y (model.equations), whose final state is known in closed
form: x(T) = x0 e^(-a T), y(T) = y0 e^(-b T).  With `output.columns: [initial_state]` and
`output.reduce: {E: "x^2 + y^2", k: "a*t"}` and `a` drawn per member (model.sample):

* the file holds exactly the tables asked for (initial_state, parameters, the reductions, and
  the bookkeeping status/done/checksum): no final_state, t_final or steps;
* E matches the closed form computed here from each member's stored initial state and drawn
  a (to 1e-8, the integration's tolerance), and k = a T is the member's own a times T;
* the same run with final_state written gives the same E, equal bit for bit to numpy's
  x^2 + y^2 of that final_state;
* /summary/E_mean, E_std, E_min, E_max are numpy's over the ok members;
* 1 and 2 ranks, and a stop (--stop-after) and --resume, give the same file;
* a resume with another reduction is refused (the reductions are part of the fingerprint);
* on the lanes path (Lorenz, integrator.lanes 4) a reduction equals the one computed from
  the member-by-member run's final states;
* bad input is refused with file, line and key: an unknown table, an unknown name in an
  expression, a reduction named like a table, a name that is not an identifier.
"""
import os
import subprocess

import h5py
import numpy as np

import testlib as T

T.setup()
os.environ.setdefault("TWOFOLD_CACHE", os.path.join(T.WORK, "cache"))
os.makedirs(os.environ["TWOFOLD_CACHE"], mode=0o700, exist_ok=True)
T_END, B, MEMBERS = 2.0, 2.0, 300
A_RANGE = (0.2, 0.8)
cfg = T.write("decay.yaml", f"""job: ensemble
model:
  equations:
    name: decay2
    state: [x, y]
    parameters:
      a: {{default: 0.5, min: 0}}
      b: {{default: {B}, min: 0}}
    field: {{x: "-a*x", y: "-b*y"}}
  sample:
    a: {{dist: uniform, lo: {A_RANGE[0]}, hi: {A_RANGE[1]}}}
initial: {{state: [1.0, 0.5], spread: 0.1}}
integrator: {{t_end: {T_END}, rtol: 1.0e-11, atol: 1.0e-13}}
ensemble: {{members: {MEMBERS}, seed: 3}}
output:
  columns: [initial_state, parameters]
  reduce:
    E: "x^2 + y^2"
    k: "a*t"
""")

T.run(cfg, "one.h5")
with h5py.File("one.h5", "r") as f:
    tables = sorted(f["members"])
    x0 = f["members/initial_state"][()]
    a = f["members/parameters"][()].ravel()
    E, k = f["members/E"][()], f["members/k"][()]
    status = f["members/status"][()]
    summary = {s: f[f"summary/E_{s}"][0] for s in ("mean", "std", "min", "max")}
    doc = f["members/E"].attrs["doc"]
T.check(tables == ["E", "checksum", "done", "initial_state", "k", "parameters", "status"],
        f"output.columns and output.reduce: /members holds {tables}")
want_E = (x0[:, 0] * np.exp(-a * T_END)) ** 2 + (x0[:, 1] * np.exp(-B * T_END)) ** 2
T.check(np.all(status == 1) and np.max(np.abs(E / want_E - 1)) < 1e-8,
        f"E = x(T)^2 + y(T)^2 against the closed form from each member's x0 and drawn a: "
        f"largest relative error {np.max(np.abs(E / want_E - 1)):.2e}")
T.check(np.array_equal(k, a * T_END) and len(set(a)) == MEMBERS,
        "k = a*t: each member's own drawn a times the time reached")
ok = E[status == 1]
T.check(np.isclose(summary["mean"], ok.mean(), rtol=1e-13) and
        np.isclose(summary["std"], ok.std(ddof=1), rtol=1e-10) and
        summary["min"] == ok.min() and summary["max"] == ok.max(),
        f"/summary/E_*: mean {summary['mean']:.6g}, std {summary['std']:.6g}, as numpy's")
T.check(doc == "output.reduce: x^2 + y^2", f"/members/E names its expression: {doc!r}")

# the same members with every table: the reduction is of the final state written there
T.run(cfg, "all.h5", "output.columns=[final_state, initial_state, parameters]")
with h5py.File("all.h5", "r") as f:
    xT = f["members/final_state"][()]
    E_all = f["members/E"][()]
T.check(np.array_equal(E_all, E) and np.array_equal(E, xT[:, 0] ** 2 + xT[:, 1] ** 2),
        "E is x^2 + y^2 of the member's final_state, bit for bit, with or without that table")

# ranks and resume
T.run(cfg, "two.h5", ranks=2)
T.run(cfg, "resumed.h5", extra=("--stop-after", "100"), code=3)
T.run(cfg, "resumed.h5", extra=("--resume",))
for other in ("two.h5", "resumed.h5"):
    with h5py.File("one.h5", "r") as f, h5py.File(other, "r") as g:
        same = all(np.array_equal(f["members"][n][()], g["members"][n][()]) for n in tables)
    T.check(same, f"{other}: every /members table equals the 1-rank straight run's")
res = subprocess.run([T.TWOFOLD, "run", cfg, "-o", "resumed.h5", "--quiet", "--resume",
                      "--set", "output.reduce.E=x^2"], capture_output=True, text=True)
T.check(res.returncode == 2 and "output.reduce" in res.stderr,
        f"--resume with another reduction refused: exit {res.returncode}, "
        f"{res.stderr.strip()[:160]}")

# lanes: the reductions of members integrated side by side
lorenz = T.write("lorenz.yaml", """job: ensemble
model: {name: lorenz}
initial: {state: [1.0, 1.0, 20.0], spread: 0.5}
integrator: {t_end: 1.0, rtol: 1.0e-9, atol: 1.0e-9, lanes: 4}
ensemble: {members: 64, seed: 5}
output:
  reduce: {R: "sqrt(x^2 + y^2 + z^2)", zt: "z*t"}
""")
T.run(lorenz, "lanes.h5")
T.run(lorenz, "scalar.h5", "integrator.lanes=1")
with h5py.File("lanes.h5", "r") as f, h5py.File("scalar.h5", "r") as g:
    xT = g["members/final_state"][()]
    R = np.sqrt(xT[:, 0] ** 2 + xT[:, 1] ** 2 + xT[:, 2] ** 2)
    same = np.array_equal(f["members/R"][()], g["members/R"][()])
    T.check(same and np.max(np.abs(g["members/R"][()] / R - 1)) < 1e-15 and
            np.array_equal(f["members/zt"][()], xT[:, 2] * 1.0),
            "lanes 4: R = |x| and z*t equal the member-by-member run's, and |x| of its "
            "final_state")

T.refused(cfg, ["output.columns=[initial_state, exits]"],
          "key 'output.columns': 'exits' is not a table this ensemble writes")
T.refused(cfg, ["output.reduce.E=x^2 + q"],
          "key 'output.reduce.E': column 7: unknown name 'q'")
T.refused(cfg, ["output.reduce.steps=x"],
          "key 'output.reduce.steps': 'steps' is already a table")
T.refused(cfg, ["output.reduce.2x=x"],
          "key 'output.reduce.2x': a reduction's name is a column name")
res = subprocess.run([T.TWOFOLD, "check", cfg], capture_output=True, text=True)
T.check(res.returncode == 0, f"the config itself checks: {res.stdout.strip()}")
T.finish()
