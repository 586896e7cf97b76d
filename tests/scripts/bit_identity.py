#!/usr/bin/python3
"""bit_identity.py — every config in configs/, shortened, run by two builds of twofold: the
results files must be bitwise identical (every dataset's type, shape and bytes, every
attribute, recursively), the `--json` summaries and `twofold info` equal, and a config that
fails must fail on both builds with the same exit status and message.  The documented
migrations of the results layout (MIGRATIONS, CHANGELOG.md) are the only differences allowed.

  bit_identity.py [--before REV] [--after REV]       build both (default: renovation-base and
                                                      the working tree) and compare
  bit_identity.py --before-bin A --after-bin B        compare two ready binaries
  bit_identity.py ... --timing [--pairs N]            also time the set as alternated pairs
  bit_identity.py --self-test                         the comparator sees a difference it must
                                                      see (CTest renovation.bit_identity.py)

Exit status 0 only if every case is identical (and, with --self-test, the planted differences
were all found).  Builds are cached by commit under --cache (default ~/.cache/twofold-bit-identity).
"""
import argparse
import dataclasses
import fcntl
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# ---------------------------------------------------------------------------------------------
# What may differ.  Only these attributes (by path; `*` matches any group) and these keys of
# the `--json` summary are left out of the comparison; no dataset ever is.
EXCLUDED_ATTRIBUTES = {
    "/twofold_version": "the build's version string (git describe of the tree it was built from)",
    "/created": "the date and time the file was written",
    "/model_plugin_code": "the identity of a plugin's code (a hash of its source, the compiler's "
                          "flags and the model ABI number): each build compiles its own tree's "
                          "tests/plugins/, ported with the model ABI",
    "/model_plugin": "the compiled source a plugin came from: for model.equations the generated "
                     "file, named by a hash of its text, which the model ABI's port changed",
}
EXCLUDED_JSON_KEYS = {
    "version": "the build's version string, as /twofold_version",
    "wall_seconds": "wall-clock time of the run",
    "process_seconds": "CPU time of the run",
    "members_per_second": "throughput, a wall-clock time",
    "flush_rounds": "collective flushes, started every output.flush_interval of wall-clock time",
    "compute_seconds": "wall-clock time of the computation",
    "devs_seconds": "wall-clock time of the DEVS steps",
    "element_updates_per_second": "DEVS throughput, a wall-clock time",
    "element_updates_per_cpu_second": "DEVS throughput, a CPU time",
    "element_updates_per_second_per_rank": "DEVS throughput, a wall-clock time",
}
# `twofold info` lines that print an excluded attribute ("name: value")
EXCLUDED_INFO_PREFIXES = tuple(p.rsplit("/", 1)[-1] + ":" for p in EXCLUDED_ATTRIBUTES)

# The documented migrations of the results layout (CHANGELOG.md, "One results layout"): a
# file before and one after that differ only by these hold the same results.  Each is checked
# exactly as stated; any other difference, in these objects too, is still a difference.
MIGRATIONS = {
    "names": "an attribute listing names (NAME_LISTS) was one comma-joined string and is an "
             "array of strings: the same when the array joined with ',' is the string",
    "blocks": "/lyapunov/blocks and /lyapunov/running were flat (blocks * exponents, block "
              "after block) and are blocks x exponents: the same type and bytes, and the "
              "flat length is the product of the new shape",
    "exits": "/members/exits of a model that never draws was all NaN and is absent: then "
             "/members/checksum before is FNV-1a 64 over id, status and the columns of its "
             "`columns` attribute with that all-NaN row, the attribute `columns` after is the "
             "one before without exits, and `twofold info` lists /members/exits before only",
    "twofold_visits": "/members/twofold_visits of a model without a nondeterministic two-fold "
                      "was all zero and is absent, as is the key twofold_visits (0) of the "
                      "--json summary: the checksum and `columns` as for exits (the columns "
                      "DROPPED, all-NaN or all-zero, put back before), `twofold info` lists "
                      "/members/twofold_visits before only",
    "merged_from": "the root attribute merged_from (LINE_LISTS) was one string, the parts' "
                   "paths joined with newlines, and is an array of strings: the same when the "
                   "array joined with '\\n' is the string",
    "params": "a model parameter added since (ADDED_PARAMS) is absent before; after, the "
              "attribute /model/NAME holds its default and the config as run (/config) and its "
              "fingerprint (/fingerprint) list `NAME: DEFAULT` among the model's params: the "
              "same when those lines are taken out",
}
# Model parameters added since, by model, with the default that keeps the results before.
ADDED_PARAMS = {"wheel": {"continuation": "0"}}
ADDED_PARAM_TEXTS = ["/config", "/fingerprint"]
# The member columns a migration drops where they hold nothing: name -> test of the table
# before (all NaN, all zero).
DROPPED = {"exits": lambda x: x.dtype.kind == "f" and bool(np.isnan(x).all()),
           "twofold_visits": lambda x: x.dtype.kind in "iu" and not x.any()}
# The JSON keys a migration drops where they hold nothing (value before).
DROPPED_JSON = {"twofold_visits": 0}
NAME_LISTS = ["/state_names", "/output_names", "/event_kinds", "/derived_names",
              "/class_names", "/members/events/kinds", "/members/event_log/kinds",
              "/members/event_log/fields", "/members/exits/fields", "/trajectory/events/kinds",
              "/members/checksum/columns"]
LINE_LISTS = ["/merged_from"]
BLOCK_DATASETS = ["/lyapunov/blocks", "/lyapunov/running"]

# ---------------------------------------------------------------------------------------------
# The shortened set.  Each job type's rule keeps the config's own route (model, method, events,
# estimator) and cuts its size; PER_CONFIG adds or overrides keys for the long ones.  All of it
# is chosen so that the whole set takes a few minutes per binary on 2 cores.


