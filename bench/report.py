#!/usr/bin/python3
"""report.py — records of benchmark sections and docs/BENCHMARKS.md built from them.

  report.py record NAME RAW.json OUT.json   stamp a section's raw numbers with date, machine
                                            and command, and render its markdown
  report.py render DIR BENCHMARKS.md [--json results.json]
                                            rebuild the document (and the merged JSON) from
                                            every record in DIR, in the suite's order

A section's raw JSON either carries its own "markdown" (scripts bench/section_*.sh) or is
rendered here (the engine sections of bench/run.sh).  Records keep their own dates: a
section re-measured alone does not pretend the others were measured with it.
"""
import datetime
import json
import statistics
import math
import os
import platform
import sys

ORDER = ["goals", "smoke", "startup", "memory", "wheel", "compare", "precision", "hdf5", "lyapunov",
         "devs", "smooth", "stiff", "stiff_rosenbrock", "stiff_cost", "codim2", "valve", "cluster",
         "multinode",
         "equations", "lanes", "lanes_fields", "scalar_dopri", "hotspots"]


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    mem = int(next(l.split()[1] for l in open("/proc/meminfo")
                   if l.startswith("MemTotal"))) / 2**20
    return f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB, {platform.system()} {platform.release()}"


def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


def events_total(run):
    return sum(run["events"].values())


def median_spread(values):
    v = sorted(values)
    return statistics.median(v), v[0], v[-1]


def pair_rows(pairs):
    """Rows of 1- and 2-rank runs from alternated pairs: the medians of each side, and the
    median of the pairs' own parallel efficiencies with its spread."""
    effs = [a["wall_seconds"] / b["wall_seconds"] / 2 for a, b in pairs]
    one = statistics.median(a["wall_seconds"] for a, _ in pairs)
    two = statistics.median(b["wall_seconds"] for _, b in pairs)
    return one, two, median_spread(effs)


def md_smoke(r):
    pairs = r["pairs"]
    one, two, (eff, lo, hi) = pair_rows(pairs)
    m = pairs[0][0]["members"]
    r["parallel_efficiency"] = eff
    return f"""## Smoke ensemble (configs/smoke.yaml: Lorenz + noise, Euler–Maruyama, 4000 steps per member)

{len(pairs)} alternated pairs (1 rank, 2 ranks, 1 rank, …); whole-process runs, wall time as
each run's job clock reports it (after MPI_Init, collective flushes and the summary pass
included); medians over the pairs.

| ranks | members | wall s (median) | members/s |
|---|---|---|---|
| 1 | {m} | {one:.2f} | {m / one:.0f} |
| 2 | {m} | {two:.2f} | {m / two:.0f} |

Parallel efficiency 1 → 2 ranks (wall-time speed-up / 2, median of the pairs' own):
**{eff:.2f}** ({lo:.2f}–{hi:.2f})."""


def md_wheel(r):
    pairs, evs = r["ranks"]["pairs"], r["event_overhead"]
    one, two, (eff, lo, hi) = pair_rows(pairs)
    r["parallel_efficiency"] = eff
    ratio, rlo, rhi = median_spread([e["ratio"] for e in evs])
    bare = statistics.median(e["bare_seconds"] for e in evs)
    with_events = statistics.median(e["events_seconds"] for e in evs)
    r["event_overhead_ratio"] = ratio
    again = r.get("event_overhead_date")
    note = (f"\n\nThe event machinery paragraphs were measured again on {again} (the same "
            "command; the same run's ensemble pairs, on a machine other jobs were loading, were "
            "left out and the rows above kept from the date below)." if again else "")
    return md_wheel_ensemble(r, pairs, one, two, eff, lo, hi) + md_wheel_lanes(r) + \
        md_wheel_events(evs, ratio, rlo, rhi, bare, with_events) + \
        md_wheel_events_continued(r, evs) + note


