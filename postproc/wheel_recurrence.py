#!/usr/bin/python3
"""wheel_recurrence.py — what a Fig. 5 wheel ensemble does at full stick and how often it
returns to the two-fold: the numbers of docs/WHEEL.md ("Fig. 5 and what the ensembles show").

    mpiexec -n 2 twofold run configs/wheel-fig5.yaml -o fig5.h5
    /usr/bin/python3 postproc/wheel_recurrence.py fig5.h5 [--json OUT.json]

Complete for every member (from the counts /members/events and /members/twofold_visits):
arrivals at full stick by verdict, returns to the two-fold per member and the fraction of
members that return.  From the logs (postproc/filippov_logs.py: a log holds only the first
exit.max_logged draws and output.event_log events of a member): the first arrival at full
stick and the first return (from the logged prefix; a member whose first one fell beyond its
log is counted as lost), the departures the choices at full stick took (members with a
complete exit log only) and what started each return (the last arrival at full stick or
crossing of Sigma before it; returns in the logged prefix of the event log only).  Every line
that could not see all members says how many it lost."""
import argparse
import json
import os
import sys
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from filippov_logs import EnsembleLogs  # noqa: E402

MODES = {-1: "slip-", 0: "sticking", 1: "slip+"}


def first_arrivals(logs):
    """First arrival at full stick per member from the event log (NaN: none), and the number
    of members that arrived but whose log ends before it."""
    meet = [logs.kinds.index(k) for k in logs.intersection_kinds()]
    kind = logs.event_fields.index("kind")
    first, lost = [], 0
    arrived = logs.count(*logs.intersection_kinds()) > 0
    for i in range(logs.members):
        rows = logs.event_rows(i)
        at = rows[np.isin(rows[:, kind], meet), 0]
        if len(at):
            first.append(at[0])
        elif arrived[i]:
            lost += 1
    return np.array(first), lost


def return_origins(logs):
    """What started each logged return: the last arrival at full stick (by its verdict) or
    crossing of Sigma before it; and the number of returns not in the event logs."""
    meet = [logs.kinds.index(k) for k in logs.intersection_kinds()]
    cross, twofold = logs.kinds.index("crossing"), logs.kinds.index("twofold")
    kind_col = logs.event_fields.index("kind")
    origin, seen = Counter(), 0
    for i in range(logs.members):
        kind = logs.event_rows(i)[:, kind_col].astype(int)
        for j in np.flatnonzero(kind == twofold):
            seen += 1
            before = [k for k in kind[:j] if k in meet or k == cross]
            last = logs.kinds[before[-1]] if before else "crossing"
            origin[last.replace("intersection_", "full stick, ")] += 1
    return origin, int(logs.visits.sum()) - seen


def circling(logs):
    """Time between consecutive arrivals at full stick and the change of r between them, from
    the members with a complete event log; and the number of members left out."""
    meet = [logs.kinds.index(k) for k in logs.intersection_kinds()]
    kind, r = logs.event_fields.index("kind"), logs.event_fields.index("r")
    dt, dr = [], []
    for i in np.flatnonzero(logs.events_complete):
        rows = logs.event_rows(i)
        at = rows[np.isin(rows[:, kind], meet)]
        dt.append(np.diff(at[:, 0]))
        dr.append(np.abs(np.diff(at[:, r])))
    dt, dr = (np.concatenate(x) if x else np.zeros(0) for x in (dt, dr))
    out = {"n": int(len(dt)), "members_left_out": int((~logs.events_complete).sum())}
    if len(dt):
        out["dt"] = dict(zip(["p5", "p25", "median", "p75", "p95"],
                             np.percentile(dt, [5, 25, 50, 75, 95]).tolist()))
        out["dr_median"] = float(np.median(dr))
    return out


def stops(logs):
    """Members that did not end ok: per status how many, when (t_final) and after how many
    arrivals at full stick, and (wheel) the rolling speed g at the state they stopped in."""
    arrivals = logs.count(*logs.intersection_kinds())
    out = {}
    for code in sorted(set(int(s) for s in logs.status)):
        name = logs.status_names.get(code, str(code))
        if name == "ok":
            continue
        sel = logs.status == code
        t = logs.t_final[sel]
        entry = {"members": int(sel.sum()), "t_min": float(t.min()), "t_median": float(np.median(t)),
                 "t_max": float(t.max()),
                 "arrivals_before": {int(k): int(c) for k, c in
                                     zip(*np.unique(arrivals[sel], return_counts=True))}}
        if logs.params and "gamma" in logs.params and logs.final_state is not None:
            from wheel_fig5 import rolling_speed  # the wheel's eq (5)
            g = rolling_speed(logs.final_state[sel].T, {k: float(v) for k, v in
                                                         logs.params.items() if k != "name"})
            entry.update(g_min=float(g.min()), g_max=float(g.max()))
        out[name] = entry
    return out