def job_rule(cfg):
    """--set overrides that shorten a config of this job type (a dict key -> value)."""
    job = cfg.get("job")
    sets = {}
    model = cfg.get("model", {}) or {}
    params = model.get("params", {}) or {}
    devs = str(model.get("name", "")).startswith("devs-")
    if devs:  # DEVS: fewer steps and elements
        sets.update({"model.params.steps": min(params.get("steps", 10000), 400),
                     "model.params.transient": min(params.get("transient", 1000), 100)})
        if "N" in params:
            sets["model.params.N"] = min(params["N"], 100)
    lyap = cfg.get("lyapunov", {}) or {}
    quantity = (cfg.get("scan") or {}).get("quantity", "lyapunov")
    if job == "lyapunov" or (job == "scan" and quantity == "lyapunov"):
        sets["lyapunov.blocks"] = min(lyap.get("blocks", 20), 4)
        if "series" in lyap and isinstance(lyap["series"], dict):
            sets["lyapunov.series.samples"] = min(lyap["series"].get("samples", 10000), 1000)
    if job == "ensemble":
        sets["ensemble.members"] = min((cfg.get("ensemble") or {}).get("members", 1000), 8)
    for section in ("scan", "map", "bifurcation"):
        for axis, most in (("x", 3), ("y", 2)):
            if axis in (cfg.get(section) or {}):
                sets[f"{section}.{axis}.points"] = min(cfg[section][axis]["points"], most)
    if job == "bifurcation" and "panels" in cfg.get("bifurcation", {}):
        sets["bifurcation.panels.values"] = cfg["bifurcation"]["panels"]["values"][:2]
    if job == "fold":
        fold = cfg["fold"]
        sets["fold.points"] = min(fold.get("points", 2000), 300)
        if "track" in fold:
            sets["fold.track.steps"] = min(fold["track"].get("steps", 100), 3)
    if job == "slip-onset" and "threshold" in cfg:
        sets["threshold.rel_tol"] = max(cfg["threshold"].get("rel_tol", 1e-6), 1e-2)
    return sets


# Per config: sizes that give each case about a second of computing (the original when it is
# short already), by config file stem; these keys override the job type's rule.
PER_CONFIG = {
    "ball-rolling": {},
    "ball-spring": {},
    "bouncing-ball-scan": {"scan.x.points": 8},
    "devs-bifurcation-N": {"bifurcation.x.points": 20, "model.params.transient": 1000},
    "devs-bifurcation-q": {"bifurcation.x.points": 20, "model.params.transient": 1000},
    "devs-load-mu-sweep": {"model.params.steps": 2000, "scan.x.points": 4},
    "devs-load-scan": {"model.params.steps": 2000, "scan.x.points": 4},
    "devs-load": {"model.params.steps": 20000, "lyapunov.series.samples": 10000},
    "devs-lyapunov": {"model.params.steps": 20000, "lyapunov.series.samples": 4000},
    "devs-throughput": {"model.params.N": 100000},
    "flowmeter-fold": {"fold.points": 3000, "fold.track.steps": 10},
    "flowmeter-high-friction": {},
    "flowmeter-low-friction": {},
    "flowmeter-mid-friction": {},
    "flowmeter-scan-high": {"scan.x.points": 6, "scan.time": 300},
    "flowmeter-scan-low": {"scan.x.points": 6, "scan.time": 300},
    "flowmeter-scan-mid": {"scan.x.points": 6, "scan.time": 300},
    "harmonic": {"ensemble.members": 64},
    "henon-spectrum": {"lyapunov.blocks": 20},
    "jeffrey-noise": {"ensemble.members": 64},
    "jeffrey-smoothed": {"integrator.method": "petsc-ts"},  # see METHOD_AS_BEFORE
    "jeffrey-sticking": {},
    "logistic-scan": {"scan.x.points": 60},
    "lorenz-spectrum": {"lyapunov.duration": 500, "lyapunov.transient": 50},
    "open-question-noisy": {"ensemble.members": 16, "integrator.t_end": 10},
    "open-question-smoothed": {"ensemble.members": 16},
    "open-question-uniform": {"ensemble.members": 16},
    "open-question-weighted": {"ensemble.members": 16},
    "smoke": {"ensemble.members": 100},
    "stick-slip-scan": {"scan.x.points": 6, "lyapunov.duration": 199.91953250117,
                        "lyapunov.transient": 100},
    "stick-slip-spectrum": {"lyapunov.duration": 1000},
    "valve-bifurcation": {"scan.x.points": 8},
    "wheel-fig4": {"map.x.points": 20, "map.y.points": 20},
    "wheel-fig5": {"ensemble.members": 32},
    "wheel-smoothed": {"ensemble.members": 16, "integrator.t_end": 100,
                       "integrator.method": "petsc-ts"},  # see METHOD_AS_BEFORE
    "wheel-twofold": {},
    "wheelset-kinematic": {"scan.time": 12.566370614359172},
    "wheelset-slip": {},
    "wheelset-threshold": {"scan.x.points": 2, "threshold.rel_tol": 0.05},
}

# METHOD_AS_BEFORE: integrator.method auto took PETSc TS for smoothed stiff members and takes
# the Rosenbrock stepper since (CHANGELOG.md, "auto takes the Rosenbrock stepper for smoothed
# members"), a change of results by design; the configs that leave the method to auto
# (jeffrey-smoothed, wheel-smoothed; open-question-smoothed names petsc-ts itself) are run with
# the method the earlier auto chose set explicitly, so that both builds run the same integrator
# and the comparison stays like with like.  tests/scripts/smooth_wheel.py and
# jeffrey_smoothing.py check the new default against independent numbers.

# Cases also run on 2 ranks (the same arguments under mpiexec -n 2).
TWO_RANKS = ["smoke", "wheel-fig5", "logistic-scan", "flowmeter-scan-mid", "devs-load-scan",
             "wheelset-threshold", "equations-stick-slip", "plugin-belt"]


def set_args(sets):
    """--set KEY=VALUE arguments, each value written as YAML."""
    out = []
    for key, value in sets.items():
        text = yaml.safe_dump(value, default_flow_style=True).strip().replace("\n...", "")
        out += ["--set", f"{key}={text}"]
    return out


@dataclasses.dataclass
class Case:
    """One run: `config` is a path (run where it is, so its relative paths hold), or with
    `text` a file name the config is written to in the run directory, beside `companions`
    (files of the build's own tree).  `prepare` are argument lists of runs before it with the
    same binary; `flags` run options (--resume)."""
    name: str
    config: str
    sets: dict = dataclasses.field(default_factory=dict)
    ranks: int = 1
    text: str = None
    companions: list = dataclasses.field(default_factory=list)
    prepare: list = dataclasses.field(default_factory=list)
    flags: list = dataclasses.field(default_factory=list)

    def args(self):
        return set_args(self.sets) + self.flags


