"""h5compare.py A.h5 B.h5 — every /members dataset and every /summary dataset of two results
files are bitwise equal (same names, types, shapes and bytes) and both files are complete.
Prints "same" or what differs; exit 1 if anything differs (used by the shell tests)."""
import sys

import h5py

a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
bad = []
for group in ("members", "summary"):
    if group not in a or group not in b:
        bad.append(f"/{group} missing")
        continue
    if set(a[group]) != set(b[group]):
        bad.append(f"/{group}: {sorted(a[group])} vs {sorted(b[group])}")
    for name in sorted(set(a[group]) & set(b[group])):
        x, y = a[group][name][...], b[group][name][...]
        if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
            bad.append(f"/{group}/{name}")
for f, path in ((a, sys.argv[1]), (b, sys.argv[2])):
    if f.attrs.get("complete") != 1:
        bad.append(f"{path} not complete")
print("same" if not bad else "differ: " + ", ".join(bad))
sys.exit(1 if bad else 0)
