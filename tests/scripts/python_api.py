"""python_api.py — the Python package: pip-installable offline, run() and the lazy reader.

* `pip install --no-build-isolation --no-index ./python` (a copy of it: an in-tree build would
  write into the source tree) installs the package with Debian's setuptools, with the
  version of project() in CMakeLists.txt; everything below imports that installed copy.
* A Filippov model with a known solution, written as equations: x' = -a x, y' = 1 on both
  sides of the switching function h = y - c.  Member m starting at (x0, y0) has
  x(t) = x0 exp(-a t), y(t) = y0 + t, and crosses h = 0 once, at t = c - y0, at state
  (x0 exp(-a (c - y0)), c).  The reader's trajectory, final states, event table (kind
  "crossing", time, state) and summary dict are checked against these numbers, computed here
  with numpy from each member's stored initial state.
* run() streams the engine's progress lines, refuses an existing output unless
  overwrite=True (status 2 and the engine's message, the file untouched), raises the
  engine's message and status on a bad config, and gives on 2 ranks (twofold mpirun) the
  1-rank data bit for bit.
* Opening is lazy: no dataset is open or read after twofold.open(), and the peak memory
  grows by less than a tenth of the data's size; reading a dataset reads it (the check can
  fail).  Status names are the engine's (src/base/status.c), event tables decode
  /members/event_log exactly (checked against the raw dataset decoded here), padding dropped.
* to_pandas()/to_xarray() where pandas/xarray are installed (optional: skipped otherwise).
"""
import os
import re
import resource
import shutil
import subprocess
import sys

import numpy as np

import testlib as T

SOURCE = os.environ["SOURCE_DIR"]
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")
T.setup()
os.environ["TWOFOLD_EXECUTABLE"] = T.TWOFOLD

# --- pip install from the source tree, offline --------------------------------------------
shutil.copytree(os.path.join(SOURCE, "python"), "python-src",
                ignore=shutil.ignore_patterns("_install.py*", "__pycache__", "build", "*.egg-info"))
pip = subprocess.run([PYTHON, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                      "--no-deps", "--target", "site", "./python-src"],
                     capture_output=True, text=True)
T.check(pip.returncode == 0, f"pip install --no-build-isolation --no-index ./python: "
        f"{pip.returncode} {pip.stderr[-500:]}")
sys.path.insert(0, os.path.abspath("site"))
import twofold  # noqa: E402  (the pip-installed copy)

T.check(os.path.dirname(twofold.__file__) == os.path.abspath("site/twofold"),
        f"imported from the pip install: {twofold.__file__}")
want = re.search(r"project\(twofold VERSION ([0-9.]+)",
                 open(os.path.join(SOURCE, "CMakeLists.txt")).read()).group(1)
T.check(twofold.__version__ == want, f"package version {twofold.__version__} = project() {want}")

# --- the model and its exact solution -----------------------------------------------------
A, C, T_END, SAMPLES, MEMBERS = 0.7, 1.0, 2.0, 21, 300
T.write("decay.yaml", f"""job: ensemble
model:
  equations:
    name: decay-crossing
    state: [x, y]
    parameters:
      a: {{default: {A}, min: 0}}
      c: {{default: {C}}}
    switching: y - c
    slip:
      plus: {{x: "-a*x", y: "1"}}
      minus: {{x: "-a*x", y: "1"}}
initial: {{state: [1.0, 0.5], spread: 0.1}}
integrator: {{t_end: {T_END}, rtol: 1.0e-11, atol: 1.0e-13}}
ensemble: {{members: {MEMBERS}, seed: 11}}
output: {{trajectory_samples: {SAMPLES}, event_log: 4}}
""")

lines = []
res = twofold.run("decay.yaml", output="decay.h5", progress=lines.append)
T.check(any(re.match(rf"members: {MEMBERS}/{MEMBERS} \(100\.0%\)", l) for l in lines),
        f"run() streams the engine's progress lines: {lines[-1:]}")
T.check(res.run["status"] == "complete" and res.run["members"] == MEMBERS,
        f"run() returns the results with the run's JSON summary: {res.run.get('status')}")

# named dimensions
T.check(res.dims == {"members": MEMBERS, "samples": SAMPLES, "state": 2},
        f"dims {res.dims}")
T.check(res.state_names == ["x", "y"], f"state names {res.state_names}")

