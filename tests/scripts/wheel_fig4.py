"""wheel_fig4.py — the `singularity-map` job (configs/wheel-fig4.yaml, Fig. 4 of Szalai & Jeffrey
2014) on a small grid: rank independence, agreement with a sympy oracle, the paper's claim, bad input.

1. The 25 x 20 map run on 1 rank and on 3 ranks (small chunks, so members interleave across ranks)
   must give bitwise identical /members datasets: a grid point is a member, and members may not
   depend on who computed them.
2. At a handful of grid points spread over the classes (valid and invalid parameters), kappa, k2,
   the two-fold, K++, K+-, K-+, K--, J1, J2 and the class must agree with sympy.  The oracle is
   wheel_oracle.py (shared with wheel_singularity.py): kappa, k2, v* solved from the two-fold
   conditions, K's as exact second Lie derivatives, evaluated at the grid's exact binary values to
   30 digits.
3. The grid is chosen so that the paper's point (0.1859, -1.037) is a node: it must be in the
   case-1 region, and that region must be neither empty nor the whole grid.
4. A map.x.param that is not a parameter of the model exits with status 2 and a message that
   names the key and lists the parameters.
"""
import math
import os
import subprocess

import h5py
import numpy as np
import sympy as sp

import testlib as T
from wheel_oracle import (DIGITS, classify, curvatures, derive_twofold, jays, k2, kappa, margin, r,
                          twofold_point, v, vs, w)

# x_i = -0.0241 + 0.03 i and y_j = -1.937 + 0.1 j put (0.1859, -1.037) at node (7, 9) and keep
# rstar = 0, rstar = r0 and omegastar = omega0 (singular or degenerate) off the grid.
NX, NY = 25, 20
GRID = [f"map.x.min={-0.0241}", f"map.x.max={-0.0241 + 0.03 * (NX - 1):.4f}", f"map.x.points={NX}",
        f"map.y.min={-1.937}", f"map.y.max={-1.937 + 0.1 * (NY - 1):.3f}", f"map.y.points={NY}"]
PAPER_NODE = (7, 9)
# (i, j, what the oracle is expected to say): chosen from the map so each regime is represented
CHECK_NODES = [
    (7, 9, "teixeira-case1"),     # the paper's point
    (20, 3, "teixeira-case1"),    # deep in the case-1 region
    (12, 14, "teixeira-case3"),   # omegastar > omega0: J1 J2 < 1
    (10, 3, "visible-invisible"),  # below the K++ = 0 curve
    (3, 12, "visible-invisible"),  # 0 < rstar < r0: k2 < 0 (invalid)
    (1, 15, "visible"),           # rstar near 0: kappa large, k2 < 0 (invalid)
    (0, 5, "visible"),            # rstar < 0: kappa < 0 (invalid)
]


# --- the oracle's reference values ------------------------------------------------------------
def reference(derived, K, rstar, wstar):
    """Reference values at the two-fold (r*, w*) given as exact rationals; K from curvatures()."""
    at = twofold_point(derived, rstar, wstar)
    point = {r: rstar, v: at[vs], w: wstar, kappa: at[kappa], k2: at[k2]}
    ref = {key: sp.N(e.subs(point), DIGITS) for key, e in K.items()}
    ref["J1"], ref["J2"] = jays(ref)
    ref["class"] = classify(ref["K_pp"], ref["K_mm"], ref["J1"], ref["J2"])
    ref["kappa"], ref["k2"] = sp.N(at[kappa], DIGITS), sp.N(at[k2], DIGITS)
    ref["twofold"] = [sp.N(rstar, DIGITS), sp.N(at[vs], DIGITS), sp.N(wstar, DIGITS)]
    ref["_margin"] = margin(ref)
    return ref


# --- checks ---------------------------------------------------------------------------------
def close(got, want):
    return math.isfinite(got) and abs(got - float(want)) <= max(1e-6 * abs(float(want)), 1e-9)


def read_members(path):
    with h5py.File(path, "r") as f:
        out = {name: ds[()] for name, ds in f["members"].items()}
        out["_attrs"] = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
        out["_x"], out["_y"] = f["map/x"][()], f["map/y"][()]
        out["_class_counts"] = f["summary/class_counts"][()]
    return out


def check_ranks(one, three):
    names = sorted(k for k in one if not k.startswith("_"))
    T.check(names == sorted(k for k in three if not k.startswith("_")) and len(names) == 10,
            f"both files hold the same /members datasets ({', '.join(names)})")
    for name in names:
        a, b = one[name], three[name]
        same = a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        T.check(same and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"),
                f"/members/{name} is bitwise equal on 1 and 3 ranks")