def md_wheel_events_continued(r, evs):
    """The same phases' measure with the slip fields continued smoothly past Sigma."""
    cont = r.get("event_overhead_continued")
    if not cont:
        return ""
    ratio, rlo, rhi = median_spread([e["ratio"] for e in cont])
    cr, crlo, crhi = median_spread([e["crossing_ratio"] for e in cont])
    mr, mrlo, mrhi = median_spread([e["meet_ratio"] for e in cont])
    r["event_overhead_continued_ratio"] = ratio
    ev, ev0 = cont[0], evs[0]
    met = "met" if ratio <= 1.3 else "not met"
    return f"""

With the wheel's slip fields continued smoothly past the surface (`bench_events_overhead 200
continuation=1`, `model.params.continuation: 1`: docs/WHEEL.md, "Slip fields past Σ"; the
same trajectory, {ev["phases"]} phases, in {len(cont)} further runs): ratio **{ratio:.2f}**
({rlo:.2f}–{rhi:.2f}; goal ≤ 1.3: {met} with that setting), crossing phases {cr:.2f}
({crlo:.2f}–{crhi:.2f}), full-stick phases {mr:.2f} ({mrlo:.2f}–{mrhi:.2f}).  The event-driven
runs take {ev["event_rhs"]} right-hand sides ({ev0["event_rhs"]} without it) and have
{ev["event_rejected"]} attempts rejected ({ev0["event_rejected"]}); the bare stepper on the same
phases {ev["bare_rhs"]} and {ev["bare_rejected"]} ({ev0["bare_rhs"]} and {ev0["bare_rejected"]}):
its last steps before full stick also reach past the surface, where the two settings differ.
The setting changes the members' steps (their results agree to the tolerance, not bit for
bit) and needs a tighter rtol for the event times of rtol 1e-10 (docs/WHEEL.md); the default
keeps the law's |h| and today's results."""


def md_wheel_lanes(r):
    """Members side by side (integrator.lanes auto) against one by one, 1 rank."""
    pairs = r.get("lanes", {}).get("pairs")
    if not pairs:
        return ""
    speed, slo, shi = median_spread([b["wall_seconds"] / a["wall_seconds"] for a, b in pairs])
    cpu, clo, chi = median_spread([b["process_seconds"] / a["process_seconds"] for a, b in pairs])
    r["lanes_speedup"] = speed
    width = pairs[0][0]["lanes"]
    return f"""

Members side by side (`integrator.lanes`, the default `auto`: {width} lanes on this machine)
against one by one (`integrator.lanes: 1`), 1 rank, {len(pairs)} alternated pairs, the same
results bit for bit (tests/scripts/lanes.py): throughput **{speed:.2f}×** ({slo:.2f}–{shi:.2f};
process CPU time {cpu:.2f}×, {clo:.2f}–{chi:.2f}).  The lanes take the steps of the members'
slip and sticking fields (the wheel's lanes slip field, `slip_lanes`); each accepted step goes
to the member's own event loop.  The field's `atan2` and `sincos` stay libm's scalar calls, one
per lane, for the results to stay bit for bit those of one member at a time: they are about
30 % of a lanes run's time (perf), and with the events (screening, location, landing, the
classification at full stick) bound what lanes can gain here."""


def md_wheel_events(evs, ratio, rlo, rhi, bare, with_events):
    ev = evs[0]
    split = ""
    if "meet_event_rhs" in ev:
        split = md_wheel_events_split(evs, ev)
    elif "crossing_ratio" in ev:
        cr, crlo, crhi = median_spread([e["crossing_ratio"] for e in evs])
        mr, mrlo, mrhi = median_spread([e["meet_ratio"] for e in evs])
        split = f"""  Where it goes: over the {ev["crossing_phases"]} phases that end at a
crossing the ratio is {cr:.2f} ({crlo:.2f}–{crhi:.2f}), over the {ev["meet_phases"]} that end at
full stick (whose transition classifies the intersection on a circle of directions)
{mr:.2f} ({mrlo:.2f}–{mrhi:.2f}); the event-driven runs call the slip field
{ev["event_field_calls"]} times against the bare stepper's {ev["bare_rhs"]}: {ev["event_rhs"]}
counted right-hand sides (the landing re-takes the step to the located time and corrects it by
Newton steps, each a re-integration from the step's start) and
{ev["event_field_calls"] - ev["event_rhs"]} outside the stepper (landing slopes, arrival tests,
the classification at full stick).  The counted evaluations are part of every member's results
(`rhs_evals`), so the landing cannot reuse them without changing results."""
    return f"""

Event machinery overhead (bench/events_overhead.c): the {ev["phases"]} slip phases of one
Fig. 5 trajectory (t = 0..200, {ev["slip_time"]:.1f} time units of slip), each integrated by
the bare DOPRI5 stepper to its known end and by the event-driven integrator, which detects
and locates that end itself, the two timed in turn inside each of {len(evs)} runs: medians
{bare * 1e3:.2f} ms bare, {with_events * 1e3:.2f} ms with events, ratio **{ratio:.2f}**
({rlo:.2f}–{rhi:.2f} over the runs; goal ≤ 1.3); steps {ev["bare_steps"]} vs
{ev["event_steps"]}, right-hand sides {ev["bare_rhs"]} vs {ev["event_rhs"]}.{split}"""


