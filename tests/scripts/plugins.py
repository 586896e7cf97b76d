"""plugins.py — models from outside the tree (tests/plugins/), as a built library and as C source.

* belt-friction (a Filippov model that is not a built-in: a damped spring-mass on a belt with
  Coulomb friction): trajectory and ensemble final states against the closed-form piecewise
  solution computed here (slip phases are damped oscillations, the stick phase moves with the
  belt); Lyapunov exponents = -c/2, -c/2 on the slip attractor, their sum -c;
* linear3 (x' = A x, A lower triangular): trajectory and ensemble against expm(A t) x0,
  Lyapunov exponents = the diagonal of A, a scan over A[0][0] whose lambda_1 follows it;
* quadratic-map x -> 4x(1-x) without a Jacobian: Lyapunov exponent ln 2;
* devs-growth (a DEVS of logistic elements): the engine's generic path on the plugin's map
  gives the built-in devs-logistic's bits, and lambda_1 = q times a numpy orbit average;
* model.library and model.source give the same bits; a source compiles once into the
  cache, and a 2-rank run (rank 0 compiles, the others wait) equals the 1-rank run;
* --resume refuses a rebuilt library (the results file records the model's code) and
  completes with the original one; merge refuses parts run with different builds;
* concurrent runs compiling the same source into an empty cache all succeed;
* bad plugins: wrong ABI number, no ABI symbol, kind/table mismatch, default outside its
  bounds, a model listed twice, a name clash and a syntax error (the compiler's file:line
  shown) exit 5 (the model cannot be set up); two models without model.name, an unknown name,
  both keys, a missing file and a directory exit 2; each with the key and file named, and an
  existing results file untouched; a NaN field fails its members only;
* a codimension-2 plugin (Antali's eq 2.19): codim2-point's sliding vector (0, 0, -2 x3),
  limit directions and R as in the thesis; it and a two-contact plugin (the flowmeter's
  equations) follow the same trajectories as the built-ins with those equations;
* model check: the good models pass (exit 0), a wrong Jacobian entry is a FAIL (exit 1);
* model build: the library it writes runs bit for bit as its source; a syntax error or a file
  without TWOFOLD_MODELS exits 2 and leaves an existing library as it was.
"""
import glob
import hashlib
import os
import re
import shutil
import subprocess

import h5py
import numpy as np
from scipy.linalg import expm
from scipy.optimize import brentq

import testlib as T

T.setup()
SRC = os.environ["SOURCE_DIR"]
os.environ["TWOFOLD_CACHE"] = os.path.join(T.WORK, "cache")  # this test's own cache
os.makedirs("models")
os.makedirs("lib")
os.makedirs("cfg")
for f in glob.glob(SRC + "/tests/plugins/*.c"):
    shutil.copy(f, "models")


def cc(src, out, *defs):
    """Builds a plugin the way a user would."""
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-I", SRC + "/include", *defs, "-o", out,
                    src, "-lm"], check=True)


cc("models/belt.c", "lib/belt.so")
cc("models/linear.c", "lib/linear.so")
cc("models/contact.c", "lib/contact.so")
cc("models/impact.c", "lib/impact.so")
for case in ("BAD_ABI", "ABI_2", "NO_ABI", "KIND_MISMATCH", "BAD_DEFAULT", "NAME_CLASH", "DUPLICATE",
             "WRONG_JACOBIAN", "NAN_FIELD"):
    cc("models/broken.c", f"lib/{case.lower()}.so", "-D" + case)


def twofold(*args):
    return subprocess.run([T.TWOFOLD, *args], capture_output=True, text=True)


# --- belt-friction: closed form -------------------------------------------------------------
K, C, MU, VB = 1.0, 0.1, 1.0, 0.5
WD = np.sqrt(K - C * C / 4)


def slip_solution(x0, v0, side):
    """x(t), v(t) of x'' = -K x - C x' - MU side from (x0, v0): a damped oscillation."""
    xe = -MU * side / K
    y0 = x0 - xe
    A, B = y0, (v0 + C / 2 * y0) / WD

    def state(t):
        e = np.exp(-C / 2 * t)
        y = e * (A * np.cos(WD * t) + B * np.sin(WD * t))
        dy = e * ((-C / 2 * A + WD * B) * np.cos(WD * t) + (-C / 2 * B - WD * A) * np.sin(WD * t))
        return xe + y, dy
    return state


