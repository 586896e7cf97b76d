#!/usr/bin/python3
"""scalar_dopri_pairs.py — two builds of twofold timed against each other on the Lorenz ensemble
of lanes_bench.py (DOPRI5, t = 0..10, rtol = atol = 1e-9, one rank): the member-by-member path
(integrator.lanes: 1) and the lanes path (integrator.lanes: 8), each in alternated pairs
(before, after, before, after, ...), with CPU seconds (user + sys) of the whole process.  It
prints the median and spread of each build's CPU seconds, the median of the per-pair ratios
before / after (above 1: the after build is faster), and, where the after build has the odeint
peer (bench_lanes_odeint), the median per-round ratio of twofold's lanes-1 rate to the peer's.
The results files of the two builds are compared: they must be bitwise equal.

  scalar_dopri_pairs.py BEFORE_BUILD AFTER_BUILD [--members N] [--pairs P] [--lanes 1,8]
                                                  (last stdout line: the JSON record)
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lanes_bench import LORENZ, cpu_of, peer_rate  # noqa: E402  (one copy of the config)


def run_cpu(build, cfg, out, lanes):
    """CPU seconds of one whole twofold run."""
    exe = os.path.join(build, "twofold")
    _, cpu = cpu_of([exe, "run", cfg, "-o", out, "--overwrite", "--quiet", "--json",
                     "--set", f"integrator.lanes={lanes}"])
    return cpu


def same_results(a, b):
    with h5py.File(a) as fa, h5py.File(b) as fb:
        return all(np.array_equal(fa["members"][k][()], fb["members"][k][()])
                   for k in ("final_state", "t_final", "steps", "status"))


def states_file(h5, path):
    with h5py.File(h5) as f, open(path, "w") as out:
        for x in f["members/initial_state"][()]:
            out.write(" ".join(repr(float(v)) for v in x) + "\n")


def spread(v):
    return {"median": statistics.median(v), "min": min(v), "max": max(v)}


def measure(before, after, cfg, members, work, lanes, pairs, peer):
    b_out, a_out = os.path.join(work, "before.h5"), os.path.join(work, "after.h5")
    cpu_b, cpu_a, peer_ratio = [], [], []
    states = os.path.join(work, "states.txt")
    for _ in range(pairs):
        cpu_b.append(run_cpu(before, cfg, b_out, lanes))
        cpu_a.append(run_cpu(after, cfg, a_out, lanes))
        if peer:
            if not os.path.exists(states):
                states_file(a_out, states)
            peer_ratio.append((members / cpu_a[-1]) / peer_rate(peer, states, 10, 1e-9, 1e-9))
    res = {"lanes": lanes, "before_cpu_s": spread(cpu_b), "after_cpu_s": spread(cpu_a),
           "ratio_before_to_after": statistics.median(b / a for b, a in zip(cpu_b, cpu_a)),
           "identical": same_results(b_out, a_out)}
    if peer_ratio:
        res["after_to_odeint"] = statistics.median(peer_ratio)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--members", type=int, default=4000)
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--lanes", default="1,8")
    a = ap.parse_args()
    before, after = os.path.abspath(a.before), os.path.abspath(a.after)
    peer = os.path.join(after, "bench_lanes_odeint")
    peer = peer if os.access(peer, os.X_OK) else None
    if os.geteuid() == 0:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    results = []
    with tempfile.TemporaryDirectory() as work:
        cfg = os.path.join(work, "lorenz.yaml")
        with open(cfg, "w") as f:
            f.write(LORENZ.format(members=a.members))
        for lanes in (int(w) for w in a.lanes.split(",")):
            r = measure(before, after, cfg, a.members, work, lanes, a.pairs,
                        peer if lanes == 1 else None)
            results.append(r)
            b, af = r["before_cpu_s"], r["after_cpu_s"]
            line = (f"lanes {lanes}: before {b['median']:.3f} s ({b['min']:.3f}-{b['max']:.3f}), "
                    f"after {af['median']:.3f} s ({af['min']:.3f}-{af['max']:.3f}), "
                    f"median before/after {r['ratio_before_to_after']:.3f}, "
                    f"identical {r['identical']}")
            if "after_to_odeint" in r:
                line += f", after / odeint {r['after_to_odeint']:.3f}"
            print(line, flush=True)
    print(json.dumps({"members": a.members, "pairs": a.pairs, "results": results}))
    return 0 if all(r["identical"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
