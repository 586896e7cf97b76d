#!/usr/bin/env bash
# section_startup.sh — bench section "startup": the whole-process time of a trivial
# one-process twofold run (the smoke ensemble with 1 member of one step), started without a
# launcher as array tasks, small scans and `check` are, next to `true`, a bare
# MPI_Init/MPI_Finalize program with Open MPI's default singleton and with the isolated
# singleton twofold asks for, and twofold with Open MPI's defaults (TWOFOLD_MPI_FULL_SINGLETON=1).
#
#   bench/section_startup.sh BUILD_DIR     (env: STARTUP_REPEATS 15)
# Each row: the median and the minimum over the repeats of the wall time of the whole process
# (fork to exit), and its CPU time.  Last stdout line: the JSON record for bench/report.py.
set -euo pipefail
BUILD=$(cd "${1:?usage: section_startup.sh BUILD_DIR}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/startup.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
[ -x "$BUILD/bench_mpi_init_bare" ] || { echo "section_startup: $BUILD/bench_mpi_init_bare not built" >&2; exit 1; }
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$PY" - "$BUILD" "$ROOT" "$WORK" "${STARTUP_REPEATS:-15}" <<'PY'
import json, os, resource, statistics, subprocess, sys, time
build, root, work, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
clean = {k: v for k, v in os.environ.items()
         if not k.startswith(("OMPI_MCA_", "PMIX_", "PMI_", "OMPI_COMM_WORLD", "TWOFOLD_MPI"))}
isolated = dict(clean, OMPI_MCA_ess_singleton_isolated="1", OMPI_MCA_pml="ob1", OMPI_MCA_btl="self",
                OMPI_MCA_mtl="^ofi,psm,psm2", OMPI_MCA_osc="^ucx")
trivial = [f"{build}/twofold", "run", f"{root}/configs/smoke.yaml", "-o", f"{work}/t.h5",
           "--overwrite", "--quiet", "--set", "ensemble.members=1", "--set", "integrator.t_end=0.001"]
cases = [("`true`", ["true"], clean),
         ("bare MPI_Init/Finalize, Open MPI's default singleton", [f"{build}/bench_mpi_init_bare"], clean),
         ("bare MPI_Init/Finalize, isolated singleton (self transport)", [f"{build}/bench_mpi_init_bare"], isolated),
         ("twofold trivial run, Open MPI's default singleton (TWOFOLD_MPI_FULL_SINGLETON=1)", trivial,
          dict(clean, TWOFOLD_MPI_FULL_SINGLETON="1")),
         ("**twofold trivial run (as shipped)**", trivial, clean),
         ("twofold --version (no MPI)", [f"{build}/twofold", "--version"], clean)]
rows, res = [], {"repeats": n, "cases": {}}
for name, cmd, env in cases:
    walls, cpus = [], []
    for _ in range(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.monotonic() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    med, low, cpu = statistics.median(walls), min(walls), statistics.median(cpus)
    res["cases"][name] = {"median_s": med, "min_s": low, "cpu_s": cpu}
    rows.append(f"| {name} | {med:.3f} | {low:.3f} | {cpu:.3f} |")
shipped = res["cases"]["**twofold trivial run (as shipped)**"]["median_s"]
res["trivial_run_median_s"] = shipped
res["title"] = "Start-up"
table = "\n".join(rows)
res["markdown"] = f"""## Start-up of a trivial run (bench/section_startup.sh)

Whole-process wall time (fork to exit) of a one-process run started without a launcher, as
array tasks, small scans and `twofold check` are: the smoke ensemble with 1 member of one
step, HDF5 file written.  Median and minimum of {n} runs each; CPU: user + system.

| process | median (s) | min (s) | CPU (s) |
|---|---|---|---|
{table}

A trivial run takes **{shipped:.3f} s** (goal ≤ 0.1 s).  Open MPI's default singleton forks a
launcher daemon and initialises every transport it finds (UCX and OFI probe the network
hardware); twofold asks an unlaunched one-process run for an isolated singleton with the
self transport only (src/app/mpi_start.c), and starts PETSc only for PETSc TS members
(src/step/petsc_start.c).  What remains above the bare isolated MPI_Init is mostly loading the
~100 shared libraries PETSc's Debian build links in (hypre, MUMPS, Trilinos, …)."""
print(json.dumps(res))
PY