def belt_exact(x0, v0, ts):
    """The Filippov solution at times ts (sorted, from 0): slip, stick on the belt while
    |K x + C VB| <= MU, slip again."""
    out = np.empty((len(ts), 2))
    t0, x, v, i = 0.0, x0, v0, 0
    sticking = abs(v - VB) < 1e-14 and abs(K * x + C * VB) < MU
    while i < len(ts):
        if sticking:  # moves with the belt until the spring and damper exceed the friction
            t_leave = t0 + ((MU - C * VB) / K - x) / VB
            while i < len(ts) and ts[i] <= t_leave:
                out[i] = (x + VB * (ts[i] - t0), VB)
                i += 1
            t0, x, v, sticking = t_leave, (MU - C * VB) / K, VB, False
            continue
        side = 1 if v > VB else -1
        st = slip_solution(x, v, side)
        # the first return to the belt speed (after a tangential start, v - VB < 0 at once)
        grid = np.arange(1e-6, ts[-1] - t0 + 1e-3, 1e-3)
        g = st(grid)[1] - VB
        cross = np.nonzero(np.sign(g[1:]) != np.sign(g[:-1]))[0]
        t_hit = (t0 + brentq(lambda s: st(s)[1] - VB, grid[cross[0]], grid[cross[0] + 1],
                             xtol=1e-15) if len(cross) else np.inf)
        while i < len(ts) and ts[i] <= t_hit:
            out[i] = st(ts[i] - t0)
            i += 1
        if np.isfinite(t_hit):
            x, v = st(t_hit - t0)[0], VB
            t0 = t_hit
            sticking = abs(K * x + C * VB) < MU
            assert sticking, "the tests' states all stick on their return to the belt"
    return out


BELT = """job: {job}
model:
  {key}: {path}
  params: {{k: 1, c: 0.1, mu: 1, vb: 0.5}}
initial:
  state: [0.2, 0.5]
integrator:
  rtol: 1.0e-11
  atol: 1.0e-12
"""
# what each job reads besides (a job refuses keys it does not read)
BELT_JOBS = {
    "trajectory": "  t_end: 20\noutput:\n  samples: 41\n",
    "ensemble": "  t_end: 20\nensemble:\n  members: 16\n",
    "lyapunov": "lyapunov:\n  transient: 50\n  duration: 2000\n  interval: 1.0\n  blocks: 10\n",
}
for key, path in (("library", "../lib/belt.so"), ("source", "../models/belt.c")):
    for job, extra in BELT_JOBS.items():
        text = BELT.format(job=job, key=key, path=path) + extra
        if job == "ensemble":  # members start off the belt speed
            text = text.replace("state: [0.2, 0.5]", "state: [0.2, 0.5]\n  spread: 0.02")
        T.write(f"cfg/belt_{job}_{key}.yaml", text)

for key in ("library", "source"):
    T.run(f"cfg/belt_trajectory_{key}.yaml", f"belt_traj_{key}.h5")
    with h5py.File(f"belt_traj_{key}.h5", "r") as f:
        t, x = f["trajectory/t"][...], f["trajectory/state"][...]
    err = np.max(np.abs(x - belt_exact(0.2, 0.5, t)))
    T.check(err < 1e-7, f"belt {key}: trajectory (stick until t = 1.5, then slip) within "
                        f"{err:.1e} of the closed form")

    T.run(f"cfg/belt_ensemble_{key}.yaml", f"belt_ens_{key}.h5")
    with h5py.File(f"belt_ens_{key}.h5", "r") as f:
        x0, xf = f["members/initial_state"][...], f["members/final_state"][...]
        status = f["members/status"][...]
    ref = np.array([belt_exact(a, b, [20.0])[0] for a, b in x0])
    err = np.max(np.abs(xf - ref))
    T.check(np.all(status == 1) and err < 1e-7,
            f"belt {key}: 16 members from perturbed states (slip, stick, slip) within "
            f"{err:.1e} of the closed form")

    s = T.run(f"cfg/belt_lyapunov_{key}.yaml", f"belt_lyap_{key}.h5")
    l1, l2 = s["spectrum"]
    T.check(abs(l1 + C / 2) < 5e-3 and abs(l2 + C / 2) < 5e-3,
            f"belt {key}: Lyapunov {l1:.5f}, {l2:.5f} (-c/2 = {-C / 2}: the slip focus)")
    T.check(abs(l1 + l2 + C) < 1e-6, f"belt {key}: sum {l1 + l2:.9f} = trace -c")

