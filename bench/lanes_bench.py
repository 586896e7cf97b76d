#!/usr/bin/python3
"""lanes_bench.py — bench section "lanes": members per CPU second (per core) of DOPRI5
ensembles with integrator.lanes 8 and 16 against lanes 1 (member by member, the engine before
lanes) and, for Lorenz, against the boost::odeint peer (bench/lanes_odeint.cpp) integrating the
same initial states at the same tolerances.  Runs alternate (lanes 8, lanes 1, lanes 16, peer,
lanes 8, ...) for --pairs rounds in this one invocation; the table gives medians and the
spread (min-max) of the rates and the median of the per-round ratios.  Rates count the CPU
seconds of the whole twofold process (start-up and HDF5 included) on one rank.

  lanes_bench.py BUILD_DIR [--members N] [--pairs P]    (last stdout line: the JSON record)
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

import h5py

LORENZ = """job: ensemble
model:
  name: lorenz
initial:
  state: [1, 1, 20]
  spread: 0.5
integrator:
  t_end: 10
  rtol: 1.0e-9
  atol: 1.0e-9
ensemble:
  members: {members}
"""
# the smoothed Jeffrey oscillator under DOPRI5 (its lanes field takes glibc's sin lane by lane)
JEFFREY = """job: ensemble
model:
  name: jeffrey-oscillator
  params: {{k: 1, c: 0.1, N: 1, a: 1.5, omega: 0.2, rho: 2, beta: 0.01, eps: 0.05}}
initial:
  state: [0, 0, 1, 0]
  spread: 0.1
integrator:
  method: dopri5
  t_end: 20
  rtol: 1.0e-8
  atol: 1.0e-10
ensemble:
  members: {members}
"""


def cpu_of(cmd, **kw):
    """Runs cmd; its stdout's last line as JSON and the CPU seconds it took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out.strip().splitlines()[-1]), cpu


def twofold_rate(exe, cfg, work, lanes):
    out = os.path.join(work, f"l{lanes}.h5")
    j, cpu = cpu_of([exe, "run", cfg, "-o", out, "--overwrite", "--quiet", "--json",
                     "--set", f"integrator.lanes={lanes}"])
    return j["members"] / cpu, out


def peer_rate(exe, states, t_end, rtol, atol):
    with open(states) as f:
        j, _ = cpu_of([exe, str(t_end), str(rtol), str(atol)], stdin=f)
    return j["members_per_cpu_second"]


def summary(rates):
    return {"median": statistics.median(rates), "min": min(rates), "max": max(rates),
            "runs": rates}


def measure(build, text, members, pairs, work, peer):
    cfg = os.path.join(work, "ens.yaml")
    with open(cfg, "w") as f:
        f.write(text.format(members=members))
    exe = os.path.join(build, "twofold")
    rates = {"lanes 8": [], "lanes 1": [], "lanes 16": [], "odeint": []}
    states = os.path.join(work, "states.txt")
    for _ in range(pairs):
        r8, h5 = twofold_rate(exe, cfg, work, 8)
        rates["lanes 8"].append(r8)
        rates["lanes 1"].append(twofold_rate(exe, cfg, work, 1)[0])
        rates["lanes 16"].append(twofold_rate(exe, cfg, work, 16)[0])
        if peer:
            if not os.path.exists(states):
                with h5py.File(h5) as f, open(states, "w") as out:
                    for x in f["members/initial_state"][()]:
                        out.write(" ".join(repr(float(v)) for v in x) + "\n")
            rates["odeint"].append(peer_rate(peer, states, 10, 1e-9, 1e-9))
    res = {k: summary(v) for k, v in rates.items() if v}
    n = len(rates["lanes 1"])
    res["ratio_8_to_1"] = statistics.median(rates["lanes 8"][i] / rates["lanes 1"][i] for i in range(n))
    res["ratio_16_to_1"] = statistics.median(rates["lanes 16"][i] / rates["lanes 1"][i] for i in range(n))
    if rates["odeint"]:
        res["ratio_8_to_odeint"] = statistics.median(
            rates["lanes 8"][i] / rates["odeint"][i] for i in range(n))
        res["ratio_1_to_odeint"] = statistics.median(
            rates["lanes 1"][i] / rates["odeint"][i] for i in range(n))
    return res


def rows(name, r):
    out = []
    for k in ("lanes 8", "lanes 16", "lanes 1", "odeint"):
        if k in r:
            s = r[k]
            out.append(f"| {name} | {k} | {s['median']:.0f} | {s['min']:.0f}–{s['max']:.0f} |")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--members", type=int, default=4000)
    ap.add_argument("--pairs", type=int, default=5)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    peer = os.path.join(build, "bench_lanes_odeint")
    peer = peer if os.access(peer, os.X_OK) else None
    if os.geteuid() == 0:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory() as work:
        lorenz = measure(build, LORENZ, a.members, a.pairs, work, peer)
        jeffrey = measure(build, JEFFREY, a.members // 4, a.pairs, work, None)
    table = "\n".join(["| ensemble | engine | members per CPU s (median) | spread |", "|---|---|---|---|"]
                      + rows(f"Lorenz, {a.members} members", lorenz)
                      + rows(f"smoothed Jeffrey, {a.members // 4} members", jeffrey))
    peer_text = (f"lanes 8 are **{lorenz['ratio_8_to_odeint']:.2f}×** the odeint peer "
                 f"(lanes 1: {lorenz['ratio_1_to_odeint']:.2f}×)" if "ratio_8_to_odeint" in lorenz
                 else "the odeint peer was not built")
    md = f"""## Lanes: members side by side per core (bench/lanes_bench.py)

DOPRI5 ensembles on 1 rank, members per CPU second of the whole twofold process (start-up,
about 0.3 CPU s, and HDF5 included; the odeint peer counts its integration loop only), medians of {a.pairs} alternated rounds (lanes 8, lanes 1, lanes 16, peer, ...) in one
invocation.  Lorenz (t = 0..10, rtol = atol = 1e-9, configs as in the script) uses the model's
lanes field, and so does the smoothed Jeffrey oscillator (eps = 0.05, t = 0..20).  The results files of every width are identical (tests/scripts/lanes.py).

{table}

Median per-round ratios: Lorenz lanes 8 / lanes 1 **{lorenz['ratio_8_to_1']:.2f}×**, lanes 16 /
lanes 1 {lorenz['ratio_16_to_1']:.2f}×; {peer_text}.  Smoothed Jeffrey lanes 8 / lanes 1
**{jeffrey['ratio_8_to_1']:.2f}×**, lanes 16 / lanes 1 {jeffrey['ratio_16_to_1']:.2f}×.  The
machine is shared with other jobs and noisy: the spread column says how much."""
    print(json.dumps({"title": "lanes", "markdown": md, "lorenz": lorenz, "jeffrey": jeffrey,
                      "members": a.members, "pairs": a.pairs}))


if __name__ == "__main__":
    sys.exit(main())
