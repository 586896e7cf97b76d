"""resume_guard.py — --resume continues only the same computation, one writer at a time, and
every refusal says plainly what is wrong.

  - a value written differently (t_end 4 vs 4.0) is the same setting; a changed one is refused
    naming the key, its old and new value and where it is set;
  - a setting added since the file was written (the wheel's parameter continuation), at its
    default, resumes; set to another value it is refused;
  - every config section a job reads is in its fingerprint: a Lyapunov scan resumed with a
    changed codim2 key is refused (the codim2 section was once left out);
  - --resume --part K/N of a whole run's file (and the reverse) is refused, the file untouched;
  - a second run on a file being written is refused naming the writer's PID; the lock of a
    killed run is stale and taken over;
  - a missing directory, a directory at the output path, a two-fold search that fails and a
    Lyapunov trajectory that fails are named as such (exit 2), a read-only file system too
    (exit 6: the output cannot be written)."""
import os
import signal
import subprocess

import h5py
import testlib as T

T.setup()
SMOKE = os.path.join(T.CONFIGS, "smoke.yaml")
SMALL = ["--set", "ensemble.members=400", "--set", "integrator.t_end=1.0"]


def twofold(*args, stdin=None):
    return subprocess.run([T.TWOFOLD, *args], capture_output=True, text=True)


def expect(r, code, *words, what):
    ok = r.returncode == code and all(w in r.stderr for w in words)
    T.check(ok, f"{what}: exit {r.returncode}, {r.stderr.strip()[-400:]!r}")


def h5attrs(path):
    with h5py.File(path, "r") as f:
        # a list of names (state_names) compares as a list
        return {k: v.tolist() if hasattr(v, "tolist") else v for k, v in f.attrs.items()}, \
            int(f["members/done"][()].sum())


# --- values, not spelling --------------------------------------------------------------------
twofold("run", SMOKE, "-o", "ref.h5", "--quiet", *SMALL)
expect(twofold("run", SMOKE, "-o", "a.h5", "--quiet", *SMALL, "--stop-after", "100"), 3,
       what="interrupted after 100 members")
r = twofold("run", SMOKE, "-o", "a.h5", "--quiet", "--resume", "--set", "ensemble.members=400",
            "--set", "integrator.t_end=1")
expect(r, 0, what="t_end 1 resumes a file written with t_end 1.0")
T.check(subprocess.run([os.environ["PYTHON"],
                        os.path.join(os.path.dirname(__file__), "h5compare.py"), "a.h5", "ref.h5"],
                       capture_output=True, text=True).returncode == 0,
        "the resumed file equals the uninterrupted run")
expect(twofold("run", SMOKE, "-o", "b.h5", "--quiet", *SMALL, "--stop-after", "100"), 3,
       what="second file interrupted")
before = h5attrs("b.h5")
r = twofold("run", SMOKE, "-o", "b.h5", "--quiet", "--resume", "--set", "ensemble.members=400",
            "--set", "integrator.t_end=2")
expect(r, 2, "integrator.t_end", "1.0", "2", "--set integrator.t_end=2",
       what="a changed t_end is refused naming the key, both values and where it is set")
T.check(h5attrs("b.h5") == before, "the refused resume left the file as it was")

# --- a setting added since the file was written ---------------------------------------------
# A file written before the wheel had its parameter `continuation` lists every setting its run
# read but that one (its config as run, its fingerprint, the model's attributes): it resumes,
# since the parameter's default keeps what that run did; the parameter set otherwise is refused.
WHEEL = os.path.join(T.CONFIGS, "wheel-fig5.yaml")
WSMALL = ["--set", "ensemble.members=40", "--set", "integrator.t_end=20"]
twofold("run", WHEEL, "-o", "wref.h5", "--quiet", *WSMALL)
for name in ("w.h5", "w2.h5"):
    expect(twofold("run", WHEEL, "-o", name, "--quiet", *WSMALL, "--stop-after", "10"), 3,
           what="wheel interrupted after 10 members")
    with h5py.File(name, "r+") as f:
        for attr, line in (("config", "    continuation: 0\n"), ("fingerprint", "  continuation: 0\n")):
            text = f.attrs[attr]
            text = text.decode() if isinstance(text, bytes) else text
            T.check(line in text, f"{attr} lists the parameter")
            f.attrs[attr] = text.replace(line, "")
        del f["model"].attrs["continuation"]