with h5py.File("belt_ens_library.h5", "r") as a, h5py.File("belt_ens_source.h5", "r") as b:
    T.check(np.array_equal(a["members/final_state"][...], b["members/final_state"][...]),
            "belt: model.library and model.source give identical ensembles")

# --- linear3 and quadratic-map: two models in one library --------------------------------------
LIN = """job: {job}
model:
  {key}: {path}
  name: linear3
  params: {{a: -0.1, b: -0.3, c: -0.7, s: 2}}
initial:
  state: [1.0, -0.5, 0.25]
integrator:
  rtol: 1.0e-11
  atol: 1.0e-13
"""
LYAP = "lyapunov:\n  transient: 0\n  duration: 4000\n  interval: 1.0\n  blocks: 8\n"
LIN_JOBS = {
    "trajectory": "  t_end: 5\noutput:\n  samples: 11\n",
    "ensemble": "  t_end: 5\nensemble:\n  members: 12\n",
    "lyapunov": LYAP,
    "scan": LYAP + "scan:\n  quantity: lyapunov\n  x: {param: a, min: -0.25, max: -0.05, "
            "points: 3}\n",
}
A = np.array([[-0.1, 0, 0], [2, -0.3, 0], [0, 2, -0.7]])
for key, path in (("library", "../lib/linear.so"), ("source", "../models/linear.c")):
    for job, extra in LIN_JOBS.items():
        text = LIN.format(job=job, key=key, path=path) + extra
        if job == "ensemble":
            text = text.replace("state: [1.0, -0.5, 0.25]", "state: [1.0, -0.5, 0.25]\n  spread: 0.1")
        T.write(f"cfg/lin_{job}_{key}.yaml", text)
    T.run(f"cfg/lin_trajectory_{key}.yaml", f"lin_traj_{key}.h5")
    with h5py.File(f"lin_traj_{key}.h5", "r") as f:
        t, x = f["trajectory/t"][...], f["trajectory/state"][...]
    ref = np.array([expm(A * s) @ [1.0, -0.5, 0.25] for s in t])
    err = np.max(np.abs(x - ref))
    T.check(err < 1e-8, f"linear3 {key}: trajectory within {err:.1e} of expm(A t) x0")

    T.run(f"cfg/lin_ensemble_{key}.yaml", f"lin_ens_{key}.h5")
    with h5py.File(f"lin_ens_{key}.h5", "r") as f:
        x0, xf = f["members/initial_state"][...], f["members/final_state"][...]
    err = np.max(np.abs(xf - x0 @ expm(A * 5).T))
    T.check(err < 1e-8, f"linear3 {key}: 12 ensemble members within {err:.1e} of expm(A T) x0")

    s = T.run(f"cfg/lin_lyapunov_{key}.yaml", f"lin_lyap_{key}.h5")
    dev = np.max(np.abs(np.array(s["spectrum"]) - [-0.1, -0.3, -0.7]))
    T.check(dev < 0.003, f"linear3 {key}: Lyapunov {np.round(s['spectrum'], 4)} = eigenvalues "
                        f"(-0.1, -0.3, -0.7) within {dev:.1e}")

    T.run(f"cfg/lin_scan_{key}.yaml", f"lin_scan_{key}.h5")
    with h5py.File(f"lin_scan_{key}.h5", "r") as f:
        a_grid, lam = f["members/grid"][:, 0], f["members/spectrum"][...][:, 0]
    dev = np.max(np.abs(lam - a_grid))
    T.check(dev < 0.003, f"linear3 {key}: scan lambda_1(a) = a at a = {a_grid} within {dev:.1e}")

