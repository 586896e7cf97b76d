"""exit_statuses.py — `twofold run` exits by the kind of failure (src/base/error.h, README.md).

Each failure is made from a config that otherwise runs (configs/harmonic.yaml, the Jeffrey
oscillator's sticking config, the Henon map's spectrum), and each must leave no results file:
  2  a config error: an unknown key, a parameter outside its bounds, a map's Lyapunov interval
     below one iteration (refused when the spectrum started, with exit 1, before it was read
     with its key);
  5  the model cannot be set up: a model refusing its parameters (jeffrey-oscillator: beta = 0
     needs eps > 0), a model.library that is not a shared object;
  6  the output cannot be written: a results file in /proc/self (no new files there, even for
     root), and, when not run as root, a directory without write permission;
  0  the unchanged config, as the control.
The --json line says "status": "error" with the message for every failure.
"""
import json
import os
import subprocess

import testlib as T

T.setup()
HARMONIC = os.path.join(T.CONFIGS, "harmonic.yaml")
JEFFREY = os.path.join(T.CONFIGS, "jeffrey-sticking.yaml")
HENON = os.path.join(T.CONFIGS, "henon-spectrum.yaml")
T.write("garbage.so", "not a shared object\n")
os.mkdir("locked")
os.chmod("locked", 0o500)

cases = [
    ("control", HARMONIC, "out.h5", [], 0, None),
    ("unknown key", HARMONIC, "out.h5", ["integrator.t_ned=1"], 2, "unknown key 'integrator.t_ned'"),
    ("parameter outside its bounds", HARMONIC, "out.h5", ["model.params.omega=-1"], 2, "omega"),
    ("model refuses its parameters", JEFFREY, "out.h5",
     ["model.params.beta=0", "model.params.eps=0"], 5, "beta = 0 needs eps > 0"),
    ("library that does not load", HARMONIC, "out.h5",
     [f"model.library={os.path.abspath('garbage.so')}", "model.name=harmonic"], 5,
     "cannot be loaded"),
    ("output the file system refuses", HARMONIC, "/proc/self/out.h5", [], 6,
     "cannot write '/proc/self/out.h5'"),
    ("a map's Lyapunov interval below one iteration", HENON, "out.h5",
     ["lyapunov.interval=0.3", "lyapunov.duration=100"], 2, "key 'lyapunov.interval'"),
]
if os.geteuid() != 0:  # root writes through the permission bits
    cases.append(("directory without write permission", HARMONIC, "locked/out.h5", [], 6,
                  "permission denied in its directory"))

for what, config, out, sets, want, needle in cases:
    if os.path.exists("out.h5"):
        os.remove("out.h5")
    cmd = [T.TWOFOLD, "run", config, "-o", out, "--json"]
    for s in sets:
        cmd += ["--set", s]
    res = subprocess.run(cmd, capture_output=True, text=True)
    lines = res.stdout.strip().splitlines()
    summary = json.loads(lines[-1]) if lines else {}
    if want == 0:
        T.check(res.returncode == 0 and summary.get("status") == "complete",
                f"{what}: exit {res.returncode} {res.stderr.strip()[:300]}")
        continue
    T.check(res.returncode == want and needle in res.stderr
            and summary.get("status") == "error" and needle in summary.get("error", "")
            and not os.path.exists(out if out.startswith("/") else os.path.abspath(out)),
            f"{what}: exit {res.returncode} (want {want}), nothing written, the message says "
            f"{needle!r}: {res.stderr.strip()[:300]!r} {summary}")
os.chmod("locked", 0o700)

# `twofold slurm` says what kind of failure too: a directory for its scripts that cannot be
# made is an output that cannot be written (6; 1 before).
res = subprocess.run([T.TWOFOLD, "slurm", HARMONIC, "-o", "out.h5", "--dir", "/proc/self/x/y"],
                     capture_output=True, text=True)
T.check(res.returncode == 6 and "cannot create '/proc/self/x'" in res.stderr,
        f"slurm, scripts' directory refused: exit {res.returncode} (want 6): {res.stderr.strip()!r}")
T.finish()