def md_wheel_events_split(evs, ev):
    """Where the event-driven runs' extra time goes, by kind of phase."""
    cr, crlo, crhi = median_spread([e["crossing_ratio"] for e in evs])
    mr, mrlo, mrhi = median_spread([e["meet_ratio"] for e in evs])
    crossings, meets = ev["crossing_phases"], ev["meet_phases"]
    cross_bare = ev["bare_rhs"] - ev["meet_bare_rhs"]
    cross_events = ev["event_rhs"] - ev["meet_event_rhs"]
    outside_meet = ev["meet_event_field_calls"] - ev["meet_event_rhs"]
    return f"""

Where the rest goes.  Over the {crossings} phases that end at a crossing the ratio is
{cr:.2f} ({crlo:.2f}–{crhi:.2f}): they are short ({cross_bare / crossings:.0f} right-hand sides
each, bare), and each ends with the same fixed cost, {cross_events} counted right-hand sides
against {cross_bare}: the step that crosses the surface, where the slip field continued past
it is not smooth, is rejected and retried smaller, and the landing retakes the step to the
located time and corrects it by Newton steps, each a re-integration from the step's start (the
retakes restart from the field the first one evaluated there).  Over the {meets} that end at
full stick the ratio is {mr:.2f} ({mrlo:.2f}–{mrhi:.2f}): their transition classifies the
intersection (intersection.h), {outside_meet} slip-field calls outside the stepper, about
{outside_meet / meets:.0f} per arrival, most of them the scan of V over two sectors of 106
directions that brackets the limit directions (the directions' cos and sin are tabulated, and
each bracket's ends are not evaluated again).  In all the event-driven runs call the slip
field {ev["event_field_calls"]} times against the bare stepper's {ev["bare_rhs"]}.  The
counted right-hand sides are part of every member's results (`rhs_evals`), like the located
times and states; a scan with fewer directions or a landing without retakes would change
them, so they stay, and the goal is not met: these two fixed costs per event bound the ratio
on phases this short."""


def md_wheel_ensemble(r, pairs, one, two, eff, lo, hi):
    f1 = pairs[0][0]
    m = f1["members"]
    return f"""## Wheel Fig. 5 ensemble (configs/wheel-fig5.yaml: event-driven Filippov, t = 0..300)

{len(pairs)} alternated pairs (1 rank, 2 ranks, …); wall time as each run's job clock reports
it; medians over the pairs.

| ranks | members | wall s (median) | members/s | events/s |
|---|---|---|---|---|
| 1 | {m} | {one:.2f} | {m / one:.1f} | {events_total(f1) / one:.0f} |
| 2 | {m} | {two:.2f} | {m / two:.1f} | {events_total(f1) / two:.0f} |

Parallel efficiency 1 → 2 ranks (median of the pairs' own): **{eff:.2f}** ({lo:.2f}–{hi:.2f}).
Events in the run: {events_total(f1)} ({f1["twofold_visits"]} two-fold visits);
right-hand-side evaluations per event: {f1["rhs_per_event"]:.0f} (all evaluations of the run
divided by its events: most of them are spent between events, on the slip and sticking phases
themselves)."""


def full_stick_window(r):
    """The comparison windows end before the wheel's full stick (h = g = 0)."""
    first = r.get("first_full_stick")
    if first is None:
        return ""
    where = (f"the earliest in the reference at t = {first:.3f}" if math.isfinite(first) else
             "no member of the reference reaches it inside the window; the Fig. 5 members first "
             "arrive 2.16–2.98 after leaving the two-fold")
    return (f"The window also ends before the members' first arrival at full stick (h = g = 0; "
            f"{where}): there the engine follows the extended "
            f"Filippov verdict (docs/WHEEL.md), which the scipy and CVODE drivers do not implement, "
            f"so a longer window would compare different dynamics.  The script stops if a "
            f"reference member reaches full stick inside the window.")


def zeno_text(wc):
    """Which CVODE runs stopped members in event storms, if any."""
    runs = [(r["rtol"], r.get("status_counts", {}).get("zeno", 0)) for r in wc.get("cvode", [])]
    runs = [f"{n} at rtol {rt:.0e}" for rt, n in runs if n]
    return ("  CVODE stops members in event storms (status zeno) at such contacts: "
            + ", ".join(runs) + ".") if runs else ""