T.write("cfg/map.yaml", """job: lyapunov
model:
  source: ../models/linear.c
  name: quadratic-map
initial:
  state: [0.3]
lyapunov:
  transient: 100
  duration: 200000
  blocks: 10
""")
s = T.run("cfg/map.yaml", "map.h5")
T.check(abs(s["spectrum"][0] - np.log(2)) < 0.01,
        f"quadratic-map (no Jacobian given): lambda = {s['spectrum'][0]:.5f} (ln 2 = 0.69315)")

# a DEVS whose element is the plugin's own map (the engine's generic path)
DEVS = """job: lyapunov
model:
  {model}
  params: {{N: 10, q: 0.5, {r}: 3.9, steps: 100000, transient: 1000}}
devs:
  seed: 1
lyapunov:
  blocks: 10
"""
T.write("cfg/devs_plugin.yaml", DEVS.format(model="library: ../lib/linear.so\n  name: devs-growth",
                                            r="r"))
T.write("cfg/devs_builtin.yaml", DEVS.format(model="name: devs-logistic", r="mu"))
sp, sb = T.run("cfg/devs_plugin.yaml", "devs_plugin.h5"), T.run("cfg/devs_builtin.yaml", "devs_b.h5")
xs = np.linspace(0.11, 0.89, 400)
for _ in range(1000):
    xs = 3.9 * xs * (1 - xs)
acc = 0.0
for _ in range(5000):
    acc += np.log(np.abs(3.9 * (1 - 2 * xs))).mean()
    xs = 3.9 * xs * (1 - xs)
ref = 0.5 * acc / 5000
T.check(sp["lambda1"] == sb["lambda1"] and not sp["vectorised"],
        f"devs-growth plugin (generic path) = built-in devs-logistic bit for bit: "
        f"{sp['lambda1']!r}")
T.check(abs(sp["lambda1"] - ref) < 0.01,
        f"devs-growth: lambda_1 = {sp['lambda1']:.4f}, q times the element's orbit average "
        f"{ref:.4f}")

# --- codimension-2 and two-contact plugins ---------------------------------------------------
for x3 in (0.4, -0.3):
    T.write(f"cfg/c2_{x3}.yaml", "job: codim2-point\nmodel:\n  library: ../lib/contact.so\n"
            f"  name: antali-plugin\ninitial:\n  state: [0, 0, {x3}]\n")
    s = T.run(f"cfg/c2_{x3}.yaml", f"c2_{x3}.h5")
    dirs = sorted(d % (2 * np.pi) for d in s["limit_directions"])
    T.check(s["region"] == "sliding" and np.allclose(dirs, [0, np.pi], atol=1e-9)
            and np.allclose(sorted(s["R_limit"]), sorted([-1 + x3, -1 - x3]), atol=1e-12)
            and np.allclose(s["sliding_vector"], [0, 0, -2 * x3], atol=1e-12),
            f"antali-plugin (codim2) at x3 = {x3}: sliding, limit directions 0 and pi, "
            f"R = -1 +- x3, sliding vector (0, 0, {-2 * x3}) (Antali 2017, 2.35)")
T.write("cfg/c2_traj.yaml", "job: trajectory\nmodel:\n  library: ../lib/contact.so\n"
        "  name: antali-plugin\ninitial:\n  state: [0.5, 0.3, 0.2]\nintegrator:\n  t_end: 2\n")
T.write("cfg/c2_traj_builtin.yaml", "job: trajectory\nmodel:\n  name: antali-example\n"
        "initial:\n  state: [0.5, 0.3, 0.2]\nintegrator:\n  t_end: 2\n")
fm = open(T.CONFIGS + "/flowmeter-low-friction.yaml").read()
T.write("cfg/fm_builtin.yaml", fm)
T.write("cfg/fm_plugin.yaml", fm.replace("  name: flowmeter\n", "  library: ../lib/contact.so\n"
                                         "  name: flowmeter-plugin\n"))
