"""results_layout.py — the results layout (docs/CONFIG.md, "Output"; CHANGELOG.md, "One results
layout") and the readers of files written before it.

* A file of this binary: every list of names is an array of strings (state_names, the kinds
  and fields of the logs, the checksum's columns); /lyapunov/blocks and /lyapunov/running
  are blocks x exponents, checked with the Henon map's analytic det J = -b: every row (one
  block) sums to ln b, which a flat or transposed reading would not; a Filippov model
  without a two-fold or an intersection (x' = -a x, y' = 1 across h = y - c) has no
  /members/exits, and the wheel, which draws at its two-fold, has one; likewise only the wheel
  has /members/twofold_visits (a nondeterministic two-fold); a merge of two parts lists them
  in merged_from, an array of strings.
* A copy of each file rewritten here with h5py in the older layout, from its documented
  shape (names one comma-joined string, blocks flat, an all-NaN /members/exits of
  exit.max_logged x (4 + dim) columns and an all-zero /members/twofold_visits for the model
  without draws, merged_from one newline-joined string): the Python reader
  (python/twofold), the postproc attribute reader and `twofold info` give the same objects
  for both files.
* A list of strings is read with bounds (src/io/h5io.c): `twofold info` prints one written
  here by h5py, and refuses it (exit 2, naming the attribute) once its second string's heap
  reference points past the heap.
"""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

import testlib as T

SOURCE = os.environ["SOURCE_DIR"]
sys.path.insert(0, os.path.join(SOURCE, "python"))
sys.path.insert(0, os.path.join(SOURCE, "postproc"))
import twofold  # noqa: E402
from results_layout import names_attr  # noqa: E402

T.setup()
MEMBERS, MAX_LOGGED = 12, 64
T.write("decay.yaml", f"""job: ensemble
model:
  equations:
    name: decay-crossing
    state: [x, y]
    parameters: {{a: 0.7, c: 1.0}}
    switching: y - c
    slip:
      plus: {{x: "-a*x", y: "1"}}
      minus: {{x: "-a*x", y: "1"}}
initial: {{state: [1.0, 0.5], spread: 0.1}}
integrator: {{t_end: 2.0}}
ensemble: {{members: {MEMBERS}, seed: 11}}
output: {{trajectory_samples: 5, event_log: 4}}
exit: {{max_logged: {MAX_LOGGED}}}
""")
T.run("decay.yaml", "decay.h5")
T.run(os.path.join(T.CONFIGS, "henon-spectrum.yaml"), "henon.h5", "lyapunov.transient=100",
      "lyapunov.duration=2000", "lyapunov.blocks=5")
T.run(os.path.join(T.CONFIGS, "wheel-fig5.yaml"), "wheel.h5", "ensemble.members=2",
      "integrator.t_end=5")
for k in (0, 1):
    T.run("decay.yaml", f"decay-part{k}.h5", extra=("--part", f"{k}/2"))
merged = subprocess.run([T.TWOFOLD, "merge", "merged.h5", "decay-part1.h5", "decay-part0.h5",
                         "--quiet"], capture_output=True, text=True)
T.check(merged.returncode == 0, f"two parts merged ({merged.stderr.strip()[:200]})")

# --- the layout this binary writes ---------------------------------------------------------
with h5py.File("decay.h5", "r") as f:
    m = f["members"]
    T.check(list(f.attrs["state_names"]) == ["x", "y"] and
            list(m["event_log"].attrs["fields"]) == ["t", "kind", "from", "to", "x", "y"] and
            list(m["events"].attrs["kinds"])[:2] == ["crossing", "slide_start"] and
            "exits" not in list(m["checksum"].attrs["columns"]),
            "names are arrays of strings: state_names, fields, kinds, checksum columns")
    T.check("exits" not in m and "twofold_visits" not in m and m["events"][()][:, 4].sum() == 0,
            f"a model without two-fold or intersection: no /members/exits, no "
            f"/members/twofold_visits ({sorted(m)})")