def check_oracle(res):
    classes = list(res["_attrs"]["class_names"])
    derived_names = list(res["_attrs"]["derived_names"])
    T.check(derived_names == ["kappa", "k2"], f"derived_names {derived_names}")
    derived, K = derive_twofold(), curvatures()
    for i, j, expected in CHECK_NODES:
        mem = j * NX + i
        x, y = res["grid"][mem]
        T.check(x == res["_x"][i] and y == res["_y"][j], f"member {mem} is grid node ({i}, {j})")
        ref = reference(derived, K, sp.Rational(float(x)), sp.Rational(float(y)))
        name = f"node ({i}, {j}) = ({x:.4f}, {y:.4f})"
        T.check(ref["class"] == expected and ref["_margin"] > 1e-3,
                f"{name}: oracle says {ref['class']} (expected {expected}), margin "
                f"{float(ref['_margin']):.3g}")
        got = {"kappa": res["derived"][mem][0], "k2": res["derived"][mem][1],
               "K_pp": res["K"][mem][0], "K_pm": res["K"][mem][1], "K_mp": res["K"][mem][2],
               "K_mm": res["K"][mem][3], "J1": res["J"][mem][0], "J2": res["J"][mem][1]}
        for key, value in got.items():
            want = ref[key]
            if want is None:
                T.check(math.isnan(value), f"{name}: {key} undefined, engine gives {value!r}")
            else:
                T.check(close(value, want), f"{name}: {key} engine {value!r} vs oracle {float(want):.12e}")
        T.check(all(close(a, b) for a, b in zip(res["twofold"][mem], ref["twofold"])),
                f"{name}: two-fold {res['twofold'][mem].tolist()}")
        cls = int(res["class"][mem])
        T.check(0 <= cls < len(classes) and classes[cls] == ref["class"],
                f"{name}: class {classes[cls] if 0 <= cls < len(classes) else cls} vs oracle {ref['class']}")
        valid = bool(ref["kappa"] > 0 and ref["k2"] > 0)
        T.check(bool(res["valid"][mem]) == valid, f"{name}: valid = {res['valid'][mem]} (kappa, k2 > 0: {valid})")


def check_region(res, summary):
    classes = list(res["_attrs"]["class_names"])
    case1 = (res["class"] == classes.index("teixeira-case1")) & (res["valid"] == 1)
    i, j = PAPER_NODE
    x, y = res["grid"][j * NX + i]
    T.check(abs(x - 0.1859) < 1e-12 and abs(y + 1.037) < 1e-12, f"node {PAPER_NODE} is the paper's point")
    T.check(bool(case1[j * NX + i]), "the paper's point is in the case-1 region")
    T.check(0 < case1.sum() < NX * NY, f"the case-1 region is a proper part of the grid "
                                       f"({case1.sum()} of {NX * NY} points)")
    T.check(summary.get("nondeterministic") == int(case1.sum()), "JSON nondeterministic = case-1 points")
    counts = summary.get("class_counts", {})
    T.check(sum(counts.values()) == NX * NY and counts.get("teixeira-case1") == int(
        (res["class"] == 0).sum()), f"JSON class_counts {counts}")
    T.check(res["_class_counts"].tolist() == [counts.get(c) for c in classes + ["none"]],
            "/summary/class_counts matches the JSON")
    T.check(res["_attrs"].get("map_x_param") == "rstar" and res["_attrs"].get("map_y_param") == "omegastar",
            "map_x_param and map_y_param attributes")


def check_bad_param(config):
    cmd = [T.TWOFOLD, "run", config, "-o", "bad.h5", "--quiet", "--set", "map.x.param=rstr"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    msg = res.stderr
    T.check(res.returncode == 2, f"unknown map.x.param exits 2 (got {res.returncode})")
    T.check("map.x.param" in msg and "rstar" in msg and "omegastar" in msg and "kappa" in msg,
            f"message names the key and lists the parameters: {msg.strip()}")
    T.check(not os.path.exists("bad.h5"), "no results file is written on bad input")


def main():
    T.setup()
    config = os.path.join(T.CONFIGS, "wheel-fig4.yaml")
    s1 = T.run(config, "map1.h5", *GRID)
    s3 = T.run(config, "map3.h5", *GRID, "ensemble.chunk=7", ranks=3)
    T.check(s1.get("points") == NX * NY and s1.get("failed") == 0, f"1 rank: {s1}")
    one, three = read_members("map1.h5"), read_members("map3.h5")
    check_ranks(one, three)
    check_oracle(one)
    check_region(one, s1)
    T.check(s3.get("class_counts") == s1.get("class_counts"), "3 ranks: same class counts")
    check_bad_param(config)
    T.finish()


if __name__ == "__main__":
    main()