for a, b, what in (("c2_traj", "c2_traj_builtin", "codim2 antali-plugin"),
                   ("fm_plugin", "fm_builtin", "two-contact flowmeter-plugin")):
    sa, sb = T.run(f"cfg/{a}.yaml", a + ".h5"), T.run(f"cfg/{b}.yaml", b + ".h5")
    with h5py.File(a + ".h5", "r") as fa, h5py.File(b + ".h5", "r") as fb:
        same = np.array_equal(fa["trajectory/state"][...], fb["trajectory/state"][...])
        recorded = (fa.attrs["model_plugin"] == "model library 'cfg/../lib/contact.so'"
                    and fa.attrs["model_plugin_code"].startswith("library bytes")
                    and "model_plugin" not in fb.attrs)
    T.check(same and sa["events"] == sb["events"] and recorded,
            f"{what}: trajectory and events identical to the built-in with the same equations")

# --- an impact plugin: a ball on a fixed floor, against the built-in with a table at rest ------
# From y = 0 at v0 = g/2 with r = 1/2 the flights (2 v0 / g) r^k accumulate at t = 2, and the
# ball rests on the floor for the last time unit.
T.write("cfg/floor.yaml", "job: trajectory\nmodel:\n  library: ../lib/impact.so\n"
        "  params: {r: 0.5}\ninitial:\n  state: [0, 4.905]\nintegrator:\n  t_end: 3\n"
        "output:\n  samples: 31\n")
T.write("cfg/floor_builtin.yaml", "job: trajectory\nmodel:\n  name: bouncing_ball\n"
        "  params: {r: 0.5}\ninitial:\n  state: [0, 4.905, 0]\nintegrator:\n  t_end: 3\n"
        "output:\n  samples: 31\n")
sa, sb = T.run("cfg/floor.yaml", "floor.h5"), T.run("cfg/floor_builtin.yaml", "floor_builtin.h5")
with h5py.File("floor.h5", "r") as fa, h5py.File("floor_builtin.h5", "r") as fb:
    close = np.allclose(fa["trajectory/state"][...], fb["trajectory/state"][:, :2], atol=1e-9)
T.check(close and sa["impacts"] == sb["impacts"] and sa["chattering_episodes"] == 1
        and abs(sa["stick_time"] - 1) < 1e-8 and sa["final_state"] == [0, 0],
        f"impact plugin floor-ball: {sa['impacts']} impacts, chattering into rest at t = 2 "
        f"(stick time {sa['stick_time']}), trajectory as the built-in bouncing_ball with A = 0")
r = twofold("model", "check", "cfg/floor.yaml")
T.check(r.returncode == 0 and "kind: impact system" in r.stdout
        and "ok    reset Jacobian of impact surface 0" in r.stdout,
        f"model check of the impact plugin: surfaces, resets and their derivatives ({r.returncode})")

# --- --resume continues only with the same model code ----------------------------------------
r = twofold("run", "cfg/belt_ensemble_library.yaml", "-o", "resume.h5", "--quiet", "--stop-after",
            "4", "--set", "ensemble.chunk=1")
T.check(r.returncode == 3, f"belt library: interrupted after 4 members (exit {r.returncode})")
shutil.copy("lib/belt.so", "lib/belt.so.orig")
cc("models/belt.c", "lib/belt.so", "-O0")  # the same model, other code
r = twofold("run", "cfg/belt_ensemble_library.yaml", "-o", "resume.h5", "--quiet", "--resume",
            "--set", "ensemble.chunk=1")
T.check(r.returncode == 2 and "the model's code differs from the file's" in r.stderr,
        f"--resume with a rebuilt library: refused, exit {r.returncode}")
shutil.copy("lib/belt.so.orig", "lib/belt.so")
r = twofold("run", "cfg/belt_ensemble_library.yaml", "-o", "resume.h5", "--quiet", "--resume",
            "--set", "ensemble.chunk=1")
with h5py.File("resume.h5", "r") as a, h5py.File("belt_ens_library.h5", "r") as b:
    same = np.array_equal(a["members/final_state"][...], b["members/final_state"][...])
T.check(r.returncode == 0 and same,
        "--resume with the original library: completes, equal to the uninterrupted run")

