"""failures.py — no silent failures: failed members are said, judged and shown.

A model.equations flow x' = -x sqrt(1 - x), y' = x: its field is NaN wherever x > 1, and from
x0 <= 1 the solution stays in x <= 1 (x' <= 0 on 0 < x <= 1, x' > 0 for x < 0, x = 0 and x = 1
are rest points), so exactly the members drawn with x0 > 1 end nonfinite.  Which members those
are follows from the initial states alone (/members/initial_state, the drawn inputs), so
every expectation below is computed here from them, not from the statuses the engine wrote
(x0 = 1.2 + 0.5 z: about two thirds fail):

* the end of the run names the failed members on stderr, per status with the first five ids;
  --quiet leaves that warning out (--progress none does not); exit 0 while no more than run.max_failed_fraction failed;
* the limit is exact: exit 4 at a fraction one member below the failed share, exit 0 at it;
  from x0 = 2 every member fails and the run exits 4 whatever the fraction, under --quiet
  too, the results file still complete, `twofold info` saying "complete: yes (... finished;
  N failed: ...)";
* 2 ranks give the same verdict and ids; a run stopped by --stop-after exits 3 and its resume
  judges all members; the key changes no result, so --resume takes another value;
* sign() of the state: refused in a Filippov model's slip field (exit 2, file:line and key),
  in `twofold model check` too; a flow gets a warning naming line, key and 'switching:'.
"""
import json
import re
import subprocess

import h5py
import numpy as np

import testlib as T

T.setup()

MEMBERS = 200
FLOW = f"""job: ensemble
model:
  equations:
    state: [x, y]
    field:
      x: "-x*sqrt(1 - x)"
      y: "x"
initial: {{state: [1.2, 0], spread: 0.5}}
integrator: {{t_end: 1}}
ensemble: {{members: {MEMBERS}, seed: 3}}
"""
T.write("nan.yaml", FLOW)


def run(out, *args, ranks=1):
    cmd = [T.TWOFOLD, "run", "nan.yaml", "-o", out, "--overwrite", "--progress", "none", *args]
    if ranks > 1:
        cmd = [T.MPIEXEC, "-n", str(ranks)] + cmd
    return subprocess.run(cmd, capture_output=True, text=True)


def twofold(*args):
    return subprocess.run([T.TWOFOLD, *args], capture_output=True, text=True)


def listing(ids):
    """The engine's per-status text, written from the expected ids."""
    named = ", ".join(str(i) for i in ids[:5])
    return f"nonfinite {len(ids)} ({'first' if len(ids) > 5 else 'members'}: {named}" \
           f"{', ...' if len(ids) > 5 else ''})"


# --- the default: most members fail, the run says so and exits 0 -------------------------------
r = run("nan.h5")
with h5py.File("nan.h5", "r") as f:
    x0 = f["members/initial_state"][:, 0]
    status = f["members/status"][...]
bad = np.flatnonzero(x0 > 1.0)
n_bad = len(bad)
T.check(MEMBERS / 2 < n_bad < MEMBERS and bad[4] > 5, f"the draw gives failing and succeeding members: {n_bad} of {MEMBERS} "
        "start at x0 > 1")
T.check(np.array_equal(np.flatnonzero(status == 2), bad) and np.all(status[x0 <= 1.0] == 1),
        "exactly the members with x0 > 1 are nonfinite, the others ok")
text = f"{n_bad} of {MEMBERS} members failed: {listing(bad)}"
T.check(r.returncode == 0 and f"twofold: warning: {text} (results in 'nan.h5'" in r.stderr,
        f"below the limit: exit {r.returncode}, stderr says '{text}': {r.stderr.strip()}")
q = run("nanq.h5", "--quiet")
T.check(q.returncode == 0 and "failed" not in q.stderr, f"--quiet leaves the warning out: {q.stderr!r}")
info = twofold("info", "nan.h5")
T.check(f"complete: yes ({MEMBERS} of {MEMBERS} members finished; {n_bad} failed: {listing(bad)})"
        in info.stdout, f"info says complete means finished: {info.stdout.splitlines()[8:10]}")
T.check(f"by status: ok {MEMBERS - n_bad} nonfinite {n_bad}" in info.stdout, "info counts by status")