r = twofold("run", WHEEL, "-o", "w.h5", "--quiet", *WSMALL, "--resume")
expect(r, 0, what="a file without a parameter added since resumes at its default")
T.check(subprocess.run([os.environ["PYTHON"],
                        os.path.join(os.path.dirname(__file__), "h5compare.py"), "w.h5", "wref.h5"],
                       capture_output=True, text=True).returncode == 0,
        "the resumed wheel file equals the uninterrupted run")
r = twofold("run", WHEEL, "-o", "w2.h5", "--quiet", *WSMALL, "--resume", "--set",
            "model.params.continuation=1")
expect(r, 2, "model.params.continuation", "absent", "--set model.params.continuation=1",
       what="the added parameter set to another value is refused")

# --- every section read is fingerprinted (the Lyapunov scan and codim2) ------------------------
ball = T.write("ball-scan.yaml", """job: scan
model:
  name: ball-pool
  params: {m: 0.17, r: 0.028575, mu: 0.2, g: 9.81, K: 0.05}
initial: {speed: 2.0, direction_deg: 30.0}
integrator: {rtol: 1.0e-10, atol: 1.0e-12}
codim2: {sigma_tol: 1.0e-8}
lyapunov: {transient: 2, duration: 10, blocks: 5, interval: 0.1}
scan:
  x: {param: K, min: 0.02, max: 0.1, points: 3}
""")
expect(twofold("run", ball, "-o", "k.h5", "--quiet", "--stop-after", "1"), 3,
       what="Lyapunov scan interrupted after one point")
r = twofold("run", ball, "-o", "k.h5", "--quiet", "--resume", "--set", "codim2.sigma_tol=1.0e-7")
expect(r, 2, "codim2.sigma_tol", what="a changed codim2 key refuses the resumed Lyapunov scan")

# --- splits ----------------------------------------------------------------------------------
r = twofold("run", SMOKE, "-o", "b.h5", "--quiet", *SMALL, "--resume", "--part", "1/2")
expect(r, 2, "whole run", "--part 1/2", what="--resume --part 1/2 of a whole run's file")
T.check("parts" not in h5attrs("b.h5")[0], "no part attributes were written to it")
expect(twofold("run", SMOKE, "-o", "p.h5", "--quiet", *SMALL, "--part", "0/2", "--stop-after",
               "50"), 3, what="part 0/2 interrupted")
expect(twofold("run", SMOKE, "-o", "p.h5", "--quiet", *SMALL, "--resume"), 2, "part 0/2",
       what="--resume without --part of a part file")
expect(twofold("run", SMOKE, "-o", "p.h5", "--quiet", *SMALL, "--resume", "--part", "1/2"), 2,
       "part 0/2", what="--resume of part 0/2 as part 1/2")

# --- one writer --------------------------------------------------------------------------------
p = subprocess.Popen([T.TWOFOLD, "run", SMOKE, "-o", "b.h5", *SMALL, "--resume", "--progress",
                      "none", "--pause-after", "150"], stderr=subprocess.PIPE, text=True)
paused = p.stderr.readline()
r = twofold("run", SMOKE, "-o", "b.h5", "--quiet", *SMALL, "--resume")
expect(r, 2, f"process {p.pid}", "b.h5.lock", what="a second --resume while the first runs")
p.send_signal(signal.SIGUSR1)
p.communicate()
T.check("paused" in paused and p.returncode == 3, f"the first run stopped as asked: {p.returncode}")
with h5py.File("b.h5", "r") as f:  # --pause-after counts the members done before the resume
    hold = int(f["members/done"][...].sum()) + 10