# Routes that no file of configs/ takes on its own: models given as equations or as C source
# (each build compiles its own tree's tests/plugins/, ported with the model ABI), the job
# codim2-point, and runs of configs/ continued or replayed from a file written before.
LORENZ_EQUATIONS = """model:
  equations:
    name: lorenz-eq
    state: [x, y, z]
    parameters: {sigma: 10, rho: 28, beta: 2.6666666666666665, noise: 0.5}
    field: {x: "sigma*(y - x)", y: "x*(rho - z) - y", z: "x*y - beta*z"}
    noise: {x: noise, y: noise, z: noise}
"""
STICK_SLIP_EQUATIONS = """model:
  equations:
    name: stick-slip-eq
    state: [x, v, theta]
    parameters: {zeta: 0.05, mu: 0.8, vb: 0.5, a: 1.2, omega: 1.1}
    switching: v - vb
    slip:
      plus: {x: v, v: "-x - 2*zeta*v + a*cos(theta) - mu", theta: omega}
      minus: {x: v, v: "-x - 2*zeta*v + a*cos(theta) + mu", theta: omega}
"""


def extra_cases(configs_dir):
    fig5 = os.path.join(configs_dir, "wheel-fig5.yaml")
    fig5_sets = {"ensemble.members": 12, "integrator.t_end": 60}
    smoke = os.path.join(configs_dir, "smoke.yaml")
    smoke_sets = {"ensemble.members": 100, "integrator.t_end": 1, "output.flush_interval": 0.01}
    return [
        Case("equations-lorenz", "equations-lorenz.yaml", text=LORENZ_EQUATIONS + """job: ensemble
initial: {state: [1.0, 1.0, 20.0], spread: 0.01}
integrator: {method: euler-maruyama, t_end: 2.0, dt: 0.001}
ensemble: {members: 64, seed: 20141}
"""),
        Case("equations-stick-slip", "equations-stick-slip.yaml",
             text=STICK_SLIP_EQUATIONS + """job: ensemble
initial: {state: [0.2, 0.0, 0.0], spread: 0.5}
integrator: {t_end: 100, rtol: 1.0e-9, atol: 1.0e-9}
ensemble: {members: 16, seed: 7}
"""),
        Case("equations-stick-slip-lyapunov", "equations-stick-slip-lyapunov.yaml",
             text=STICK_SLIP_EQUATIONS + """job: lyapunov
integrator: {rtol: 1.0e-9, atol: 1.0e-9}
initial: {state: [0.2, 0.0, 0.0]}
lyapunov: {exponents: 2, transient: 50, duration: 200, interval: 1.0, blocks: 4}
"""),
        Case("plugin-belt", "plugin-belt.yaml", companions=["tests/plugins/belt.c"],
             text="""job: ensemble
model:
  source: belt.c
  params: {k: 1, c: 0.1, mu: 1, vb: 0.5}
initial: {state: [0.2, 0.5], spread: 0.02}
integrator: {t_end: 20, rtol: 1.0e-11, atol: 1.0e-12}
ensemble: {members: 16}
"""),
        Case("plugin-linear-scan", "plugin-linear-scan.yaml", companions=["tests/plugins/linear.c"],
             text="""job: scan
model:
  source: linear.c
  name: linear3
initial: {state: [1.0, -0.5, 0.25]}
integrator: {rtol: 1.0e-11, atol: 1.0e-13}
lyapunov: {transient: 0, duration: 400, interval: 1.0, blocks: 4}
scan: {quantity: lyapunov, x: {param: a, min: -0.25, max: -0.05, points: 3}}
"""),
        Case("plugin-devs-growth", "plugin-devs-growth.yaml", companions=["tests/plugins/linear.c"],
             text="""job: lyapunov
model:
  source: linear.c
  name: devs-growth
  params: {N: 10, q: 0.5, r: 3.9, steps: 20000, transient: 1000}
devs: {seed: 1}
lyapunov: {blocks: 4}
"""),
        Case("plugin-contact", "plugin-contact.yaml", companions=["tests/plugins/contact.c"],
             text="""job: trajectory
model:
  source: contact.c
  name: antali-plugin
initial: {state: [0.5, 0.3, 0.2]}
integrator: {t_end: 2}
"""),
        Case("plugin-impact", "plugin-impact.yaml", companions=["tests/plugins/impact.c"],
             text="""job: trajectory
model:
  source: impact.c
  params: {r: 0.5}
initial: {state: [0, 4.905]}
integrator: {t_end: 3}
output: {samples: 31}
"""),
        Case("codim2-point", "codim2-point.yaml", text="""job: codim2-point
model: {name: antali-example}
initial: {state: [0, 0, 0.4]}
"""),
        Case("wheel-fig5-regularised", fig5, dict(fig5_sets, **{
            "intersection.policy": "regularised", "integrator.t_end": 40})),
        Case("wheel-fig5-replay", fig5,
             dict(fig5_sets, **{"exit.policy": "replay", "exit.replay": "first.h5"}),
             prepare=[["-o", "first.h5"] + set_args(
                 dict(fig5_sets, **{"exit.policy": "weighted", "exit.weights": [1, 3]}))]),
        Case("smoke-resume", smoke, smoke_sets, flags=["--resume"],
             prepare=[["-o", "out.h5", "--stop-after", "40"] + set_args(smoke_sets)]),
    ]


def cases_from(configs_dir, only=None):
    cases = []
    for name in sorted(os.listdir(configs_dir)):
        if not name.endswith(".yaml"):
            continue
        stem = name[:-5]
        path = os.path.join(configs_dir, name)
        with open(path) as f:
            cfg = yaml.safe_load(f)
        sets = job_rule(cfg)
        sets.update(PER_CONFIG.get(stem, {}))
        cases.append(Case(stem, path, sets))
    cases += extra_cases(configs_dir)
    cases = [twin for case in cases for twin in
             ([case, dataclasses.replace(case, name=case.name + "@2", ranks=2)]
              if case.name in TWO_RANKS else [case])]
    if only:
        wanted = set(only.split(","))
        cases = [c for c in cases if c.name in wanted or c.name.split("@")[0] in wanted]
    return cases


# ---------------------------------------------------------------------------------------------
# Builds.


def git(*args, cwd=REPO):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@dataclasses.dataclass
class Build:
    exe: str      # the twofold executable
    label: str    # what it was built from, for the report
    tree: str     # the source tree whose tests/plugins/ its plugin cases compile


