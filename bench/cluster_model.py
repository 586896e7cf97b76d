#!/usr/bin/python3
"""cluster_model.py — the scheduler and I/O overhead model of docs/CLUSTER.md, evaluated.

    /usr/bin/python3 bench/cluster_model.py [--members M] [--cost C] [--bytes R] ...

T(P) = launch + init(P) + M c / P + R (t_round(P) + chunk c / 2) + write + summary + tail,
R = M c / (P f) flush rounds.  An array of N tasks of P/N ranks runs the same per task (its
own file) and adds the merge.  The measured constants come from bench/cluster_overhead.sh on
this machine; the per-rank growth and the file-system bandwidths are assumptions for a
cluster (stated in the output)."""
import argparse
import math

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--members", type=float, default=1e7)
ap.add_argument("--cost", type=float, default=0.021, help="seconds per member on one core")
ap.add_argument("--cost-max", type=float, default=0.21, help="slowest members, seconds")
ap.add_argument("--bytes", type=float, default=12e3, help="compressed bytes per member")
ap.add_argument("--raw-bytes", type=float, default=21e3, help="uncompressed bytes per member")
ap.add_argument("--summary-bytes", type=float, default=33, help="read back per member")
ap.add_argument("--flush", type=float, default=60, help="output.flush_interval, s")
ap.add_argument("--chunk", type=float, default=16)
# measured here (bench/cluster_overhead.sh; start-up and claim: bench/multinode_overhead.sh,
# quiet machine, srun --mpi=pmix on 1-4 namespace nodes)
ap.add_argument("--startup", type=float, default=0.2,
                help="1-rank start-up under srun, s (measured: 0.20 s on 1 node)")
ap.add_argument("--round", type=float, default=0.003, help="1-rank flush round, s (measured)")
ap.add_argument("--deflate", type=float, default=80e6, help="B/s per rank (BENCHMARKS.md)")
ap.add_argument("--summary-rate", type=float, default=110e6, help="B/s, measured")
ap.add_argument("--claim", type=float, default=3e-5,
                help="one chunk claim (MPI atomic on rank 0 over TCP), s: an upper bound, "
                     "below the noise on 1-4 namespace nodes (bench/multinode_overhead.sh)")
# assumptions for a cluster
ap.add_argument("--launch-per-rank", type=float, default=1e-4, help="PMIx launch, s/rank")
ap.add_argument("--init-per-rank", type=float, default=2e-4, help="MPI_Init wire-up, s/rank")
ap.add_argument("--round-per-rank", type=float, default=2e-5, help="s/rank per round")
ap.add_argument("--fs", type=float, default=5e9, help="shared file system write, B/s")
ap.add_argument("--copy", type=float, default=1e9, help="merge copy, B/s")
a = ap.parse_args()

M, c = a.members, a.cost
W = M * c


def one_job(P, write_share=1.0):
    """Seconds of each term for P ranks writing M members into one file."""
    work = W / P
    start = a.startup + (a.launch_per_rank + a.init_per_rank) * P
    rounds = max(1, math.ceil(work / a.flush))
    t_rounds = rounds * (a.round + a.round_per_rank * P)
    idle = rounds * a.chunk * c / 2 if P > 1 else 0.0  # waiting for the slowest rank
    write = max(M * a.raw_bytes / (P * a.deflate), M * a.bytes / (a.fs * write_share))
    summary = M * a.summary_bytes / a.summary_rate
    tail = a.chunk * a.cost_max
    return dict(work=work, start=start, rounds=t_rounds, nrounds=rounds, idle=idle,
                write=write, summary=summary, tail=tail)


def fmt(s):
    if s >= 7200:
        return f"{s / 3600:.0f} h"
    if s >= 120:
        return f"{s / 60:.1f} min"
    return f"{s:.2g} s" if s < 10 else f"{s:.0f} s"


print(f"Model for M = {M:.0e} members of {c * 1e3:.0f} ms ({W / 3600:.0f} core-hours), "
      f"{a.bytes / 1e3:.3g} kB per member, flush_interval {a.flush:.0f} s, chunk {a.chunk:.0f}.")
print()
print("| P | work M·c/P | launch + init | rounds | round idle | writes | summary + tail | efficiency |")
print("|---|---|---|---|---|---|---|---|")
for P in (1, 2, 4, 64, 1024, 10000):
    t = one_job(P)
    total = sum(v for k, v in t.items() if k != "nrounds")
    print(f"| {P} | {fmt(t['work'])} | {fmt(t['start'])} | {t['nrounds']} × "
          f"{(a.round + a.round_per_rank * P) * 1e3:.0f} ms | {fmt(t['idle'])} | "
          f"{fmt(t['write'])} | {fmt(t['summary'] + t['tail'])} | {t['work'] / total:.2f} |")
for P, per_task in ((10000, 128),):
    N = P // per_task
    t = one_job(per_task, 1.0)
    # each task computes M/N members with its ranks and shares the file system with N-1 others
    t["work"] = W / P
    t["nrounds"] = max(1, math.ceil(t["work"] / a.flush))
    t["rounds"] = t["nrounds"] * (a.round + a.round_per_rank * per_task)
    t["idle"] = t["nrounds"] * a.chunk * c / 2
    t["write"] = max(M / N * a.raw_bytes / (per_task * a.deflate), M * a.bytes / a.fs)
    t["summary"] = M / N * a.summary_bytes / a.summary_rate
    merge = M * a.bytes / a.copy + M * a.summary_bytes / a.summary_rate
    task = sum(v for k, v in t.items() if k != "nrounds")
    print(f"| {P} as {N} tasks × {per_task} | {fmt(t['work'])} | {fmt(t['start'])} | "
          f"{t['nrounds']} × {(a.round + a.round_per_rank * per_task) * 1e3:.0f} ms | "
          f"{fmt(t['idle'])} | {fmt(t['write'])} + merge {fmt(merge)} | "
          f"{fmt(t['summary'] + t['tail'])} | {t['work'] / (task + merge):.2f} "
          f"({t['work'] / task:.2f} without merging) |")
print()
# Claims: each rank waits t_claim per claim; rank 0 serves all M/chunk of them one after the
# other, which bounds the run below by M/chunk * t_claim however many ranks there are.
claims_total = M / a.chunk * a.claim
print(f"Chunk claims: {M / a.chunk:.3g} atomics on rank 0 at {a.claim * 1e6:.0f} us each: "
      f"{fmt(claims_total)} if rank 0 serves them one at a time, against "
      f"{fmt(W / 10000)} of work per rank at 10^4 ranks (chunk >= P t_claim / c = "
      f"{10000 * a.claim / c:.0f} keeps the counter below the work).")
p_io = a.fs * c / a.bytes
p_work = W / 600
print(f"I/O bound: the shared file system writes M·r as fast as P* = B_fs·c/r = {p_io:.0f} "
      f"ranks compute it; 10 minutes of work per rank: P <= M·c/600 s = {p_work:.0f}.")
print(f"Assumed for a cluster: launch {a.launch_per_rank * 1e3:.1f} ms and MPI_Init "
      f"{a.init_per_rank * 1e3:.1f} ms per rank, {a.round_per_rank * 1e6:.0f} us per rank "
      f"per round, file system {a.fs / 1e9:.0f} GB/s, merge copy {a.copy / 1e9:.0f} GB/s.")
