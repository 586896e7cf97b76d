"""layout.py — the HDF5 layout is the public contract: names, shapes, types, chunking,
compression, enum names, provenance attributes; and h5dump (HDF5's own tool) reads it."""
import subprocess

import h5py
import numpy as np

import testlib as T

T.setup()
s = T.run(T.CONFIGS + "/smoke.yaml", "smoke.h5", "ensemble.members=120", "integrator.t_end=0.3",
          ranks=2)
f = h5py.File("smoke.h5", "r")
M = 120
for name, shape, kind in [("final_state", (M, 3), "f"), ("initial_state", (M, 3), "f"),
                          ("t_final", (M,), "f"), ("steps", (M,), "i"), ("done", (M,), "u"),
                          ("status", (M,), "u")]:
    d = f["members/" + name]
    T.check(d.shape == shape and d.dtype.kind == kind, f"/members/{name} {d.shape} {d.dtype}")
    T.check(d.chunks is not None and d.compression == "gzip", f"/members/{name} chunked+gzip")
# /members/checksum: FNV-1a 64 of (member id as uint64, status as uint8, each column's row in
# the order of its `columns` attribute), computed here from the documented definition
c = f["members/checksum"]
T.check(c.shape == (M,) and c.dtype == np.uint64 and c.chunks is not None, f"checksum {c.dtype}")
cols = list(c.attrs["columns"])
T.check(sorted(cols) == ["final_state", "initial_state", "steps", "t_final"], f"columns {cols}")
rows = [f["members/" + n][...] for n in cols]
status = f["members/status"][...].astype(np.uint8)


def fnv1a(data, h=0xCBF29CE484222325):
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


want = [fnv1a(b"".join([np.uint64(i).tobytes(), status[i].tobytes()] + [r[i].tobytes() for r in rows]))
        for i in range(M)]
T.check(list(c[...]) == want, "checksum = FNV-1a 64 of id, status and row")
enum = h5py.check_enum_dtype(f["members/status"].dtype)
T.check(enum == {"pending": 0, "ok": 1, "nonfinite": 2, "max_steps": 3, "step_underflow": 4,
                 "zeno": 5, "failed": 6, "codim2": 7, "ill_posed": 8}, f"status enum {enum}")
T.check(f["members/done"][...].all() and (f["members/status"][...] == 1).all(), "all done, ok")
T.check(np.all(f["members/t_final"][...] == 0.3), "t_final")
T.check(np.all(f["members/steps"][...] == 300), "steps = t_end/dt")
for a in ("twofold_version", "config", "fingerprint", "created", "complete", "model",
          "state_names"):
    T.check(a in f.attrs, f"attribute {a}")
T.check(f.attrs["complete"] == 1 and f.attrs["model"] == "lorenz", "complete, model")
T.check("members: 120" in f.attrs["config"] and "t_end: 0.3" in f.attrs["config"],
        "config as run has the overrides")
T.check("rtol:" in f.attrs["config"], "config as run has the defaults")
T.check(list(f.attrs["state_names"]) == ["x", "y", "z"], "state names (an array of strings)")
for d in ("final_state_mean", "final_state_std", "final_state_min", "final_state_max",
          "status_counts"):
    T.check("summary/" + d in f, f"/summary/{d}")
T.check(list(f["summary/status_counts"][...]) == [0, M, 0, 0, 0, 0, 0, 0, 0], "status counts")
dump = subprocess.run(["h5dump", "-H", "smoke.h5"], capture_output=True, text=True)
T.check(dump.returncode == 0 and "final_state" in dump.stdout and "H5T_ENUM" in dump.stdout,
        "h5dump reads the file")
T.finish()