def build(source, build_dir, log):
    """Configures and builds the executable (Release, -j2); output to `log`."""
    with open(log, "a") as out:
        for cmd in (["cmake", "-S", source, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"],
                    ["cmake", "--build", build_dir, "-j2", "--target", "twofold"]):
            if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                sys.exit(f"bit_identity: build failed: {' '.join(cmd)} (log: {log})")
    return os.path.join(build_dir, "twofold")


def binary_of(rev, cache):
    """The Build of revision `rev` (None: the working tree as it is), built once per commit in a
    git worktree under `cache` (kept: plugins compile against its include/)."""
    os.makedirs(cache, exist_ok=True)
    if rev is None:
        dirty = git("status", "--porcelain")
        if dirty:
            key = "tree-" + hashlib.sha1(REPO.encode()).hexdigest()[:12]
            with open(os.path.join(cache, key + ".lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                exe = build(REPO, os.path.join(cache, key), os.path.join(cache, key + ".log"))
                return Build(exe, "the working tree (uncommitted changes)", REPO)
        rev = "HEAD"
    commit = git("rev-parse", "--verify", rev + "^{commit}")
    home = os.path.join(cache, commit)
    exe = os.path.join(home, "build", "twofold")
    with open(os.path.join(cache, commit + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build per commit, however many scripts wait
        if not os.path.exists(os.path.join(home, "built")):
            src = os.path.join(home, "src")
            if not os.path.exists(os.path.join(src, "CMakeLists.txt")):
                shutil.rmtree(src, ignore_errors=True)
                git("worktree", "prune")
                git("worktree", "add", "--detach", src, commit)
            print(f"building {rev} ({commit[:10]}) in {home} ...", flush=True)
            build(src, os.path.join(home, "build"), os.path.join(home, "build.log"))
            open(os.path.join(home, "built"), "w").close()
    return Build(exe, f"{rev} ({commit[:10]})", os.path.join(home, "src"))


def ready_binary(path):
    """A Build from a given executable; its plugin cases compile this checkout's sources."""
    if not os.access(path, os.X_OK):
        sys.exit(f"bit_identity: {path} is not an executable")
    return Build(os.path.abspath(path), path, REPO)


# ---------------------------------------------------------------------------------------------
# Running.


@dataclasses.dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float
    results: str = None   # path of the results file kept, if any
    info: str = ""
    prepared: tuple = ()  # exit status and messages of each preparing run


def mpiexec():
    return shutil.which("mpiexec") or "mpiexec"


class Runner:
    """Runs cases in one fixed directory (so every path a results file records is the same for
    both binaries), each binary with its own compiled-model cache moved to one fixed path."""

    def __init__(self, work):
        self.work = work
        self.rundir = os.path.join(work, "run")
        self.model_cache = os.path.join(work, "model-cache")
        self.env = dict(os.environ, TWOFOLD_CACHE=self.model_cache,
                        OMPI_MCA_rmaps_base_oversubscribe="1")
        if os.geteuid() == 0:
            self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def run(self, build, side, case, keep=True, extra_sets=()):
        """Runs `case` with `build`; keeps the results file as WORK/side/NAME.h5 if `keep`."""
        own_cache = os.path.join(self.work, "model-cache-" + side)
        os.makedirs(own_cache, mode=0o700, exist_ok=True)
        os.rename(own_cache, self.model_cache)
        try:
            out = self.run_in_place(build, case, extra_sets)
        finally:
            os.rename(self.model_cache, own_cache)
        if keep:  # the streams, for reading a difference
            os.makedirs(os.path.join(self.work, side), exist_ok=True)
            for ext, text in (("out", out.stdout), ("err", out.stderr)):
                with open(os.path.join(self.work, side, f"{case.name}.{ext}"), "w") as f:
                    f.write(text)
        produced = os.path.join(self.rundir, "out.h5")
        if keep and os.path.exists(produced):
            info = subprocess.run([build.exe, "info", "out.h5"], cwd=self.rundir, env=self.env,
                                  capture_output=True, text=True)
            out.info = info.stdout + info.stderr
            out.results = os.path.join(self.work, side, case.name + ".h5")
            os.replace(produced, out.results)
        return out

    def run_in_place(self, build, case, extra_sets):
        """A fresh run directory with the case's files, its preparing runs, then its run."""
        shutil.rmtree(self.rundir, ignore_errors=True)
        os.makedirs(self.rundir)
        if case.text is not None:
            with open(os.path.join(self.rundir, case.config), "w") as f:
                f.write(case.text)
        for companion in case.companions:
            shutil.copy(os.path.join(build.tree, companion), self.rundir)
        launcher = [mpiexec(), "-n", str(case.ranks)] if case.ranks > 1 else []
        start, prepared = time.perf_counter(), []
        for args in case.prepare:
            res = subprocess.run(launcher + [build.exe, "run", case.config, "--quiet", *args],
                                 cwd=self.rundir, env=self.env, capture_output=True, text=True)
            prepared.append((res.returncode, messages(res.stderr)))
        cmd = launcher + [build.exe, "run", case.config, "-o", "out.h5", "--quiet", "--json",
                          *case.args()]
        for extra in extra_sets:
            cmd += ["--set", extra]
        res = subprocess.run(cmd, cwd=self.rundir, env=self.env, capture_output=True, text=True)
        return Outcome(res.returncode, res.stdout, res.stderr, time.perf_counter() - start,
                       prepared=tuple(prepared))


# ---------------------------------------------------------------------------------------------
# Comparing.


def excluded(path):
    return any(re.fullmatch(p.replace("*", "[^/]*"), path) for p in EXCLUDED_ATTRIBUTES)


def bytes_of(value):
    """(dtype, shape, bytes) of an HDF5 value; strings and objects by their text."""
    arr = np.asarray(value)
    if arr.dtype.kind == "O":
        return ("object", arr.shape, repr(arr.tolist()).encode())
    return (arr.dtype.str, arr.shape, arr.tobytes())


def first_difference(x, y, n=3):
    """Where two same-typed arrays first differ, and a few values of each."""
    if x.dtype.kind == "O":
        xs, ys = x.reshape(-1), y.reshape(-1)
        idx = [i for i in range(xs.size) if xs[i] != ys[i]]
    else:
        rows_x = x.reshape(-1).view(np.uint8).reshape(x.size, -1) if x.size else np.zeros((0, 1))
        rows_y = y.reshape(-1).view(np.uint8).reshape(y.size, -1) if y.size else np.zeros((0, 1))
        idx = list(np.flatnonzero((rows_x != rows_y).any(axis=1)))
    if not idx:
        return "same elements, different bytes"
    shown = ", ".join(f"{np.unravel_index(i, x.shape) if x.ndim > 1 else i}: "
                      f"{x.reshape(-1)[i]!r} vs {y.reshape(-1)[i]!r}" for i in idx[:n])
    return f"{len(idx)} of {x.size} elements differ; {shown}"


MOST_DIFFERENCES = 20  # the comparison of two files stops listing after this many


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def names_migrated(apath, va, vb, dropped):
    """The `names` and `merged_from` migrations (and the checksum's columns without the
    columns dropped, `exits` and `twofold_visits`)."""
    va, after = text(va), np.asarray(vb)
    if apath not in NAME_LISTS + LINE_LISTS or not isinstance(va, str) or after.ndim != 1 or \
            not all(isinstance(text(v), str) for v in after):
        return False
    before = va.split("\n" if apath in LINE_LISTS else ",") if va else []
    if apath == "/members/checksum/columns":
        before = [c for c in before if c not in dropped]
    return before == [text(v) for v in after]


def added_param(apath, value, model):
    """The `params` migration of an attribute only after: an added parameter at its default."""
    added = ADDED_PARAMS.get(model, {})
    name = apath[len("/model/"):] if apath.startswith("/model/") else None
    return name in added and np.asarray(value).size == 1 and \
        float(np.asarray(value).ravel()[0]) == float(added[name])


def without_added_params(apath, va, vb, model):
    """The `params` migration of the config as run and its fingerprint."""
    added = ADDED_PARAMS.get(model, {})
    va, vb = text(va), text(vb)
    if apath not in ADDED_PARAM_TEXTS or not added or not isinstance(va, str) or \
            not isinstance(vb, str):
        return False
    lines = [l for l in vb.split("\n")
             if not any(re.fullmatch(rf"\s+{n}: {d}", l) for n, d in added.items())]
    return "\n".join(lines) == va


def model_of(f):
    """The model's name: the root attribute `model`, or the /model group's `name`."""
    if "model" in f.attrs:
        return text(f.attrs["model"])
    group = f.get("model")
    return text(group.attrs.get("name", "")) if isinstance(group, h5py.Group) else ""


def compare_attrs(a, b, path, out, dropped=frozenset()):
    model = model_of(a.file)
    for name in sorted(set(a.attrs) | set(b.attrs)):
        apath = path.rstrip("/") + "/" + name
        if excluded(apath):
            continue
        if name in b.attrs and name not in a.attrs and added_param(apath, b.attrs[name], model):
            continue
        if name not in a.attrs or name not in b.attrs:
            out.append(f"attribute {apath} only {'before' if name in a.attrs else 'after'}")
            continue
        va, vb = a.attrs[name], b.attrs[name]
        if apath in NAME_LISTS + LINE_LISTS and (a.attrs.get_id(name).get_type() !=
                                                 b.attrs.get_id(name).get_type() or
                                                 bytes_of(va) != bytes_of(vb)):
            if not names_migrated(apath, va, vb, dropped):
                out.append(f"attribute {apath}: {va!r} vs {vb!r} (not the names migration)"[:300])
        elif a.attrs.get_id(name).get_type() != b.attrs.get_id(name).get_type():
            out.append(f"attribute {apath}: stored types differ ({va!r} vs {vb!r})"[:300])
        elif bytes_of(va) != bytes_of(vb) and not without_added_params(apath, va, vb, model):
            out.append(f"attribute {apath}: {va!r} vs {vb!r}"[:300])


def fnv1a_rows(ids, status, columns):
    """FNV-1a 64 per member of (id as uint64, status as uint8, each column's row): the
    definition of /members/checksum (docs/CONFIG.md), vectorised over members."""
    parts = [ids.astype("<u8").view(np.uint8).reshape(len(ids), 8),
             status.astype(np.uint8).reshape(len(ids), 1)]
    parts += [np.ascontiguousarray(c).reshape(len(ids), -1).view(np.uint8) for c in columns]
    data = np.concatenate(parts, axis=1)
    h = np.full(len(ids), 0xCBF29CE484222325, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(data.shape[1]):
            h = (h ^ data[:, k].astype(np.uint64)) * np.uint64(0x100000001B3)
    return h


def checksum_migrated(fa, fb, dropped):
    """The `exits` and `twofold_visits` migrations of /members/checksum: before's from the file
    after, with before's empty rows of the dropped columns put back in before's column order,
    and after's from its own columns."""
    ma, mb = fa["members"], fb["members"]
    ids, status = np.arange(len(mb["status"])), mb["status"][()]
    cols_a = names_of(ma["checksum"].attrs["columns"])
    cols_b = [text(c) for c in mb["checksum"].attrs["columns"]]
    before = fnv1a_rows(ids, status, [(ma if c in dropped else mb)[c][()] for c in cols_a])
    after = fnv1a_rows(ids, status, [mb[c][()] for c in cols_b])
    return np.array_equal(before, ma["checksum"][()]) and np.array_equal(after, mb["checksum"][()])


def names_of(value):
    """A names attribute in either layout as a list of str."""
    value = text(value)
    if isinstance(value, str):
        return value.split(",") if value else []
    return [text(v) for v in np.asarray(value).ravel()]


def compare_dataset(a, b, path, out, dropped=frozenset()):
    if path in BLOCK_DATASETS and a.ndim == 1 and b.ndim == 2:  # the `blocks` migration
        if a.id.get_type() != b.id.get_type() or a.size != b.size or \
                bytes_of(a[()])[2] != bytes_of(b[()])[2]:
            out.append(f"dataset {path}: {a.shape} vs {b.shape}, not the blocks migration")
        return
    if path == "/members/checksum" and dropped:
        if a.id.get_type() != b.id.get_type() or a.shape != b.shape or \
                not checksum_migrated(a.file, b.file, dropped):
            out.append(f"dataset {path}: not the {'/'.join(sorted(dropped))} migration's "
                       f"checksum")
        return
    if a.id.get_type() != b.id.get_type():  # H5Tequal: class, size, order, enum names...
        out.append(f"dataset {path}: type {a.dtype} vs {b.dtype}")
    elif a.shape != b.shape:
        out.append(f"dataset {path}: shape {a.shape} vs {b.shape}")
    else:
        x, y = a[()], b[()]
        if bytes_of(x) != bytes_of(y):
            out.append(f"dataset {path}: {first_difference(np.asarray(x), np.asarray(y))}"[:500])


def dropped_columns(fa, fb):
    """The member columns whose migration applies (DROPPED): before, empty, and none after."""
    if "members" not in fa or "members" not in fb:
        return frozenset()
    return frozenset(name for name, empty in DROPPED.items()
                     if name in fa["members"] and name not in fb["members"] and
                     empty(fa["members"][name][()]))


def compare_objects(a, b, path, out, dropped=frozenset()):
    """Appends to `out` every difference between two HDF5 objects (groups recursively)."""
    compare_attrs(a, b, path, out, dropped)
    if isinstance(a, h5py.Dataset) != isinstance(b, h5py.Dataset):
        out.append(f"{path}: a dataset in one file, a group in the other")
    elif isinstance(a, h5py.Dataset):
        compare_dataset(a, b, path, out, dropped)
    else:
        only_before = set(a) - set(b) - (dropped if path == "/members" else set())
        if only_before or set(b) - set(a):
            out.append(f"group {path}: {sorted(only_before)} only before, "
                       f"{sorted(set(b) - set(a))} only after")
        for name in sorted(set(a) & set(b)):
            if len(out) >= MOST_DIFFERENCES:
                return
            compare_objects(a[name], b[name], path.rstrip("/") + "/" + name, out, dropped)


def compare_files(pa, pb):
    """Every difference between two results files (at most MOST_DIFFERENCES), datasets first,
    and the member columns whose migration (DROPPED) applied."""
    out = []
    with h5py.File(pa, "r") as a, h5py.File(pb, "r") as b:
        dropped = dropped_columns(a, b)
        compare_objects(a, b, "/", out, dropped)
    return sorted(out, key=lambda d: (not d.startswith("dataset"), "/checksum:" in d)), dropped


def summary_json(stdout, after=None):
    """The --json summary without its excluded keys; with `after` (the other side's summary),
    without the keys DROPPED_JSON drops where they are absent after."""
    lines = [l for l in stdout.strip().splitlines() if l.startswith("{")]
    if not lines:
        return None
    doc = json.loads(lines[-1])
    for key in EXCLUDED_JSON_KEYS:
        doc.pop(key, None)
    for key, empty in DROPPED_JSON.items():
        if after is not None and key not in after and doc.get(key, not empty) == empty:
            del doc[key]
    return doc


def info_text(text, dropped=frozenset()):
    """`twofold info` without its excluded lines (and without the lines listing the member
    columns dropped, DROPPED); the datasets of the `blocks` migration listed by their number
    of elements, not their shape."""
    def line(l):
        words = l.split()
        if words[:1] and words[0] in BLOCK_DATASETS and all(w.isdigit() for w in words[1::2]):
            return f"  {words[0]} {int(np.prod([int(w) for w in words[1::2]]))} elements"
        return l
    return "\n".join(line(l) for l in text.splitlines()
                     if not l.startswith(EXCLUDED_INFO_PREFIXES)
                     and l.split()[:1] not in [[f"/members/{c}"] for c in dropped])


def messages(stderr):
    """twofold's own lines of stderr: without Open MPI's reports (framed by lines of dashes, or
    prefixed [host:pid]), which name hosts and process ids."""
    kept, framed = [], False
    for line in stderr.splitlines():
        if re.fullmatch(r"-{20,}", line.strip()):
            framed = not framed
        elif not framed and not re.match(r"\[[^\]]*:\d+\]", line):
            kept.append(line)
    return "\n".join(kept).strip()


def compare_outcomes(ob, oa):
    """('identical' | 'both fail' | 'DIFFERENT', detail)."""
    eb, ea = messages(ob.stderr), messages(oa.stderr)
    if ob.prepared != oa.prepared:
        return "DIFFERENT", f"the preparing runs: {ob.prepared} vs {oa.prepared}"[:400]
    if ob.code != oa.code:
        return "DIFFERENT", f"exit status {ob.code} vs {oa.code}: " + (eb or ea)[-300:]
    if eb != ea:
        return "DIFFERENT", f"both exit {ob.code}, stderr differs: " + first_line_difference(eb, ea)
    if ob.code != 0:
        return "both fail", f"exit {ob.code}: {eb.splitlines()[-1] if eb else ''}"[:300]
    if (ob.results is None) != (oa.results is None):
        return "DIFFERENT", "a results file from one binary only"
    if ob.results:
        diffs, dropped = compare_files(ob.results, oa.results)
        if diffs:
            more = f" (and {len(diffs) - 1} more)" if len(diffs) > 1 else ""
            return "DIFFERENT", diffs[0] + more
        if info_text(ob.info, dropped) != info_text(oa.info):
            return "DIFFERENT", "twofold info differs: " + first_line_difference(
                info_text(ob.info, dropped), info_text(oa.info))
    ja = summary_json(oa.stdout)
    jb = summary_json(ob.stdout, ja)
    if jb != ja:
        keys = sorted(k for k in set(jb or {}) | set(ja or {})
                      if (jb or {}).get(k) != (ja or {}).get(k))
        return "DIFFERENT", f"--json differs in {keys[:5]}: " + \
            "; ".join(f"{k}: {(jb or {}).get(k)!r} vs {(ja or {}).get(k)!r}"
                      for k in keys[:2])[:400]
    return "identical", ""


def first_line_difference(a, b):
    for la, lb in zip(a.splitlines() + [""], b.splitlines() + [""]):
        if la != lb:
            return f"{la!r} vs {lb!r}"[:400]
    return "?"


# ---------------------------------------------------------------------------------------------
# The modes.


def compare_all(runner, cases, before, after, before_sets=(), after_sets=()):
    """Runs every case with both binaries; prints the table; returns the rows."""
    rows = []
    width = max(len(c.name) for c in cases)
    print(f"{'config':<{width}}  {'verdict':<10} {'before s':>8} {'after s':>8}  detail",
          flush=True)
    for case in cases:
        ob = runner.run(before, "before", case, extra_sets=before_sets)
        oa = runner.run(after, "after", case, extra_sets=after_sets)
        verdict, detail = compare_outcomes(ob, oa)
        rows.append((case, verdict, detail, ob.seconds, oa.seconds))
        print(f"{case.name:<{width}}  {verdict:<10} {ob.seconds:8.1f} {oa.seconds:8.1f}  {detail}",
              flush=True)
    return rows


def report(rows):
    bad = [r for r in rows if r[1] == "DIFFERENT"]
    failing = [r for r in rows if r[1] == "both fail"]
    tb, ta = sum(r[3] for r in rows), sum(r[4] for r in rows)
    print(f"\n{len(rows)} cases: {len(rows) - len(bad)} identical, {len(bad)} DIFFERENT; "
          f"run time {tb:.0f} s before, {ta:.0f} s after")
    if failing:
        print("failing identically on both binaries (counted as identical):")
        for case, _, detail, _, _ in failing:
            print(f"  {case.name}: {detail}")
    for case, _, detail, _, _ in bad:
        print(f"DIFFERENT {case.name}: {detail}")
    return not bad


def timing(runner, cases, before, after, pairs):
    """Alternated pairs of whole-set runs: the median ratio after/before of their wall times
    (the criterion), and of their CPU times (user + system of the processes: less moved by
    other work on the machine)."""
    def whole_set(build, side):
        start, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        for case in cases:
            runner.run(build, side, case, keep=False)
        end = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (time.perf_counter() - start,
                end.ru_utime + end.ru_stime - cpu.ru_utime - cpu.ru_stime)

    wall, cpu = [], []
    for k in range(pairs):
        (wb, cb), (wa, ca) = whole_set(before, "before"), whole_set(after, "after")
        wall.append(wa / wb)
        cpu.append(ca / cb)
        print(f"pair {k + 1}: wall before {wb:.2f} s, after {wa:.2f} s, ratio {wa / wb:.4f}; "
              f"CPU before {cb:.2f} s, after {ca:.2f} s, ratio {ca / cb:.4f}", flush=True)
    med = statistics.median(wall)
    verdict = "meets" if abs(med - 1) <= 0.03 else "does NOT meet"
    print(f"median ratio after/before over {pairs} alternated pairs: wall {med:.4f} ({verdict} "
          f"the criterion |ratio - 1| <= 3 %; pairs {min(wall):.3f} .. {max(wall):.3f}), "
          f"CPU {statistics.median(cpu):.4f} ({min(cpu):.3f} .. {max(cpu):.3f}); load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (a loaded machine spreads the pairs)")


MARKER = ".bit-identity"  # a --work directory this script made, and may empty


def private_dir(parent=None):
    return tempfile.mkdtemp(prefix="bit-identity-", dir=parent)  # mode 700


# ---------------------------------------------------------------------------------------------
# Self-test: the comparator must find differences that exist.

SELF_TEST = {  # case -> a --set that must change its results
    "harmonic": "ensemble.seed=8",
    "lorenz-spectrum": "integrator.rtol=1.0e-9",
    "wheel-fig5": "exit.margin=0.06",
}


def plant_one_ulp(path):
    """A copy of the results file with one float of one dataset moved by one ulp."""
    copy = path + ".planted.h5"
    shutil.copy(path, copy)
    with h5py.File(copy, "r+") as f:
        names = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset)
                     and o.dtype == np.float64 and o.size else None)
        ds = f[names[-1]]
        x = ds[()]
        flat = x.reshape(-1)
        flat[0] = np.nextafter(flat[0], np.inf)
        ds[()] = x
    return copy


def plant_old_layout(path, exits_width=None, visits=False):
    """A copy of a results file in the layout before the migrations: names joined with ',',
    merged_from with newlines, blocks flat, (exits_width) an all-NaN /members/exits of that
    width and (visits) an all-zero /members/twofold_visits put back, with the checksum they
    gave.  Also returns a copy of that with one float of a migrated dataset (or the checksum)
    moved by one ulp."""
    old = path + ".old.h5"
    shutil.copy(path, old)
    with h5py.File(old, "r+") as f:
        for apath in NAME_LISTS:
            where, name = apath.rsplit("/", 1)
            if where and where not in f:
                continue
            obj = f[where] if where else f
            if name in obj.attrs and np.asarray(obj.attrs[name]).ndim == 1:
                obj.attrs[name] = ",".join(text(v) for v in obj.attrs[name])
        if "merged_from" in f.attrs and np.asarray(f.attrs["merged_from"]).ndim == 1:
            f.attrs["merged_from"] = "\n".join(text(v) for v in f.attrs["merged_from"])
        for dpath in BLOCK_DATASETS:
            if dpath in f and f[dpath].ndim == 2:
                data, attrs = f[dpath][()], dict(f[dpath].attrs)
                del f[dpath]
                f[dpath] = data.reshape(-1)
                f[dpath].attrs.update(attrs)
        if (exits_width or visits) and "members/checksum" in f:
            m = f["members"]
            n = len(m["status"])
            cols = f["members/checksum"].attrs["columns"].split(",")
            if exits_width:
                m["exits"] = np.full((n, exits_width), np.nan)
                cols.append("exits")
            if visits:
                m["twofold_visits"] = np.zeros(n, dtype=np.int64)
                cols.append("twofold_visits")
            m["checksum"].attrs["columns"] = ",".join(cols)
            m["checksum"][...] = fnv1a_rows(np.arange(n), m["status"][()],
                                            [m[c][()] for c in cols])
    planted = old + ".planted.h5"
    shutil.copy(old, planted)
    with h5py.File(planted, "r+") as f:
        name = next(p.lstrip("/") for p in BLOCK_DATASETS + ["/members/checksum"]
                    if p.lstrip("/") in f)
        x = f[name][()]
        x.reshape(-1)[0] = np.nextafter(x.reshape(-1)[0], np.inf) if x.dtype.kind == "f" \
            else x.reshape(-1)[0] ^ np.uint64(1)
        f[name][...] = x
    return old, planted


def self_test_migrations(runner, cases):
    """An old-layout copy of each kept file is the same results as the file; one element
    changed in a migrated dataset is still one difference."""
    ok = True
    for case in cases:
        kept = os.path.join(runner.work, "before", case.name + ".h5")
        with h5py.File(kept, "r") as f:
            members = "members/checksum" in f
            width = 8 if members and "members/exits" not in f else None
            visits = members and "members/twofold_visits" not in f
            merged = "merged_from" in f.attrs
        if not merged:  # a merged file's attribute, put here to be migrated too
            with h5py.File(kept, "r+") as f:
                f.attrs.create("merged_from", ["a.h5", "b,c.h5"], dtype=h5py.string_dtype())
        old, planted = plant_old_layout(kept, width, visits)
        same, dropped = compare_files(old, kept)
        moved, _ = compare_files(planted, kept)
        planted_what = ", ".join(w for w, on in (("all-NaN exits", width),
                                                 ("all-zero twofold_visits", visits)) if on)
        print(f"-- {case.name} in the old layout{f' ({planted_what})' if planted_what else ''}: "
              f"{same or 'identical'}; with one element moved: {moved}")
        ok &= not same and dropped == frozenset(n for n, on in (("exits", width),
                                                                 ("twofold_visits", visits))
                                                 if on) and \
            len(moved) == 1 and moved[0].startswith("dataset")
        with h5py.File(old, "r") as f:
            ok &= f.attrs["merged_from"] == "a.h5\nb,c.h5"
    # the `params` migration: the wheel's file without the parameter added since is the same
    # results; the parameter at another value, or on another model, is not
    wheel = os.path.join(runner.work, "before", "wheel-fig5.h5")
    if os.path.exists(wheel):
        verdicts = []
        for value, model in ((0.0, "wheel"), (1.0, "wheel"), (0.0, "other")):
            old = wheel + f".params-{value:g}-{model}.h5"
            shutil.copyfile(wheel, old)
            with h5py.File(old, "r+") as f:
                if model != "wheel":
                    f.attrs["model"] = model
                for attr, line in (("config", "    continuation: 0\n"),
                                   ("fingerprint", "  continuation: 0\n")):
                    ok &= line in text(f.attrs[attr])
                    f.attrs[attr] = text(f.attrs[attr]).replace(line, "")
                del f["model"].attrs["continuation"]
            new = old + ".after.h5"
            shutil.copyfile(wheel, new)
            with h5py.File(new, "r+") as f:
                f["model"].attrs["continuation"] = value
                if model != "wheel":
                    f.attrs["model"] = model
            verdicts.append(not compare_files(old, new)[0])
        print(f"-- wheel-fig5 without `continuation`: identical {verdicts[0]}; against 1: "
              f"identical {verdicts[1]}; on another model: identical {verdicts[2]}")
        ok &= verdicts == [True, False, False]
    else:
        print("-- FAIL: no wheel-fig5 file for the params migration")
        ok = False
    # the --json key twofold_visits: a 0 before may be absent after, no other value may
    json_ok = summary_json('{"members": 2, "twofold_visits": 0}', {"members": 2}) == \
        {"members": 2} and summary_json('{"twofold_visits": 3}', {}) == {"twofold_visits": 3}
    print(f"-- --json twofold_visits 0 before, absent after: identical; 3 before: DIFFERENT: "
          f"{'yes' if json_ok else 'NO'}")
    return ok and json_ok


def self_test(runner, exe, configs_dir):
    """`exe` (a Build) against itself: what must be identical is, what must differ does."""
    cases = cases_from(configs_dir, ",".join(SELF_TEST))
    ok = True

    def expect(what, rows, verdict):
        nonlocal ok
        if rows[0][1] != verdict:
            print(f"FAIL: {what}: the comparator said {rows[0][1]}, not {verdict}")
            ok = False

    print("-- the same binary twice: every case must be identical")
    ok &= report(compare_all(runner, cases, exe, exe))
    for case in (c for c in cases if c.ranks == 1):
        change = SELF_TEST[case.name]
        print(f"-- {case.name} with --set {change} after: a dataset must be DIFFERENT")
        rows = compare_all(runner, [case], exe, exe, after_sets=[change])
        if not rows[0][2].startswith("dataset"):
            print(f"FAIL: the comparator found no dataset changed by {change}")
            ok = False
    first = cases[:1]
    print("-- a config error on both: the same message is a failure on both, another is DIFFERENT")
    expect("same error", compare_all(runner, first, exe, exe, ["integrator.rtol=-1"],
                                     ["integrator.rtol=-1"]), "both fail")
    expect("other error", compare_all(runner, first, exe, exe, ["integrator.rtol=-1"],
                                      ["integrator.rtol=-2"]), "DIFFERENT")
    for case in cases:
        kept = os.path.join(runner.work, "before", case.name + ".h5")
        diffs, _ = compare_files(kept, plant_one_ulp(kept))
        print(f"-- {case.name}: one float moved by one ulp: {diffs}")
        ok &= len(diffs) == 1 and diffs[0].startswith("dataset") and ": 1 of " in diffs[0]
    ok &= self_test_migrations(runner, [c for c in cases if c.ranks == 1])
    print("self-test " + ("passed" if ok else "FAILED"))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default="renovation-base", help="revision (default: that tag)")
    ap.add_argument("--after", default=None, help="revision (default: the working tree)")
    ap.add_argument("--before-bin", help="a ready twofold executable instead of building --before")
    ap.add_argument("--after-bin", help="a ready twofold executable instead of building --after")
    ap.add_argument("--configs", default=os.environ.get("CONFIGS", os.path.join(REPO, "configs")))
    ap.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                    "twofold-bit-identity"))
    ap.add_argument("--work", help="scratch directory (default: a new private one, removed)")
    ap.add_argument("--only", help="comma-separated config stems (NAME@2 for a 2-rank case)")
    ap.add_argument("--list", action="store_true", help="print the cases and their arguments")
    ap.add_argument("--timing", action="store_true", help="also time alternated pairs")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()

    if args.list:
        for case in cases_from(args.configs, args.only):
            where = f" (written by this script{', with ' if case.companions else ''}" \
                    f"{', '.join(case.companions)})" if case.text else ""
            before = "".join(f"; first: run {case.config}{where} {shlex.join(p)}"
                             for p in case.prepare)
            print(f"{case.name}: run {case.config}{where} {shlex.join(case.args())}{before}")
        return 0
    work = args.work or os.environ.get("WORK")
    if work:
        if os.path.isdir(work) and os.listdir(work) and \
                not os.path.exists(os.path.join(work, MARKER)):
            sys.exit(f"bit_identity: --work {work} is not empty and not a directory of this script")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work, mode=0o700)
    else:
        work = private_dir()
    open(os.path.join(work, MARKER), "w").close()
    runner = Runner(work)
    try:
        if args.self_test:
            given = args.after_bin or os.environ.get("TWOFOLD")
            exe = ready_binary(given) if given else binary_of(args.after, args.cache)
            return 0 if self_test(runner, exe, args.configs) else 1
        before = ready_binary(args.before_bin) if args.before_bin else \
            binary_of(args.before, args.cache)
        after = ready_binary(args.after_bin) if args.after_bin else \
            binary_of(args.after, args.cache)
        cases = cases_from(args.configs, args.only)
        print(f"before: {before.label}: {before.exe}\nafter:  {after.label}: {after.exe}\n"
              f"configs: {args.configs}, {len(cases)} cases\n", flush=True)
        start = time.perf_counter()
        same = report(compare_all(runner, cases, before, after))
        print(f"comparison took {time.perf_counter() - start:.0f} s")
        if args.timing:
            timing(runner, cases, before, after, max(args.pairs, 5))
        print("ALL IDENTICAL" if same else "RESULTS DIFFER")
        return 0 if same else 1
    finally:
        if not (args.work or os.environ.get("WORK")):
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