# parts of a split run must have run the same code to be merged
r0 = twofold("run", "cfg/belt_ensemble_library.yaml", "-o", "part0.h5", "--quiet", "--part", "0/2")
cc("models/belt.c", "lib/belt.so", "-O0")
r1 = twofold("run", "cfg/belt_ensemble_library.yaml", "-o", "part1.h5", "--quiet", "--part", "1/2")
shutil.copy("lib/belt.so.orig", "lib/belt.so")
r = twofold("merge", "merged.h5", "part0.h5", "part1.h5")
T.check(r0.returncode == 0 and r1.returncode == 0 and r.returncode == 2
        and "were run with different model code" in r.stderr and not os.path.exists("merged.h5"),
        f"merge of parts run with different builds of the library: refused, exit {r.returncode}")
r1 = twofold("run", "cfg/belt_ensemble_library.yaml", "-o", "part1.h5", "--quiet", "--part", "1/2",
             "--overwrite")
r = twofold("merge", "merged.h5", "part0.h5", "part1.h5")
with h5py.File("merged.h5", "r") as a, h5py.File("belt_ens_library.h5", "r") as b:
    same = np.array_equal(a["members/final_state"][...], b["members/final_state"][...])
T.check(r.returncode == 0 and same, "merge of parts run with the same library: one run's data")

# --- compiled once, shared by the ranks -------------------------------------------------------
libs = sorted(os.path.basename(p) for p in glob.glob("cache/*"))
T.check(len(libs) == 4 and all(p.endswith(".so") or p == libs[i - 1] + ".sha256"
                               for i, p in enumerate(libs)),
        f"cache holds one library and its manifest per source, no temporaries: {libs}")
shutil.rmtree("cache")
T.run("cfg/belt_ensemble_source.yaml", "belt_ens_2ranks.h5", ranks=2)
with h5py.File("belt_ens_2ranks.h5", "r") as a, h5py.File("belt_ens_source.h5", "r") as b:
    T.check(np.array_equal(a["members/final_state"][...], b["members/final_state"][...]),
            "belt source on 2 ranks (rank 0 compiles into an empty cache): same bits as 1 rank")
T.check(len(glob.glob("cache/*.so")) == 1 and len(glob.glob("cache/*")) == 2,
        "2 ranks compiled once: one library (and its manifest) in the cache")

# Concurrent runs on an empty cache: each compiles to its own temporary name and renames it
# into place, so whichever order they run in, each loads a whole library.
shutil.rmtree("cache")
procs = [subprocess.Popen([T.TWOFOLD, "run", "cfg/lin_trajectory_source.yaml", "-o",
                           f"concurrent{i}.h5", "--quiet"], stderr=subprocess.PIPE, text=True)
         for i in range(3)]
codes = [p.wait() for p in procs]
outs = []
for i in range(3):
    with h5py.File(f"concurrent{i}.h5", "r") as f:
        outs.append(f["trajectory/state"][...])
with h5py.File("lin_traj_source.h5", "r") as f:
    ref = f["trajectory/state"][...]
T.check(codes == [0, 0, 0] and all(np.array_equal(o, ref) for o in outs)
        and len(glob.glob("cache/linear-*.so")) == 1
        and sorted(glob.glob("cache/*")) == sorted(glob.glob("cache/linear-*.so") +
                                                   [glob.glob("cache/linear-*.so")[0] + ".sha256"]),
        f"3 concurrent runs on an empty cache: exits {codes}, same results, one library left")

# --- bad plugins --------------------------------------------------------------------------------
T.run("cfg/lin_ensemble_library.yaml", "keep.h5")
digest = hashlib.sha256(open("keep.h5", "rb").read()).hexdigest()


def bad(what, sets, *expect, status=2):
    """A refused plugin: exit 2 for the config's fault (a missing file, an unknown name), 5 for
    a library that cannot be set up as a model (src/base/error.h, TF_ERR_MODEL)."""
    args = ["run", "cfg/lin_ensemble_library.yaml", "-o", "keep.h5", "--overwrite", "--quiet"]
    for s in sets:
        args += ["--set", s]
    r = twofold(*args)
    missing = [e for e in expect if e not in r.stderr]
    T.check(r.returncode == status and not missing,
            f"{what}: exit {r.returncode}, message names {list(expect)}"
            + (f" -- missing {missing} in: {r.stderr.strip()}" if missing else ""))