def rate_cell(run):
    """A median rate with its spread over the alternated pairs (older records: one number)."""
    if "min_members_per_s" not in run:
        return fmt(run["members_per_s"], ".0f")
    return (f"{fmt(run['members_per_s'], '.0f')} ({fmt(run['min_members_per_s'], '.0f')}–"
            f"{fmt(run['max_members_per_s'], '.0f')})")


def timing_text(wc):
    if "pairs" not in wc:  # a record of the earlier protocol
        return "Rates are the best of 3 runs per side, one side after the other (not alternated)."
    return (f"Rates are medians of {wc['pairs']} alternated runs (twofold, CVODE, twofold, …) per rtol, "
            "with their spread in brackets.")


def same_rtol_text(wc):
    return "the median of the pairs' own ratios" if "pairs" in wc else "the ratio"


def spread_text(wc):
    sp = wc.get("same_rtol_cvode_ratio_spread")
    return f" (pairs {sp[0]:.1f}–{sp[1]:.1f})" if sp else ""


def scipy_text(wc):
    """scipy's right-hand side is interpreted Python: for scale, never a headline."""
    sp, ms = wc["scipy"], wc["matched_scipy"]
    return (f"For scale only (an interpreted right-hand side is no competent peer): scipy DOP853 at rtol 1e-10 "
            f"ran {fmt(sp['members_per_s'], '.2f')} members/s on the first {sp['members']} members (error "
            f"{ms['scipy_error']:.1e}; twofold at its loosest rtol as accurate, "
            f"{'—' if ms['twofold_rtol'] is None else format(ms['twofold_rtol'], '.0e')}, is "
            f"{fmt(wc.get('ratio_twofold_over_scipy'), '.0f')}× faster).")


def md_compare(wc):
    tf = {r["rtol"]: r for r in wc["twofold"]}
    cv = {r["rtol"]: r for r in wc.get("cvode", [])}
    sweep = "\n".join(
        f"| {rt:.0e} | {rate_cell(tf[rt])} | {tf[rt]['accuracy']['p90_member_max_dt']:.1e}"
        f"{'' if tf[rt]['complete'] else ' (not all ok)'} | "
        + (f"{rate_cell(cv[rt])} | {cv[rt]['accuracy']['p90_member_max_dt']:.1e}"
           f"{'' if cv[rt]['complete'] else ' (not all ok)'} |" if rt in cv else "— | — |")
        for rt in sorted(tf, reverse=True))
    matched = "\n".join(
        f"| CVODE Adams, rtol {r['cvode_rtol']:.0e} | {r['cvode_error']:.1e} | "
        f"{'—' if r['twofold_rtol'] is None else format(r['twofold_rtol'], '.0e')} | "
        f"{'—' if r['twofold_error'] is None else format(r['twofold_error'], '.1e')} | "
        f"{fmt(r['ratio'], '.1f')} |" for r in wc.get("matched_cvode", []))
    ms, sp = wc["matched_scipy"], wc["scipy"]
    ref = wc.get("reference_vs_cvode_1e-13", {})
    lose = [(name, r) for name, r in (("CVODE", wc.get("ratio_twofold_over_cvode")),) if r is not None and r < 1]
    verdict = "".join(f"  **twofold loses against {n}** ({r:.2f}×)." for n, r in lose)
    return f"""## Wheel Fig. 5 against CVODE at matched accuracy (bench/wheel_compare.py)

{wc['members']} members of the Fig. 5 ensemble, t = 0..{wc['t_end']:g}, one core; every code replays the
exits of a twofold run at rtol 1e-13 (the reference), so all follow the same members.
scipy: `solve_ivp` (DOP853) with terminal events implementing the same mode machine
(bench/wheel_scipy.py, written from the paper's equations); CVODE: SUNDIALS Adams with
`CVodeRootInit` driving the same mode machine (bench/wheel_cvode.c; built where
libsundials-dev is installed).  twofold's rate is its scheduler's (members over the time spent
computing them and flushing their results, after start-up); scipy's and CVODE's are their
integration loops.  {timing_text(wc)}  Error of a run: per member the largest event-time difference to the
reference over its first {wc['first_n']} events (bursts closer than 1e-4 merged), 90th percentile over
the members.  The reference agrees with CVODE at rtol 1e-13 to {fmt(ref.get('p90_member_max_dt'), '.1e')} (90th percentile;
median {fmt(ref.get('median_member_max_dt'), '.1e')}).  The window is one every code completes for every member:
over longer horizons the codes' trajectories part at grazing contacts, one reaches the two-fold
more often than the replayed exits cover, and members/s would compare different amounts of work.
{full_stick_window(wc)}

| rtol | twofold members/s | twofold error | CVODE members/s | CVODE error |
|---|---|---|---|---|
{sweep}

Matched accuracy — twofold at its loosest rtol at least as accurate as the other code's run:

| other code | its error | twofold rtol | twofold error | twofold / other (members/s) |
|---|---|---|---|---|
{matched}

Against CVODE the smallest ratio over its tolerances is {fmt(wc.get('ratio_twofold_over_cvode'), '.1f')}× (goal ≥ 2); at the same
rtol 1e-10 {same_rtol_text(wc)} is {fmt(wc.get('same_rtol_cvode_ratio'), '.1f')}× CVODE{spread_text(wc)}.
{scipy_text(wc)}  Why twofold is more
accurate at a given rtol: its events are landed on the integrated solution by Newton steps
(src/engine/event_loop.c, `land_on_event`), whereas CVODE and scipy locate them on their interpolants,
whose error near a fold, where the switching function changes by ~1e-7 per time unit, moves
event times far more than the step's local error.{zeno_text(wc)}{verdict}"""