# --- run.max_failed_fraction: exact at the limit ------------------------------------------------
share = n_bad / MEMBERS
at = run("at.h5", "--set", f"run.max_failed_fraction={share!r}")
below = run("below.h5", "--set", f"run.max_failed_fraction={(n_bad - 1) / MEMBERS!r}", "--json")
T.check(at.returncode == 0, f"{n_bad} failed at max_failed_fraction {share}: not more, exit {at.returncode}")
with h5py.File("below.h5", "r") as f:
    same = np.array_equal(f["members/status"][...], status) and f.attrs["complete"] == 1
js = json.loads(below.stdout.strip().splitlines()[-1])
T.check(below.returncode == 4 and "that is more than run.max_failed_fraction" in below.stderr
        and same and js["status"] == "members_failed" and js["failed"] == n_bad
        and js["failures"].startswith(text),
        f"one member over the limit: exit {below.returncode}, file complete and the same, JSON "
        f"{js['status']}: {below.stderr.strip()}")

# --- every member fails: exit 4 at any fraction, said under --quiet too ---------------------------
allr = run("all.h5", "--quiet", "--set", "initial.state=[2, 0]", "--set", "initial.spread=0", "--set", "run.max_failed_fraction=1")
everyone = np.arange(MEMBERS)
want = f"twofold: error: {MEMBERS} of {MEMBERS} members failed: {listing(everyone)}; no member succeeded"
T.check(allr.returncode == 4 and want in allr.stderr,
        f"x0 = 2 for all: exit {allr.returncode}, '{want}' in {allr.stderr.strip()!r}")
info = twofold("info", "all.h5")
with h5py.File("all.h5", "r") as f:
    whole = f.attrs["complete"] == 1 and f["members/done"][...].all() and (f["members/status"][...] == 2).all()
T.check(whole and f"complete: yes ({MEMBERS} of {MEMBERS} members finished; {MEMBERS} failed: "
        f"{listing(everyone)})" in info.stdout, "the file of the failed run is complete and says so")

# --- ranks, interruption and resume -----------------------------------------------------------
two = run("two.h5", "--set", f"run.max_failed_fraction={(n_bad - 1) / MEMBERS!r}", ranks=2)
T.check(two.returncode == 4 and text in two.stderr and two.stderr.count("members failed") == 1,
        f"2 ranks: the same verdict and ids, said once: {two.stderr.strip()}")
ALL_FAIL = ("--set", "ensemble.chunk=10", "--set", "initial.state=[2, 0]", "--set", "initial.spread=0")
stop = run("part.h5", "--stop-after", "50", *ALL_FAIL)
res = subprocess.run([T.TWOFOLD, "run", "nan.yaml", "-o", "part.h5", "--resume", "--progress", "none",
                      *ALL_FAIL, "--set", "run.max_failed_fraction=0.5"], capture_output=True, text=True)
T.check(stop.returncode == 3 and res.returncode == 4 and want in res.stderr,
        f"stopped: exit {stop.returncode} (interrupted, not judged); resumed with another limit: exit "
        f"{res.returncode}, all {MEMBERS} members judged: {res.stderr.strip()}")

# --- sign() of the state ------------------------------------------------------------------------
T.write("slip.yaml", """job: ensemble
model:
  equations:
    state: [x, v]
    switching: v - 0.2
    slip:
      plus: {x: v, v: -x - 1}
      minus:
        x: v
        v: -x + sign(x - 0.5)
integrator: {t_end: 1}
""")
for cmd in (("check", "slip.yaml"), ("model", "check", "slip.yaml"), ("run", "slip.yaml", "-o", "s.h5")):
    c = twofold(*cmd)
    T.check(c.returncode == 2 and "slip.yaml:10: key 'model.equations.slip.minus.v': column 6: "
            "sign(x - 0.5) jumps" in c.stderr and "{s1: v - 0.2, s2: x - 0.5}" in c.stderr,
            f"twofold {' '.join(cmd)}: exit {c.returncode}: {c.stderr.strip()}")
T.write("flow.yaml", """job: ensemble
model:
  equations:
    state: [x, v]
    field:
      x: v
      v: -x - 0.3*sign(v)
integrator: {t_end: 1}
ensemble: {members: 2}
""")
c = twofold("check", "flow.yaml")
warn = re.findall(r"twofold: warning: flow.yaml:7: key 'model.equations.field.v': column 10: "
                  r"sign\(v\) makes the field jump.*'switching: v'", c.stderr)
T.check(c.returncode == 0 and len(warn) == 1, f"a flow's sign(v): accepted with one warning: {c.stderr.strip()}")
T.finish()