def stats(path):
    logs = EnsembleLogs(path)
    out = {"members": logs.members, "lost": logs.lost_report()}
    stick_kinds = logs.intersection_kinds()
    arrivals = logs.count(*stick_kinds)
    out["full_stick"] = {"arrivals": int(arrivals.sum()), "per_member": float(arrivals.mean()),
                         "min_per_member": int(arrivals.min()),
                         "members": int((arrivals > 0).sum()),
                         "verdicts": {k: int(logs.count(k).sum()) for k in stick_kinds}}
    first, lost = first_arrivals(logs)
    out["first_arrival"] = {"min": float(first.min()) if len(first) else None,
                            "max": float(first.max()) if len(first) else None, "lost": lost}
    sides, left_out = logs.choice_sides()
    out["choices_to"] = {"counts": {MODES.get(int(s), str(s)): int(c) for s, c in
                                    zip(*np.unique(sides, return_counts=True))},
                         "members_left_out": left_out}
    r = logs.visits
    out["returns"] = {"total": int(r.sum()), "members": int((r > 0).sum()),
                      "fraction": float((r > 0).mean()), "per_member": float(r.mean()),
                      "histogram": {int(k): int(c) for k, c in
                                    zip(*np.unique(r, return_counts=True))}}
    fr, lost_fr = logs.first_returns()
    known = fr[~np.isnan(fr)]
    out["first_return"] = {"n": int(len(known)), "lost": int(lost_fr.sum())}
    if len(known):
        lo, med, hi = np.percentile(known, [5, 50, 95])
        out["first_return"].update(min=float(known.min()), max=float(known.max()),
                                   p5=float(lo), median=float(med), p95=float(hi),
                                   mean=float(known.mean()))
    origin, lost_origin = return_origins(logs)
    out["return_origin"] = {"counts": dict(origin), "lost": lost_origin}
    out["circling"] = circling(logs)
    out["stops"] = stops(logs)
    return out


def lost_note(n, what="members"):
    return f" [{n} {what} beyond their log: not seen]" if n else ""


def report(s):
    fs, fa, ch, r, fr, ro = (s[k] for k in ("full_stick", "first_arrival", "choices_to",
                                            "returns", "first_return", "return_origin"))
    print(f"members: {s['members']}; {s['lost']}")
    line = (f"arrivals at full stick: {fs['arrivals']} ({fs['per_member']:.1f} per member, at "
            f"least {fs['min_per_member']}; {fs['members']} members)")
    if fa["min"] is not None:
        line += f"; first at t = {fa['min']:.2f}-{fa['max']:.2f}" + lost_note(fa["lost"])
    print(line)
    print("verdicts: " + ", ".join(f"{k.removeprefix('intersection_')} {v}"
                                   for k, v in fs["verdicts"].items()))
    print("choices went to: " + ", ".join(f"{m} {c}" for m, c in ch["counts"].items())
          + (f" [members with a complete exit log only: {ch['members_left_out']} left out]"
             if ch["members_left_out"] else ""))
    print(f"returns to the two-fold: {r['total']} by {r['members']} members "
          f"({100 * r['fraction']:.1f} %, {r['per_member']:.2f} per member); per member "
          + ", ".join(f"{c} x {k}" for k, c in r["histogram"].items()))
    if fr["n"]:
        print(f"first return at t = {fr['min']:.1f}-{fr['max']:.0f} (5-95 %: {fr['p5']:.1f}-"
              f"{fr['p95']:.0f}, median {fr['median']:.0f}, mean {fr['mean']:.1f}; "
              f"{fr['n']} members)" + lost_note(fr["lost"]))
    c = s["circling"]
    if c["n"]:
        d = c["dt"]
        print(f"between consecutive arrivals at full stick: median {d['median']:.3f} time units "
              f"(25-75 %: {d['p25']:.3f}-{d['p75']:.2f}, 5-95 %: {d['p5']:.3f}-{d['p95']:.1f}), "
              f"|r change| median {c['dr_median']:.2e}"
              + (f" [members with a complete event log only: {c['members_left_out']} left out]"
                 if c["members_left_out"] else ""))
    for name, e in s["stops"].items():
        arr = e["arrivals_before"]
        line = (f"stopped {name}: {e['members']} members at t = {e['t_min']:.2f}-{e['t_max']:.1f} "
                f"(median {e['t_median']:.2f}), after {min(arr)}-{max(arr)} arrivals at full stick "
                f"({', '.join(f'{k}: {v}' for k, v in list(arr.items())[:4])}, ...)")
        if "g_min" in e:
            line += f"; rolling speed g there {e['g_min']:.2g} to {e['g_max']:.2g}"
        print(line)
    print("returns started from: " + ", ".join(f"{k} {v}" for k, v in sorted(ro["counts"].items()))
          + lost_note(ro["lost"], "returns"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--json", help="write the statistics here as well")
    args = ap.parse_args()
    s = stats(args.results)
    report(s)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(s, fh, indent=1)


if __name__ == "__main__":
    main()