# values against the exact solution, from each member's stored initial state
x0, y0 = res["members/initial_state"].T
t = res.sample_times()
T.check(np.allclose(t, np.linspace(0, T_END, SAMPLES), rtol=0, atol=1e-15),
        f"sample times 0..{T_END} in {SAMPLES} steps")
traj = res.trajectory()
exact = np.stack([x0[:, None] * np.exp(-A * t), y0[:, None] + t], axis=-1)
err = np.max(np.abs(traj - exact))
T.check(traj.shape == (MEMBERS, SAMPLES, 2) and err < 1e-8,
        f"trajectory members x samples x state {traj.shape}: max |x - x0 exp(-a t)| = {err:.1e}")
T.check(np.array_equal(res.trajectory(7), traj[7]), "trajectory(7) is member 7's samples")
final = res["members/final_state"]
err = np.max(np.abs(final - exact[:, -1]))
T.check(err < 1e-8, f"final states: max error {err:.1e}")

# statuses as the engine's names
status_c = open(os.path.join(SOURCE, "src", "base", "status.c")).read()
engine_names = re.findall(r'"(\w+)"', status_c[status_c.index("names[TF_MEMBER_STATUS_COUNT]"):
                                                status_c.index("};")])
# (a file of a run that is not isolated names those before crashed, as files always did)
T.check(list(twofold.STATUS_NAMES) == engine_names and
        res.status_names() == engine_names[:engine_names.index("crashed")],
        f"status names = src/base/status.c's {engine_names}; the file's {res.status_names()}")
T.check(list(res.statuses()) == ["ok"] * MEMBERS, "every member's status is 'ok'")

# event tables: one crossing per member at t = c - y0, state (x0 exp(-a t), c)
crossing_t = C - y0
ok = True
for m in (0, 1, MEMBERS - 1):
    ev = res.events(m)
    ok &= list(ev["kind"]) == ["crossing"] and abs(ev["t"][0] - crossing_t[m]) < 1e-9 and \
        abs(ev["x"][0] - x0[m] * np.exp(-A * crossing_t[m])) < 1e-8 and abs(ev["y"][0] - C) < 1e-9
T.check(ok, "events(m): one 'crossing' at t = c - y0, state (x0 exp(-a t), c)")
table = res.events()
T.check(np.array_equal(table["member"], np.arange(MEMBERS)) and
        np.max(np.abs(table["t"] - crossing_t)) < 1e-9,
        f"events(): one long table, {len(table)} rows (member, t, kind, ...), padding dropped")
# the same decoded here from the raw dataset
raw = res.dataset("members/event_log")
fields = list(raw.attrs["fields"])
kinds = list(raw.attrs["kinds"])
slots = raw[()].reshape(MEMBERS, -1, int(raw.attrs["slot_width"]))
kept = slots[~np.isnan(slots[:, :, 0])]
T.check(slots.shape[1] == 4 and len(kept) == len(table) and
        all(np.array_equal(table[f], kept[:, k]) for k, f in enumerate(fields)
            if f not in ("kind", "from", "to")) and
        list(table["kind"]) == [kinds[int(k)] for k in kept[:, fields.index("kind")]] and
        np.array_equal(table["from"], kept[:, fields.index("from")].astype(int)),
        "the event table is /members/event_log decoded (fields, kinds by name, NaN slots out)")

# the summary as a plain dict
s = res.summary
T.check(s["status_counts"]["ok"] == MEMBERS and s["events"]["crossing"] == MEMBERS and
        abs(s["final_state_mean"]["x"] - np.mean(exact[:, -1, 0])) < 1e-8 and
        abs(s["final_state_mean"]["y"] - np.mean(exact[:, -1, 1])) < 1e-8,
        "summary: statuses and event kinds by name, final_state_mean by state name "
        f"(x {s['final_state_mean']['x']:.6f})")
T.check(res.status_counts() == s["status_counts"], "status_counts() counts /members/status")
res.close()

# --- run(): refuses to overwrite, raises the engine's message --------------------------------
before = open("decay.h5", "rb").read()
try:
    twofold.run("decay.yaml", output="decay.h5", progress=None)
    T.check(False, "an existing output was overwritten without overwrite=True")
except twofold.TwofoldError as e:
    T.check(e.status == 2 and "'decay.h5' already exists" in e.message,
            f"existing output refused: status {e.status}, {e.message!r}")