def md_precision(wp):
    return """## Work-precision of the Filippov integrator (bench/work_precision.py)

![work-precision](wheel-work-precision.png)

Event-time error against the engine at rtol 1e-13 versus right-hand-side evaluations and
wall time, rtol 1e-4 … 1e-12, for twofold, scipy DOP853 and CVODE ({members} members of the
Fig. 5 ensemble, t = 0..{t_end}; error: per member the largest difference over its first
events, 90th percentile over the members).  {window}  The reference
agrees with CVODE at rtol 1e-13 to {cv} and with scipy DOP853 at 1e-13 to {sp}; scipy's
event location on its interpolant limits the latter.  twofold's error falls with the
tolerance over the whole range.  Every member leaves the two-fold 1e-4 away on Sigma, where
its slip field crosses Sigma at ~1e-6 of its speed, so for the first ~1e-10 time units h is
below its own round-off; the engine searches that first crossing by halving from the far end
of the bracket (src/geometry/event_locate.c).  Until 2026-11-25 Brent's method took round-off roots
next to the start instead, a member then crossed at once, and the error stayed near 1e-2 from
rtol 1e-6 to 1e-9 — a plateau this page used to put down to an ill-posed start.""".format(
        cv=fmt(wp.get("reference_vs_cvode_p90_dt"), ".1e"), sp=fmt(wp.get("reference_vs_scipy_p90_dt"), ".1e"),
        members=wp.get("members", "?"), t_end=format(wp["t_end"], "g") if "t_end" in wp else "?",
        window=full_stick_window(wp))


def md_hdf5(r):
    nbytes = r["bytes"]
    dd = nbytes / r["dd"]["seconds"] / 1e6
    dds = nbytes / r["dd_fdatasync"]["seconds"] / 1e6
    rows = "\n".join(
        f"| {w['ranks']} | {w['compression']} | {w['seconds']:.3f} | {w['MB_per_s']:.0f} | "
        f"{w['MB_per_s'] / dd:.2f} |" for w in r["writes"])
    return f"""## HDF5 write bandwidth: 1e6 member records of 8 doubles ({nbytes / 1e6:.0f} MB)

Engine path: `tf_h5_create_table` + one collective `tf_h5_write_rows` + close
(bench/h5write.c; like dd without `conv=fdatasync`, the data may still be in the page cache
when it returns), against `dd if=/dev/zero bs=1M` of the same size on the same disk:
{dd:.0f} MB/s to the page cache, {dds:.0f} MB/s with `conv=fdatasync`.  Best of 3 runs each.

| ranks | deflate level | seconds | MB/s | ratio to dd |
|---|---|---|---|---|
{rows}"""