with h5py.File("merged.h5", "r") as f:
    T.check(list(f.attrs["merged_from"]) == ["decay-part1.h5", "decay-part0.h5"] and
            f.attrs["merged_from"].dtype.kind == "O",
            f"merged_from is an array of strings: {f.attrs['merged_from']!r}")
with h5py.File("wheel.h5", "r") as f:
    ex = f["members/exits"]
    T.check(ex.shape == (2, MAX_LOGGED * 7) and list(ex.attrs["fields"])[:4] ==
            ["t", "u", "side", "kind"], f"the wheel draws: /members/exits {ex.shape}")
    T.check(f["members/twofold_visits"].shape == (2,),
            "the wheel's nondeterministic two-fold: /members/twofold_visits")
with h5py.File("henon.h5", "r") as f:
    blocks, running = f["lyapunov/blocks"][()], f["lyapunov/running"][()]
    spectrum = f["lyapunov/spectrum"][()]
T.check(blocks.shape == (5, 2) and running.shape == (5, 2) and
        np.max(np.abs(blocks.sum(axis=1) - np.log(0.3))) < 1e-9,
        f"/lyapunov/blocks is blocks x exponents {blocks.shape}: each block's exponents sum to "
        f"ln b = {np.log(0.3):.9f} ({blocks.sum(axis=1)})")
T.check(np.allclose(running[-1], blocks.mean(axis=0), rtol=0, atol=1e-12) and
        np.allclose(np.sort(spectrum)[::-1], np.sort(running[-1])[::-1], rtol=0, atol=1e-12),
        "running's last row is the mean of the blocks, the spectrum")


# --- the same files in the older layout ----------------------------------------------------
def joined(obj, name):
    if name in obj.attrs:
        obj.attrs[name] = ",".join(str(v) for v in obj.attrs[name])


def old_layout(path, dim=None):
    """A copy of path as the documented older layout stored it."""
    old = "old-" + path
    shutil.copy(path, old)
    with h5py.File(old, "r+") as f:
        joined(f, "state_names")
        if "merged_from" in f.attrs:
            f.attrs["merged_from"] = "\n".join(str(v) for v in f.attrs["merged_from"])
        if "members" in f:
            m = f["members"]
            for table, name in (("events", "kinds"), ("event_log", "kinds"),
                                ("event_log", "fields"), ("checksum", "columns")):
                joined(m[table], name)
            if dim is not None:  # every Filippov model had the table, all NaN without draws
                m["exits"] = np.full((len(m["status"]), MAX_LOGGED * (4 + dim)), np.nan)
                m["exits"].attrs["fields"] = ",".join(["t", "u", "side", "kind", "x", "y"])
                m["exits"].attrs["slot_width"] = 4 + dim
                m["checksum"].attrs["columns"] += ",exits"
                m["twofold_visits"] = np.zeros(len(m["status"]), dtype=np.int64)
                m["checksum"].attrs["columns"] += ",twofold_visits"
        for name in ("blocks", "running"):
            if "lyapunov" in f:
                data, attrs = f["lyapunov"][name][()], dict(f["lyapunov"][name].attrs)
                del f["lyapunov"][name]
                f["lyapunov"][name] = data.reshape(-1)
                f["lyapunov"][name].attrs.update(attrs)
    return old