T.check(open("decay.h5", "rb").read() == before, "the existing file is untouched")
res = twofold.run("decay.yaml", output="decay.h5", overwrite=True, progress=None,
                  set={"ensemble.members": 20})
T.check(res.members == 20, "overwrite=True replaces it")
res.close()
try:
    twofold.run("decay.yaml", output="bad.h5", set={"integrator.t_endd": 3}, progress=None)
    T.check(False, "a bad key was accepted")
except twofold.TwofoldError as e:
    T.check(e.status == 2 and "unknown key 'integrator.t_endd'" in e.message,
            f"bad config: TwofoldError status 2 with the engine's message {e.message[:60]!r}")
T.check(not os.path.exists("bad.h5"), "no file for a bad config")

# --- 2 ranks through twofold mpirun: the 1-rank data ---------------------------------------
two = twofold.run("decay.yaml", output="two.h5", ranks=2, progress=None)
one = twofold.run("decay.yaml", output="one.h5", progress=None)
T.check(two.run["ranks"] == 2 and
        all(np.array_equal(one[k], two[k], equal_nan=one[k].dtype.kind == "f")
            for k in one.keys() if k.startswith("members/")),
        "run(ranks=2): every /members dataset equals the 1-rank run's")
one.close()
two.close()

# --- lazy opening ----------------------------------------------------------------------------
import h5py  # noqa: E402

BIG = 20000
T.run("decay.yaml", "big.h5", f"ensemble.members={BIG}", "output.trajectory_samples=401")
reads = []
for method in ("__getitem__", "read_direct"):
    original = getattr(h5py.Dataset, method)

    def counted(self, *args, _original=original, _method=method, **kwargs):
        reads.append((self.name, _method))
        return _original(self, *args, **kwargs)
    setattr(h5py.Dataset, method, counted)

data_bytes = BIG * 401 * 2 * 8
peak0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
big = twofold.open("big.h5")
peak1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
open_datasets = h5py.h5f.get_obj_count(big.file.id, h5py.h5f.OBJ_DATASET)
T.check(not reads and open_datasets == 0 and big.dims["members"] == BIG,
        f"open: no dataset read ({len(reads)}) or left open ({open_datasets}), "
        f"dims {big.dims} from metadata")
T.check(peak1 - peak0 < data_bytes / 10,
        f"open: peak memory grew {(peak1 - peak0) / 1e6:.1f} MB, the trajectories are "
        f"{data_bytes / 1e6:.0f} MB")
statuses = big.statuses()
T.check([r[0] for r in reads] == ["/members/status"] and len(statuses) == BIG,
        f"statuses() reads /members/status only: {reads}")
traj = big.trajectory()
peak2 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
T.check(peak2 - peak0 > data_bytes / 2,
        f"reading the trajectories does show in the peak memory (+{(peak2 - peak0) / 1e6:.0f} MB)")
big.close()

# --- optional conversions ----------------------------------------------------------------------
with twofold.open("decay.h5") as res:
    try:
        import pandas  # noqa: F401
        df = res.to_pandas()
        ev = res.events().to_pandas()
        T.check(len(df) == 20 and list(df["status"].unique()) == ["ok"] and
                "final_state_x" in df and len(ev) == 20 and set(ev["kind"]) == {"crossing"},
                "to_pandas(): one row per member; events().to_pandas(): one row per event")
    except ImportError:
        print("skipped: pandas is not installed (to_pandas is optional)")
    try:
        import xarray  # noqa: F401
        ds = res.to_xarray()
        T.check(ds["trajectory"].dims == ("member", "sample", "state") and
                list(ds["state"].values) == ["x", "y"],
                f"to_xarray(): named dimensions {ds['trajectory'].dims}")
    except ImportError:
        print("skipped: xarray is not installed (to_xarray is optional)")
# without an event log the counts per kind still convert: their names are /members/events'
nolog = twofold.run("decay.yaml", output="nolog.h5", set={"output.event_log": 0}, progress=None)
with nolog:
    try:
        import pandas  # noqa: F401
        import h5py
        with h5py.File("nolog.h5", "r") as raw:
            counts = raw["members/events"][()][:, 0]  # kind 0: crossing
        df = nolog.to_pandas()
        T.check("members/event_log" not in nolog and "events_crossing" in df and
                df["events_crossing"].tolist() == counts.tolist(),
                "to_pandas() without /members/event_log: events per kind from /members/events")
    except ImportError:
        print("skipped: pandas is not installed (to_pandas is optional)")
T.finish()