p = subprocess.Popen([T.TWOFOLD, "run", SMOKE, "-o", "b.h5", *SMALL, "--resume", "--progress",
                      "none", "--pause-after", str(hold)], stderr=subprocess.PIPE, text=True)
p.stderr.readline()
p.kill()
p.communicate()
T.check(os.path.exists("b.h5.lock"), "a killed run leaves its lock file")
expect(twofold("run", SMOKE, "-o", "b.h5", "--quiet", *SMALL, "--resume"), 0,
       what="the stale lock of a killed run is taken over and the run completes")
T.check(not os.path.exists("b.h5.lock"), "the lock file is removed at the end")

# --- plain messages ----------------------------------------------------------------------------
expect(twofold("run", SMOKE, "-o", "nowhere/x.h5", "--quiet", *SMALL), 2,
       "directory 'nowhere' does not exist", what="missing directory")
os.mkdir("adir.h5")
for extra in ([], ["--overwrite"], ["--resume"]):
    expect(twofold("run", SMOKE, "-o", "adir.h5", "--quiet", *SMALL, *extra), 2,
           "is a directory", what=f"a directory as output {' '.join(extra)}")
if os.geteuid() == 0:
    os.mkdir("ro")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", "ro"]).returncode == 0:
        try:
            expect(twofold("run", SMOKE, "-o", "ro/x.h5", "--quiet", *SMALL), 6,
                   "read-only file system", what="read-only file system")
        finally:
            subprocess.run(["umount", "ro"])
sing = T.write("sing.yaml", """job: singularity
model: {name: wheel}
singularity:
  guess: [0.5, 0.3, -2]
  max_iterations: 1
""")
expect(twofold("run", sing, "-o", "s.h5", "--quiet"), 2, "sing.yaml:4", "singularity.guess",
       "did not converge", what="a two-fold search that does not converge names its keys")
T.check(not os.path.exists("s.h5"), "and writes nothing")
lyap = T.write("lyap.yaml", open(os.path.join(T.CONFIGS, "lorenz-spectrum.yaml")).read())
expect(twofold("run", lyap, "-o", "l.h5", "--quiet", "--set", "integrator.max_steps=1000"), 2,
       "integrator.max_steps", "max_steps", what="a Lyapunov run out of steps names the key")
# --- a file whose tables declare more rows than the run has ----------------------------------
# (parallel HDF5 allocates a table's whole storage when it opens it for writing: a crafted
# 10^12-row table would make --resume write terabytes; the write size is capped here so a
# regression fails instead of filling the disk)
import resource  # noqa: E402

expect(twofold("run", SMOKE, "-o", "c.h5", "--quiet", *SMALL, "--stop-after", "50"), 3,
       what="a run to craft from")
with h5py.File("c.h5", "r") as src, h5py.File("crafted.h5", "w") as dst:
    for k, v in src.attrs.items():
        dst.attrs[k] = v
    for n, obj in src.items():
        src.copy(obj, dst, name=n)
    del dst["members/final_state"]
    dst["members"].create_dataset("final_state", shape=(10**12, 3), maxshape=(None, 3),
                                  chunks=(64, 3), dtype="f8")
size = os.path.getsize("crafted.h5")
r = subprocess.run([T.TWOFOLD, "run", SMOKE, "-o", "crafted.h5", "--quiet", *SMALL, "--resume"],
                   capture_output=True, text=True,
                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (50 << 20, 50 << 20)))
expect(r, 2, "/members/final_state", "1000000000000 rows", "400",
       what="--resume of a file declaring 10^12 rows")
T.check(os.path.getsize("crafted.h5") == size, "and writes nothing to it")
T.finish()