def same(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and (a.tolist() == b.tolist() or
                                       (a.dtype.kind == "f" and np.array_equal(a, b, True)))
    return a == b


for path, dim in (("decay.h5", 2), ("henon.h5", None), ("wheel.h5", None), ("merged.h5", 2)):
    old = old_layout(path, dim)
    with twofold.open(path) as new, twofold.open(old) as was:
        views = {
            "attrs": lambda r: {k: v for k, v in r.attrs.items() if k != "created"},
            "keys": lambda r: sorted(r.keys()),
            "state_names": lambda r: r.state_names,
            "dims": lambda r: r.dims,
            "summary": lambda r: r.summary,
            "lyapunov()": lambda r: r.lyapunov(),
            "blocks": lambda r: r["lyapunov/blocks"] if "lyapunov/blocks" in r else None,
            "event_kinds": lambda r: r.event_kinds() if r.members else None,
            "events()": lambda r: dict(r.events()) if r.members else None,
            "exits()": lambda r: {k: v.tolist() for k, v in r.exits().items()}
            if r.members else None,
            "exits in": lambda r: "members/exits" in r,
            "twofold_visits()": lambda r: r.twofold_visits() if r.members else None,
            "twofold_visits in": lambda r: "members/twofold_visits" in r,
        }
        differ = [k for k, view in views.items() if not same(view(new), view(was))]
        T.check(not differ, f"{path}: the reader gives the same objects for the older layout "
                f"({', '.join(differ) or 'attrs, keys, names, summary, events, exits, visits, blocks'})")
    with h5py.File(path, "r") as f, h5py.File(old, "r") as g:
        lists = [(f, g, "state_names")] if "state_names" in f.attrs else []
        if "members" in f:
            lists += [(f["members/event_log"], g["members/event_log"], "fields"),
                      (f["members/events"], g["members/events"], "kinds")]
        T.check(all(names_attr(a, n) == names_attr(b, n) and names_attr(a, n) for a, b, n in lists),
                f"{path}: postproc's names_attr reads both layouts alike")
        if "merged_from" in f.attrs:
            T.check(names_attr(f, "merged_from", "\n") == names_attr(g, "merged_from", "\n")
                    == ["decay-part1.h5", "decay-part0.h5"],
                    f"{path}: names_attr reads merged_from in both layouts alike")
    info = [subprocess.run([T.TWOFOLD, "info", p], capture_output=True, text=True)
            for p in (path, old)]
    # info lists each dataset with its shape as stored: blocks by their number of elements
    lines = [[" ".join(l.split()[:1] + [str(np.prod([int(w) for w in l.split()[1::2]]))])
              if l.split()[:1] in (["/lyapunov/blocks"], ["/lyapunov/running"]) else l
              for l in i.stdout.splitlines()
              if not l.startswith("file:") and l.split()[:1] not in
              (["/members/exits"], ["/members/twofold_visits"])]
             for i in info]
    T.check(all(i.returncode == 0 for i in info) and lines[0] == lines[1] and
            (dim is None or "state_names: x,y" in info[0].stdout) and
            (path != "merged.h5" or "merged_from: decay-part1.h5,decay-part0.h5" in info[0].stdout),
            f"{path}: twofold info reads both layouts alike (names printed joined)")

# --- a list of strings is read with bounds: each heap reference checked ----------------------
with h5py.File("crafted.h5", "w") as f:
    f.attrs["twofold_version"] = "twofold"
    f.attrs.create("state_names", ["alpha_state", "beta_state"], dtype=h5py.string_dtype())
data = open("crafted.h5", "rb").read()
gcol = data.index(b"GCOL")  # the global heap collection (no user block: address = offset)
at = data.index(b"beta_state") - 16  # its object's header: index (2 bytes), ..., size
index = int.from_bytes(data[at:at + 2], "little")
ref = len(b"beta_state").to_bytes(4, "little") + gcol.to_bytes(8, "little") + \
    index.to_bytes(4, "little")
bad = bytearray(data)
where = data.index(ref)  # the second stored reference of the attribute
bad[where + 12:where + 16] = (4000).to_bytes(4, "little")
open("crafted-bad.h5", "wb").write(bytes(bad))
good, hurt = (subprocess.run([T.TWOFOLD, "info", p], capture_output=True, text=True)
              for p in ("crafted.h5", "crafted-bad.h5"))
T.check(good.returncode == 0 and "state_names: alpha_state,beta_state" in good.stdout and
        hurt.returncode == 2 and "attribute 'state_names'" in hurt.stderr and
        "object 4000 of the global heap" in hurt.stderr,
        f"a list's second reference pointed past its heap: refused, exit {hurt.returncode} "
        f"({hurt.stderr.strip()[:120]})")
T.finish()