def md_lyapunov(r):
    lo, ss = r["lorenz"], r["stick_slip"]

    def best(b):
        return "never within the criterion" if b is None else f"{b * 1e3:.2f} ms"

    def lorenz_steps(lo):
        b, a = lo.get("twofold_best_run") or {}, lo.get("twofold_adaptive_time_to_accuracy")
        pair = "DOP853" if b.get("method") == "dop853" else "DOPRI5"
        order = "an 8th" if pair == "DOP853" else "a 5th"
        if b.get("step") != "fixed":
            return (f"twofold's best run: adaptive {pair} (its error estimate and dense output "
                    "cost more per step than the naive RK4's).")
        return (f"twofold's best run takes fixed {pair} steps (`integrator.step: fixed`, "
                f"`integrator.method: {pair.lower()}`, h0 = {b['h0']:g}): on a smooth, non-stiff "
                f"flow whose time scale is known, {order}-order step without error control "
                f"reaches the criterion with steps several times longer than RK4's; the best "
                f"adaptive run takes {best(a)}.  Adaptive stays the default: a fixed step is only "
                f"as safe as the user's knowledge of the flow.")

    def competent_text(lo):
        b = lo.get("competent_best_run")
        if not b:
            return ""
        return (f"The competent variant's best Lorenz run: RK4 with dt = {b['dt']:g}, Gram–Schmidt "
                f"every {b['qr_every']} steps (every step, the square roots, logarithms and "
                f"divisions of the orthonormalisation cost about as much as the RK4 step).")

    def cell(text):  # a criterion may contain |x|, which would split a table cell
        return text.replace("|", "\\|")

    return f"""## Lyapunov spectra: time to a given accuracy (bench/lyapunov_bench.sh)

twofold (Benettin on the variational system with DOPRI5 or DOP853, adaptive or fixed steps, and GSL
Householder QR every `lyapunov.interval`; events and saltation matrices for Filippov models) against the
straightforward implementation bench/lyapunov_naive.c (fixed-step RK4, modified
Gram–Schmidt after every step; for the Filippov model the tanh-smoothed flow, ε = 1e-3) and
its competent variant (the same code re-orthonormalising every 10 or 20 steps only, the best
of both).  Time to accuracy = the fastest run that meets the criterion (engine time, no
start-up).

| system | criterion | twofold | naive | competent | naive / twofold | competent / twofold |
|---|---|---|---|---|---|---|
| Lorenz (σ 10, ρ 28, β 8/3) | {cell(lo["criterion"])} | {best(lo["twofold_time_to_accuracy"])} | {best(lo["naive_time_to_accuracy"])} | {best(lo.get("competent_time_to_accuracy"))} | {fmt(lo["ratio_naive_over_twofold"], ".2f")} | {fmt(lo.get("ratio_competent_over_twofold"), ".2f")} |
| forced stick-slip (Filippov) | {cell(ss["criterion"])} | {best(ss["twofold_time_to_accuracy"])} | {best(ss["naive_time_to_accuracy"])} | {best(ss.get("competent_time_to_accuracy"))} | {fmt(ss["ratio_naive_over_twofold"], ".2f")} | {fmt(ss.get("ratio_competent_over_twofold"), ".2f")} |

Stick-slip reference spectrum (twofold, events + saltation, duration 20000):
{", ".join(f"{x:.4f}" for x in ss["reference"]["spectrum"])}; the smoothed naive code's best
error: {ss["naive_best_err"]:.2e}.  For Lorenz every run averages over the same T, so the
statistical error of λ1 is the same for both codes and the accuracy compared is the
integration's (the exponents' sum against the exact volume rate).  {lorenz_steps(lo)}
{competent_text(lo)}
On the Filippov model the naive route must smooth the friction and resolve a
boundary layer of width ε with explicit steps, and the event-driven engine wins.  The
series of (time, error) pairs is in bench/results/lyapunov.json."""


