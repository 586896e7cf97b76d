#!/usr/bin/env python3
"""intersection_rules.py — the wheel's choices at full stick under two rules compared.

    twofold run configs/wheel-fig5.yaml -o uniform.h5 --set exit.max_logged=200
    twofold run configs/wheel-fig5.yaml -o regularised.h5 --set exit.max_logged=200 \
        --set intersection.policy=regularised
    postproc/intersection_rules.py uniform.h5 regularised.h5

From the regularised run: where along the intersection line (r) its choices went to the
sticking flow (side 0) and where to slip- (-1), and whether one threshold in r separates them.
From the uniform run: the fraction of its choices where the uniform draw took the departure the
regularised rule takes at that r (the threshold's side; choices inside the bracket of the
threshold are counted apart).  Also the members that return to the two-fold under each rule.
"""
import sys

import h5py
import numpy as np


def choices(path):
    with h5py.File(path, "r") as f:
        ex = f["members/exits"][...]
        ex = ex.reshape(ex.shape[0], -1, int(f["members/exits"].attrs["slot_width"]))
        # absent for a model without a nondeterministic two-fold: no member arrives
        visits = f["members/twofold_visits"][...] if "members/twofold_visits" in f \
            else np.zeros(len(f["members/status"]), dtype=np.int64)
        rule = f.attrs.get("intersection_policy", "?")
    slots = ex.reshape(-1, ex.shape[2])
    slots = slots[~np.isnan(slots[:, 0]) & (slots[:, 3] >= 1)]
    return slots[:, 4], slots[:, 2].astype(int), slots[:, 3].astype(int), visits, rule


def main(uniform_path, regularised_path):
    r_reg, side_reg, code_reg, visits_reg, rule = choices(regularised_path)
    assert rule == "regularised", f"{regularised_path} was run with intersection.policy {rule}"
    print(f"regularised: {len(r_reg)} choices, {(code_reg != 3).sum()} undecided (uniform draw)")
    for s in (-1, 0, 1):
        pick = (side_reg == s) & (code_reg == 3)
        if pick.any():
            print(f"  side {s:+d}: {pick.sum()} choices, r in [{r_reg[pick].min():.6f}, {r_reg[pick].max():.6f}]")
    below = r_reg[(side_reg == 0) & (code_reg == 3)].max()
    above = r_reg[(side_reg == -1) & (code_reg == 3)].min()
    separated = below < above and not ((side_reg == 1) & (code_reg == 3)).any()
    print(f"  threshold: sticking flow for r <= {below:.8f}, slip- for r >= {above:.8f}"
          f" ({'one threshold separates them' if separated else 'NOT separated by one threshold'})")

    r_uni, side_uni, code_uni, visits_uni, _ = choices(uniform_path)
    sure = (r_uni <= below) | (r_uni >= above)
    regular_pick = np.where(r_uni <= below, 0, -1)
    agree = (side_uni == regular_pick) & sure
    print(f"uniform: {len(r_uni)} choices, r in [{r_uni.min():.6f}, {r_uni.max():.6f}];"
          f" drawn sides {dict(zip(*np.unique(side_uni, return_counts=True)))}")
    print(f"  the draw took the regularised departure at {agree.sum()} of {sure.sum()} choices"
          f" ({agree.sum() / sure.sum():.3f}); {len(r_uni) - sure.sum()} inside the threshold's bracket")
    print(f"  of them below the threshold (regularised: sticking flow): {((r_uni <= below)).sum()},"
          f" above (slip-): {(r_uni >= above).sum()}")
    for name, v in (("uniform", visits_uni), ("regularised", visits_reg)):
        print(f"returned to the two-fold under {name}: {(v >= 1).sum()} of {len(v)} members"
              f" ({(v >= 1).mean():.3f}), {v.sum()} returns; members by returns"
              f" {dict(enumerate(np.bincount(v)))}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
