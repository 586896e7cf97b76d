"""wheel_rule_recurrence.py — postproc/wheel_rule_recurrence.py on tiny ensembles (8 members
to t = 100; the rules uniform and weighted with q = 0 and q = 1).

Checked against the results files, read here with h5py:
- every rule ran what it says: the file's intersection_policy attribute, and for q = 1 every
  weighted choice at full stick went along the sliding departure (side 0 in /members/exits),
  for q = 0 none did (weight 0 is never taken while another departure is admissible);
- the fraction returning is the fraction of members with /members/twofold_visits > 0, its
  interval scipy's Wilson interval, the returns per member the mean of twofold_visits, the
  first returns the two-fold exits after the start in the complete exit logs;
- the Markdown table has a row per rule, and the figure is a PNG;
- a second call with the same arguments reuses the files (no run), --fresh reruns them.
"""
import json
import os
import subprocess
import sys

import h5py
import numpy as np
from scipy.stats import binomtest

import testlib as T

T.setup()
SRC = os.environ["SOURCE_DIR"]
SCRIPT = os.path.join(SRC, "postproc", "wheel_rule_recurrence.py")
ARGS = [sys.executable, SCRIPT, "--twofold", T.TWOFOLD, "--members", "8", "--runs", "runs",
        "--rules", "uniform", "--q", "0", "1", "--set", "integrator.t_end=100",
        "--figure", "rule.png", "--json", "rule.json"]


def call(*extra):
    res = subprocess.run(list(ARGS) + list(extra), capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(f"wheel_rule_recurrence.py exited {res.returncode}: {res.stderr[-800:]}")
    return res


res = call()
out = json.load(open("rule.json"))
names = [r["name"] for r in out["results"]]
T.check(names == ["uniform", "q0.0000", "q1.0000"] and not out["skipped"],
        f"three rules ran: {names}")
for r in out["results"]:
    with h5py.File(r["path"], "r") as f:
        policy = f.attrs["intersection_policy"]
        visits = f["members/twofold_visits"][:]
        ex = f["members/exits"]
        fields = list(ex.attrs["fields"])
        rows = ex[:].reshape(len(visits), -1, int(ex.attrs["slot_width"]))
    kind, side = fields.index("kind"), fields.index("side")
    s = r["stats"]
    want = "uniform" if r["q"] is None else "weighted"
    k = int((visits > 0).sum())
    ci = binomtest(k, len(visits)).proportion_ci(confidence_level=0.95, method="wilson")
    T.check(policy == want and s["returns"]["fraction"] == k / len(visits)
            and np.allclose(s["returns"]["fraction_ci"], [ci.low, ci.high], rtol=0, atol=1e-12)
            and s["returns"]["per_member"] == visits.mean(),
            f"{r['label']}: intersection.policy {policy}; returning {k} of {len(visits)} "
            f"(twofold_visits), Wilson interval scipy's, {visits.mean():.3f} returns per member")
    first = []
    for m in rows:
        m = m[~np.isnan(m[:, 0])]
        back = m[m[:, kind] == 0, 0][1:]  # two-fold exits after the start's
        if len(back):
            first.append(back[0])
    T.check(s["first_return_times"] == sorted(first) and s["first_return_lost"] == 0,
            f"{r['label']}: first returns {np.round(sorted(first), 2).tolist()} from the exit log")
    if r["q"] is not None:
        done = np.concatenate([m[(m[:, kind] > 0) & ~np.isnan(m[:, 0])] for m in rows])
        weighted = done[done[:, kind] == 2]
        on_sliding = weighted[:, side] == 0
        ok = on_sliding.all() if r["q"] == 1 else not on_sliding.any()
        T.check(len(weighted) > 0 and ok,
                f"{r['label']}: {int(on_sliding.sum())} of {len(weighted)} weighted choices "
                "along the sliding departure")
table = [line for line in res.stdout.splitlines() if line.startswith("|")]
T.check(len(table) == 2 + 3 and table[2].startswith("| uniform |")
        and table[3].startswith("| q = 0 |") and table[4].startswith("| q = 1 |"),
        "the Markdown table has a header and one row per rule")
T.check(open("rule.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n", "figure written")
again = call()
T.check(again.stderr.count("reused") == 3, "the same command line reuses the three files")
fresh = call("--fresh")
T.check("reused" not in fresh.stderr and json.load(open("rule.json"))["results"][1]["stats"]
        == out["results"][1]["stats"], "--fresh reruns them, with the same results")
T.finish()