# broken.c's BAD_ABI exports the header's number + 98
ABI = int(re.search(r"#define TWOFOLD_MODEL_ABI (\d+)", open(SRC + "/include/twofold/model.h").read())[1])
bad("wrong ABI number", ["model.library=lib/bad_abi.so"], "model.library", "lib/bad_abi.so",
    f"built for model ABI {ABI + 98}", f"loads model ABI {ABI} ",
    "'twofold model build SOURCE.c -o LIBRARY.so'", "recompile it against", status=5)
# the layout before the size fields (ABI 2): refused with how to rebuild, never read
bad("ABI 2", ["model.library=lib/abi_2.so"], "lib/abi_2.so", "built for model ABI 2",
    f"loads model ABI {ABI} ", "'twofold model build SOURCE.c -o LIBRARY.so'",
    "/twofold/model.h", status=5)
bad("no ABI symbol", ["model.library=lib/no_abi.so"], "lib/no_abi.so", "twofold_model_abi", status=5)
bad("kind/table mismatch", ["model.library=lib/kind_mismatch.so", "model.name=decay"],
    "kind is TF_MODEL_FILIPPOV but the table given is .flow", status=5)
bad("default outside bounds", ["model.library=lib/bad_default.so", "model.name=decay"],
    "params 'r': default 5 is outside its bounds [0, 2]", status=5)
T.write("cfg/two.yaml", "job: trajectory\nmodel:\n  library: ../lib/linear.so\n"
        "integrator:\n  t_end: 1\n")
r = twofold("run", "cfg/two.yaml", "-o", "keep.h5", "--overwrite")
T.check(r.returncode == 2 and "cfg/two.yaml:3: key 'model.library'" in r.stderr
        and "has 3 models (linear3, quadratic-map, devs-growth); choose one with model.name"
        in r.stderr,
        f"two models, no model.name: exit {r.returncode}, both named")
bad("unknown name", ["model.name=linear4"], "cfg/lin_ensemble_library.yaml:3", "no model 'linear4'")
bad("a model listed twice", ["model.library=lib/duplicate.so", "model.name=decay"],
    "two models are named 'decay'", status=5)
bad("missing file", ["model.library=lib/nothing.so"], "lib/nothing.so", "No such file")
bad("a directory", ["model.library=lib"], "'lib' is a directory")
bad("both keys", ["model.source=models/linear.c"], "model.source", "not both",
    "cfg/lin_ensemble_library.yaml:3")
bad("built-in name clash", ["model.library=lib/name_clash.so", "model.name=lorenz"],
    "model 'lorenz': the name clashes with the built-in model", status=5)
T.check(hashlib.sha256(open("keep.h5", "rb").read()).hexdigest() == digest,
        "the existing results file is untouched by every refused run")

T.write("cfg/syntax.yaml", "job: trajectory\nmodel:\n  source: ../models/syntax_error.c\n"
        "integrator:\n  t_end: 1\n")
r = twofold("run", "cfg/syntax.yaml", "-o", "syntax.h5", "--quiet")
T.check(r.returncode == 5 and "models/syntax_error.c:9:" in r.stderr and "error" in r.stderr
        and "cfg/syntax.yaml:3: key 'model.source'" in r.stderr and not os.path.exists("syntax.h5"),
        f"syntax error: exit {r.returncode}, the compiler's file:line and the config's key shown")

# twofold model build: the source compiled as model.source would be, checked before it is
# written; a failed build leaves an existing library as it was
r = twofold("model", "build", "models/belt.c", "-o", "lib/built.so")
T.check(r.returncode == 0 and "belt" in r.stdout and os.path.exists("lib/built.so"),
        f"model build: exit {r.returncode}, {r.stdout.strip()!r} {r.stderr.strip()[-200:]}")
T.write("cfg/built.yaml", "job: trajectory\nmodel:\n  library: ../lib/built.so\n"
        "integrator: {t_end: 2}\noutput: {samples: 5}\n")
T.write("cfg/built_src.yaml", "job: trajectory\nmodel:\n  source: ../models/belt.c\n"
        "integrator: {t_end: 2}\noutput: {samples: 5}\n")
