#!/usr/bin/python3
"""wheel_recurrence.py — what a Fig. 5 wheel ensemble does at full stick and how often it
returns to the two-fold: the numbers of docs/WHEEL.md ("Fig. 5 and what the ensembles show").

    twofold run configs/wheel-fig5.yaml -o fig5.h5 --set output.event_log=4000
    /usr/bin/python3 postproc/wheel_recurrence.py fig5.h5

Read from /members/event_log (every member's events, which must fit the log: the script says
so when a log is full): arrivals at full stick (the intersection events) by verdict, the
modes the choices went to, the first arrival, and the returns to the two-fold per member
with what started each (the last arrival at full stick or crossing before it)."""
import sys
from collections import Counter

import h5py
import numpy as np


def stats(path):
    with h5py.File(path, "r") as f:
        d = f["members/event_log"]
        kinds = str(d.attrs["kinds"]).split(",")
        width = int(d.attrs["slot_width"])
        ev = d[...]
    k = {name: i for i, name in enumerate(kinds)}
    at_stick = [i for name, i in k.items() if name.startswith("intersection_")]
    out = {"members": ev.shape[0], "full_logs": 0, "arrivals": [], "first_arrival": [],
           "verdicts": Counter(), "choice_to": Counter(), "returns": [], "first_return": [],
           "return_from": Counter()}
    for row in ev:
        s = row.reshape(-1, width)
        s = s[~np.isnan(s[:, 0])]
        out["full_logs"] += len(s) == ev.shape[1] // width
        kind = s[:, 1].astype(int)
        arrive = np.isin(kind, at_stick)
        out["arrivals"].append(int(arrive.sum()))
        if arrive.any():
            out["first_arrival"].append(float(s[arrive][0, 0]))
        out["verdicts"].update(kinds[i] for i in kind[arrive])
        out["choice_to"].update(int(to) for to in s[kind == k["intersection_choice"], 3])
        back = np.where(kind == k["twofold"])[0]
        out["returns"].append(len(back))
        if len(back):
            out["first_return"].append(float(s[back[0], 0]))
        for i in back:
            j = i - 1
            while j >= 0 and kind[j] not in at_stick and kind[j] != k["crossing"]:
                j -= 1
            out["return_from"]["full stick" if j >= 0 and kind[j] in at_stick else "crossing"] += 1
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    s = stats(sys.argv[1])
    if s["full_logs"]:
        print(f"warning: {s['full_logs']} members filled their event log; raise output.event_log")
    a, r = np.array(s["arrivals"]), np.array(s["returns"])
    mode = {-1: "slip-", 0: "sticking", 1: "slip+"}
    print(f"members: {s['members']}")
    print(f"arrivals at full stick: {a.sum()} ({a.mean():.1f} per member, at least {a.min()}); "
          f"first at t = {min(s['first_arrival']):.2f}-{max(s['first_arrival']):.2f}")
    print("verdicts: " + ", ".join(f"{v} {n}" for v, n in sorted(s["verdicts"].items())))
    print("choices went to: " + ", ".join(f"{mode.get(m, m)} {n}" for m, n in sorted(s["choice_to"].items())))
    per = Counter(r.tolist())
    print(f"returns to the two-fold: {r.sum()} by {int((r > 0).sum())} members "
          f"({100 * (r > 0).mean():.1f} %); per member " +
          ", ".join(f"{n} x {c}" for c, n in sorted(per.items())))
    if s["first_return"]:
        fr = np.array(s["first_return"])
        lo, hi = np.percentile(fr, [5, 95])
        print(f"first return at t = {fr.min():.1f}-{fr.max():.0f} (5-95 %: {lo:.1f}-{hi:.0f}, "
              f"median {np.median(fr):.0f}); started from " +
              ", ".join(f"{w} {n}" for w, n in sorted(s["return_from"].items())))


if __name__ == "__main__":
    main()