def md_devs(r):
    tile = r["twofold"].get("vectorised")
    tile = tile if isinstance(tile, str) else ("vectorised tile" if tile else "portable tile")
    rows = [(f"twofold, 1 rank ({tile})", r["twofold"]),
            ("twofold, 2 ranks", r["twofold_2_ranks"]),
            ("twofold, AVX2 tile", r["twofold_avx2"]),
            ("twofold, portable C tile", r["twofold_portable_c"]),
            ("twofold, generic element map (function pointers)", r["twofold_generic"]),
            ("competent C loop (hash per update, branchless, frexp every 16 steps), flat",
             r["competent_c_flat"]),
            ("competent C loop, cache-blocked like the engine", r["competent_c_blocked"]),
            ("straightforward C loop (xoshiro draw + log() per update)", r["naive_c_xoshiro"]),
            ("straightforward C loop (Philox per update)", r["naive_c_philox"]),
            ("numpy (vectorised over elements)", r["numpy"])]
    base = r["twofold"]["cpu_rate"]
    table = "\n".join(f"| {n} | {v['wall_rate']:.3g} | {v['cpu_rate']:.3g} | {base / v['cpu_rate']:.1f} |"
                      for n, v in rows)
    rc = r["ratio_cpu"]
    spread = r.get("ratio_cpu_rounds", {})

    def sp(key):
        v = spread.get(key)
        return f" ({v[1]:.3g}–{v[2]:.3g})" if v else ""
    how = (f"{r['rounds']} alternated rounds (one run of every code per round, in the table's "
           "order but numpy last); rates are the medians over the rounds, and the ratios below "
           "the median of the rounds' own ratios (smallest–largest)" if r.get("rounds")
           else "each code's best of 3 runs")
    return f"""## DEVS throughput (bench/devs_throughput.sh)

configs/devs-throughput.yaml: N = {r["N"]:.0e} logistic elements, {r["steps"]} steps, q = 0.5,
μ = 3.9, λ1 of the full state and X_i tracked; {r["twofold"]["bytes_per_element"]} bytes per
element.  Element-updates per second of wall time and per CPU second of the process (on a
shared machine the latter is the rate of the core actually used; load average during the
run: {r["load_average"]:.1f}); {how}.

| code | updates/s (wall) | updates/s (CPU) | twofold / code (CPU) |
|---|---|---|---|
{table}

twofold over the competent C loop (the faster of its two layouts):
**{rc["twofold_over_competent_c"]:.2f}×**{sp("twofold_over_competent_c")}; over the straightforward C loop:
**{rc["twofold_over_naive_c_xoshiro"]:.1f}×**{sp("twofold_over_naive_c_xoshiro")} (goal ≥ 10), over numpy:
**{rc["twofold_over_numpy"]:.1f}×**{sp("twofold_over_numpy")} (goal ≥ 25); ≥ 1e9 updates per CPU second per core:
**{"met" if r["target_1e9_per_core_met"] else "not met"}**.  Where the processor lacks
AVX-512 the AVX2 tile runs ({rc["twofold_avx2_over_naive_c_xoshiro"]:.1f}×{sp("twofold_avx2_over_naive_c_xoshiro")} the straightforward loop).
{devs_limits(r)}"""