ra, rb = twofold("run", "cfg/built.yaml", "-o", "built.h5", "--quiet", "--overwrite"), \
    twofold("run", "cfg/built_src.yaml", "-o", "built_src.h5", "--quiet", "--overwrite")
with h5py.File("built.h5") as a, h5py.File("built_src.h5") as b:
    T.check(ra.returncode == 0 and rb.returncode == 0 and
            np.array_equal(a["trajectory/state"][...], b["trajectory/state"][...]),
            "a built library runs bit for bit as its source does")
before = hashlib.sha256(open("lib/built.so", "rb").read()).hexdigest()
r = twofold("model", "build", "models/syntax_error.c", "-o", "lib/built.so")
T.check(r.returncode == 2 and "models/syntax_error.c:9:" in r.stderr and "does not compile" in r.stderr,
        f"model build of a syntax error: exit {r.returncode}, the compiler's file:line shown")
T.write("models/not_a_model.c", "int answer = 42;\n")
r2 = twofold("model", "build", "models/not_a_model.c", "-o", "lib/built.so")
T.check(r2.returncode == 2 and "twofold_model_abi" in r2.stderr,
        f"model build of a file without TWOFOLD_MODELS: exit {r2.returncode}, {r2.stderr.strip()[:160]}")
T.check(hashlib.sha256(open("lib/built.so", "rb").read()).hexdigest() == before
        and not glob.glob("lib/built.so.tmp*"),
        "failed builds leave the existing library as it was, and no temporary file")

T.write("cfg/nan.yaml", """job: ensemble
model:
  library: ../lib/nan_field.so
initial:
  state: [1.0, 0.0]
  spread: 0.01
integrator:
  t_end: 3
  rtol: 1.0e-11
  atol: 1.0e-13
ensemble:
  members: 40
""")
s = T.run("cfg/nan.yaml", "nan.h5")
with h5py.File("nan.h5", "r") as f:
    x0, xf = f["members/initial_state"][...], f["members/final_state"][...]
    status = f["members/status"][...]
above = x0[:, 0] > 1.0
ref_x = np.exp(-3) * (x0[:, 0] + x0[:, 1] ** 2 * (1 - np.exp(-3)))
ok_err = np.max(np.abs(xf[~above, 0] - ref_x[~above]))
T.check(np.all(status[above] == 2) and np.all(status[~above] == 1) and 0 < above.sum() < 40
        and ok_err < 1e-8,
        f"NaN field: the {above.sum()} members starting at x > 1 are 'nonfinite', the other "
        f"{(~above).sum()} finish within {ok_err:.1e} of the exact solution")

# --- model check and models --model-library ---------------------------------------------------
for cfg in ("cfg/belt_trajectory_source.yaml", "cfg/lin_lyapunov_library.yaml"):
    r = twofold("model", "check", cfg)
    T.check(r.returncode == 0 and "result: ok" in r.stdout and "FAIL" not in r.stdout,
            f"model check {cfg}: exit {r.returncode}")
r = twofold("model", "check", "cfg/nan.yaml", "--set", "model.library=lib/wrong_jacobian.so",
            "--set", "initial.state=[1, 0.5]")
T.check(r.returncode == 1 and "FAIL  jacobian" in r.stdout and "entry [0][1]: given 0.5, "
        "central differences 1" in r.stdout,
        f"model check with a wrong Jacobian entry: FAIL, exit {r.returncode}")
r = twofold("model", "check", "cfg/nan.yaml", "--set", "initial.state=[2, 0]")
T.check(r.returncode == 1 and "FAIL  field f(t, x)" in r.stdout,
        f"model check with a NaN field at the initial state: FAIL, exit {r.returncode}")
r = twofold("model", "check", "cfg/nan.yaml", "--set", "model.library=lib/bad_abi.so")
T.check(r.returncode == 2 and f"model ABI {ABI + 98}" in r.stderr,
        f"model check of a bad plugin: exit {r.returncode}")
r = twofold("models", "--model-library", "lib/linear.so")
T.check(r.returncode == 0 and r.stdout.startswith("linear3") and "quadratic-map" in r.stdout,
        "models --model-library lists the library's models")
T.finish()