def devs_limits(r):
    """How close twofold and the competent loop are to this core's limits."""
    ml, ins = r.get("machine"), r.get("instructions") or {}
    if not ml or not ml.get("zmm_per_cycle") or not ins.get("twofold_tile") or not ins.get("competent_c"):
        return "\n(The machine-limit measurements were skipped: no AVX-512 or no gdb.)"
    hz, peak, bw = ml["clock_hz"], ml["zmm_per_cycle"]["mixed"], ml["triad_bytes_per_second"]
    n = ins["updates_counted"]
    comp = max((r["competent_c_flat"], r["competent_c_blocked"]), key=lambda v: v["cpu_rate"])

    def row(name, count, rate, bytes_per_update):
        k = count["by_kind"]
        per = count["instructions"] / n
        zmm = (k.get("zmm", 0) + k.get("zmm-mul", 0)) / n
        cyc = hz / rate
        return (f"| {name} | {per:.2f} | {zmm:.2f} | {cyc:.2f} | {per / cyc:.2f} | "
                f"{zmm / peak:.2f} ({zmm / peak / cyc:.0%}) | {bytes_per_update:g} "
                f"({bytes_per_update * rate / 1e9:.1f} GB/s) |")
    big = r.get("competent_c_flat_10n")
    big_text = "" if not big else (
        f"  At N = {big['N']:.0e} ({big['steps']} steps) they do not, and the flat loop runs at "
        f"{big['cpu_rate']:.3g} updates/s, {32 * big['cpu_rate'] / 1e9:.1f} GB/s against the "
        f"triad's {bw / 1e9:.1f} GB/s ({32 * big['cpu_rate'] / bw:.0%}; the triad counts the 24 "
        f"bytes an element names, not the line a store reads first), i.e. memory-bound.")
    tw = ins["twofold_tile"]["by_kind"]
    return f"""
**How close to the machine's limit.** One core here: clock {hz / 1e9:.2f} GHz (a chain of
dependent adds), at most {peak:.2f} independent 512-bit operations per cycle (a mix of integer
add, xor, 32-bit multiply and double multiply; {ml["zmm_per_cycle"]["fp_mul"]:.2f} per cycle for
multiplies alone), memory bandwidth {bw / 1e9:.1f} GB/s (a streaming triad over 768 MiB);
bench/machine_limits.c.  Instructions are counted by single-stepping one call under gdb
(bench/gdb_count.py; 1024 elements × 16 steps; the virtual machine has no hardware counters,
and valgrind cannot run AVX-512); cycles per update are the clock over the rate per CPU
second in the table above.  The bound counts only the 512-bit instructions, at the peak issue
rate.

| code | instructions / update | 512-bit ops / update | cycles / update | instructions / cycle | bound: cycles / update (share reached) | bytes moved / update |
|---|---|---|---|---|---|---|
{row("twofold tile (" + ins["twofold_tile"]["function"] + ")", ins["twofold_tile"], r["twofold"]["cpu_rate"], 48 / 64)}
{row("competent C loop, " + ("flat" if comp is r["competent_c_flat"] else "blocked"), ins["competent_c"], comp["cpu_rate"], 32 if comp is r["competent_c_flat"] else 48 / 64)}

The engine's tile keeps its 1024 elements (x, m and the exponent e: 24 KiB) in L1 for 64
steps, so it moves 0.75 bytes per update, a few per cent of the memory bandwidth: it is
bound by its 512-bit operations, of which it reaches the share in the table.  Of its
{(tw.get("zmm", 0) + tw.get("zmm-mul", 0)) / n:.2f} such operations per update about 1.3 are the
Philox4x64-10 draws (8 bits per update: 10 rounds of two 64×64→128-bit products, each four
32-bit products and 12 additions, shifts and masks, the low half from the same partial
products (src/base/philox_simd.h), per 32 elements), the
rest the map, its derivative, two blends, the sum, the loads and the stores; the scalar and
mask instructions (loop control, masks) issue beside them.  The competent loop's counter hash
is cheaper than Philox (two 64-bit products per update), but its flat sweep moves 32 bytes
per update: at N = {r["N"]:.0e}, x and m (16 MB) stay in the 32 MiB L3.{big_text}"""


RENDER = {"smoke": md_smoke, "wheel": md_wheel, "compare": md_compare,
          "precision": md_precision, "hdf5": md_hdf5, "lyapunov": md_lyapunov,
          "devs": md_devs}


def record(name, raw_path, out_path):
    raw = json.load(open(raw_path))
    if "markdown" not in raw:
        if name not in RENDER:
            sys.exit(f"report.py: section {name} gave no markdown and has no renderer")
        raw["markdown"] = RENDER[name](raw)
    raw["section"] = name
    raw["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    raw["machine"] = machine()
    raw["command"] = f"./twofold.sh bench --only {name}"
    if name == "startup" and os.environ.get("STARTUP_BASELINE"):  # the baseline row's build
        raw["command"] = "STARTUP_BASELINE=<build dir of the baseline revision> " + raw["command"]
    tmp = out_path + ".tmp"
    json.dump(raw, open(tmp, "w"), indent=1)
    os.replace(tmp, out_path)


def render(directory, out_md, out_json=None):
    records = {}
    for f in sorted(os.listdir(directory)):
        if f.endswith(".json"):
            r = json.load(open(os.path.join(directory, f)))
            records[r.get("section", f[:-5])] = r
    names = [n for n in ORDER if n in records] + sorted(set(records) - set(ORDER))
    parts = ["""# Benchmarks

Regenerated by `./twofold.sh bench` (bench/run.sh, then bench/report.py) from the records
in bench/results/.  Every comparison ran both sides in one invocation on the same machine;
the machine is shared and noisy, so read the ratios rather than the absolute times.  A
section can be measured again alone with `./twofold.sh bench --only NAME`
(`--list` names them); each section says when and where it was measured."""]
    for n in names:
        r = records[n]
        parts.append(r["markdown"].strip() + f"\n\n*Measured {r['date']} on {r['machine']}; "
                     f"`{r['command']}`.*")
    open(out_md, "w").write("\n\n".join(parts) + "\n")
    if out_json:
        json.dump(records, open(out_json, "w"), indent=1)


def main(argv):
    if len(argv) == 5 and argv[1] == "record":
        record(argv[2], argv[3], argv[4])
    elif len(argv) in (4, 6) and argv[1] == "render":
        render(argv[2], argv[3], argv[5] if len(argv) == 6 and argv[4] == "--json" else None)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
