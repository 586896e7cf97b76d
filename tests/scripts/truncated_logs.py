"""truncated_logs.py — statistics of the wheel's ensembles never read a cut-short log as if
it were complete (postproc/filippov_logs.py, wheel_recurrence.py, wheel_fig5.py,
open_question.py).

1. A synthetic results file written here with h5py, three members whose story is known: one
   returns to the two-fold inside its logs, one returns after its exit log is full, one never
   returns but fills its exit log with choices at full stick.  The fraction returning must
   be 2/3 (from /members/twofold_visits; the exit log alone shows 1/3), the first return of
   the second member must be reported lost, never "no return", and the crossings of Sigma
   (all of them, for the occupation of the section) only from the complete event logs.
2. A tiny wheel run with exit.max_logged = 9 and output.event_log = 40 against the same run
   with logs large enough for everything: the draws do not depend on the log size, so the
   counts are identical; every statistic read from the short logs equals the one from the
   complete logs on the members it reports, and the members it reports lost are exactly
   those whose first return (found here in the complete exit log) is draw 9 or later.
   wheel_fig5.py and wheel_recurrence.py count the arrivals at full stick alike on one file
   (one count: filippov_logs.EnsembleLogs).  File 1 names its kinds and fields in the older
   layout (one comma-joined string), file 2 in the current one (arrays of strings).
"""
import json
import os
import subprocess
import sys

import h5py
import numpy as np

import testlib as T

T.setup()
SRC = os.environ["SOURCE_DIR"]
P = os.path.join(SRC, "postproc")
sys.path.insert(0, P)
import filippov_logs as fl  # noqa: E402
import open_question as oq  # noqa: E402
import wheel_fig5  # noqa: E402
import wheel_recurrence  # noqa: E402

KINDS = ["crossing", "slide_start", "slide_end", "twofold", "exit", "intersection_rest",
         "intersection_pass", "intersection_choice", "intersection_undefined",
         "intersection_slide"]
K = {k: i for i, k in enumerate(KINDS)}
X = [0.1859, -0.03, -1.037]


def slots(rows, n_slots, width=7):
    out = np.full(n_slots * width, np.nan)
    for j, row in enumerate(rows[:n_slots]):
        out[j * width:(j + 1) * width] = row
    return out


def synthetic(path, exit_slots=3, event_slots=6):
    """Members: 0 returns at t = 60 with every draw and event logged; 1 draws three choices
    before returning at t = 70 (5 draws, 3 logged; 7 events, 6 logged); 2 draws four choices
    and never returns (5 draws, 3 logged; 5 events, all logged).  Draw rows (t, u, side,
    kind, state), event rows (t, kind, from, to, state)."""
    draw = lambda t, kind: [t, 0.5, -1, kind, *X]  # noqa: E731
    event = lambda t, kind: [t, K[kind], 0, 0, *X]  # noqa: E731
    members = [
        ([draw(0, 0), draw(2, 1), draw(60, 0)],
         [event(1, "crossing"), event(2, "intersection_choice"), event(50, "slide_start"),
          event(60, "twofold"), event(60, "exit")]),
        ([draw(0, 0), draw(2, 1), draw(3, 1), draw(4, 1), draw(70, 0)],
         [event(1, "crossing"), event(2, "intersection_choice"), event(3, "intersection_choice"),
          event(4, "intersection_choice"), event(65, "slide_start"), event(70, "twofold"),
          event(70, "exit")]),
        ([draw(0, 0)] + [draw(t, 1) for t in (2, 3, 4, 5)],
         [event(1, "crossing")] + [event(t, "intersection_choice") for t in (2, 3, 4, 5)]),
    ]
    counts = np.zeros((3, len(KINDS)), np.int64)
    for i, (_, evs) in enumerate(members):
        for e in evs:
            counts[i, int(e[1])] += 1
        counts[i, K["exit"]] += 1  # the start's exit: drawn and counted, not an event row
    with h5py.File(path, "w") as f:
        f.attrs["config"] = "initial:\n  at_twofold: true\n"
        m = f.create_group("members")
        ev = m.create_dataset("events", data=counts)
        ev.attrs["kinds"] = ",".join(KINDS)
        m["twofold_visits"] = counts[:, K["twofold"]]
        m["status"] = np.ones(3, np.uint8)
        m["t_final"] = np.full(3, 300.0)
        ex = m.create_dataset("exits", data=np.array([slots(d, exit_slots) for d, _ in members]))
        ex.attrs.update(fields="t,u,side,kind,r,v,omega", slot_width=7)
        log = m.create_dataset("event_log",
                               data=np.array([slots(e, event_slots) for _, e in members]))
        log.attrs.update(fields="t,kind,from,to,r,v,omega", kinds=",".join(KINDS), slot_width=7)


# --- 1: the synthetic file ------------------------------------------------------------------
synthetic("synthetic.h5")
logs = fl.EnsembleLogs("synthetic.h5")
T.check(list(logs.exits_complete) == [True, False, False]
        and list(logs.events_complete) == [True, False, True],
        "completeness: exit logs complete for member 0 only, event logs for 0 and 2 "
        "(draws = exit + intersection_choice counts; events = all counts - the start's exit)")
first, lost = logs.first_returns()
T.check(first[0] == 60 and np.isnan(first[1]) and lost[1] and np.isnan(first[2]) and not lost[2]
        and not lost[0], "first returns: 60, lost (beyond the exit log), none")
s = wheel_recurrence.stats("synthetic.h5")
T.check(abs(s["returns"]["fraction"] - 2 / 3) < 1e-15 and s["returns"]["total"] == 2,
        f"wheel_recurrence: 2 of 3 members return (from twofold_visits), got "
        f"{s['returns']['members']} of {s['members']}")
T.check(s["first_return"]["n"] == 1 and s["first_return"]["lost"] == 1
        and s["first_return"]["median"] == 60,
        "wheel_recurrence: one first return seen (t = 60), one reported lost")
T.check(s["choices_to"]["members_left_out"] == 2 and s["choices_to"]["counts"] == {"slip-": 1},
        "wheel_recurrence: the departures from full stick only from the complete exit log "
        "(1 choice), 2 members reported left out")
T.check(s["full_stick"]["arrivals"] == 8 and s["full_stick"]["verdicts"]["intersection_choice"] == 8,
        "wheel_recurrence: 8 arrivals at full stick, from the counts (6 of them logged)")
T.check(s["return_origin"] == {"counts": {"full stick, choice": 2}, "lost": 0},
        "wheel_recurrence: both returns are in the event logs, each after full stick")
res = subprocess.run([sys.executable, os.path.join(P, "wheel_recurrence.py"), "synthetic.h5"],
                     capture_output=True, text=True)
T.check(res.returncode == 0 and "2 by 2 members (66.7 %" in res.stdout
        and "[1 members beyond their log: not seen]" in res.stdout
        and "cut short for 2 of 3 members" in res.stdout,
        f"wheel_recurrence prints the loss: {res.stdout.strip()}")
obs, meta = oq.load("synthetic.h5")
T.check([r[0] for r in obs["returned"]] == [1.0, 1.0, 0.0]
        and [len(r) for r in obs["return_time"]] == [1, 0, 0]
        and {q: k for q, k in meta["lost"].items() if q != "logs"}
        == {"landing_r": 0, "section_r": 1, "return_time": 1}
        and "cut short for 2 of 3 members" in meta["lost"]["logs"],
        f"open_question: returned 1, 1, 0 (twofold_visits); return times 60 and two without; "
        f"lost {meta['lost']}")
T.check([len(r) for r in obs["section_r"]] == [1, 0, 1],
        "open_question: the crossings of Sigma only from the complete event logs")

# --- 2: a tiny run with short logs against the same run with complete logs -----------------
cfg = os.path.join(T.CONFIGS, "wheel-fig5.yaml")
common = ["ensemble.members=16", "integrator.t_end=200", "output.trajectory_samples=20"]
T.run(cfg, "short.h5", *common, "exit.max_logged=9", "output.event_log=40", ranks=2)
T.run(cfg, "full.h5", *common, "exit.max_logged=100", "output.event_log=1000", ranks=2)
with h5py.File("short.h5", "r") as a, h5py.File("full.h5", "r") as b:
    same = all(np.array_equal(a["members"][k][:], b["members"][k][:])
               for k in ("events", "twofold_visits", "final_state", "t_final"))
T.check(same, "the log sizes do not change the run (counts, visits, final states)")
full, short = fl.EnsembleLogs("full.h5"), fl.EnsembleLogs("short.h5")
T.check(full.exits_complete.all() and full.events_complete.all(),
        "the large logs hold every draw and event")
# the members whose first return is draw 9 or later: found here in the complete exit log
# (draw 0 is the start's exit; a return is a kind-0 draw after it)
want_lost = []
for i in range(16):
    rows = full.exit_rows(i)
    k = np.flatnonzero(rows[:, 3] == 0)
    want_lost.append(len(k) > 1 and k[1] >= 9)
fs, ls = short.first_returns()
ff, _ = full.first_returns()
seen = ~np.isnan(fs)
T.check(list(ls) == want_lost and sum(want_lost) >= 1,
        f"short exit logs: the {sum(want_lost)} members whose first return is draw 9 or later "
        "are reported lost")
T.check(seen.sum() >= 1 and np.array_equal(fs[seen], ff[seen])
        and np.array_equal(np.isnan(fs) & ~ls, np.isnan(ff))
        and (np.isnan(ff) & ~short.exits_complete).any(),
        f"short exit logs: the {int(seen.sum())} first returns seen equal the complete ones; "
        "'no return' only where there is none, also for members with a cut-short log")
a, b = wheel_recurrence.stats("short.h5"), wheel_recurrence.stats("full.h5")
T.check(a["returns"] == b["returns"] and a["full_stick"] == b["full_stick"],
        f"wheel_recurrence: returns ({b['returns']['members']} of 16 members) and arrivals at "
        f"full stick ({b['full_stick']['arrivals']}) identical with short and complete logs")
T.check(a["first_return"]["lost"] == sum(want_lost) and b["first_return"]["lost"] == 0
        and a["return_origin"]["lost"] > 0 and b["return_origin"]["lost"] == 0
        and a["choices_to"]["members_left_out"] == int((~short.exits_complete).sum()) > 0,
        f"wheel_recurrence: short logs report {a['first_return']['lost']} first returns, "
        f"{a['return_origin']['lost']} return origins and {a['choices_to']['members_left_out']} "
        "members' choices lost; complete logs none")
title_short = wheel_fig5.title(wheel_fig5.load("short.h5"))
title_full = wheel_fig5.title(wheel_fig5.load("full.h5"))
arrivals = int(full.count(*full.intersection_kinds()).sum())
fig5 = wheel_fig5.load("full.h5")
T.check(fig5["meet_count"] == b["full_stick"]["arrivals"] == arrivals and
        fig5["meet_members"] == b["full_stick"]["members"] and arrivals > 0,
        f"wheel_fig5 and wheel_recurrence count full stick alike on one file: {arrivals} "
        f"arrivals by {fig5['meet_members']} members (one count, filippov_logs.EnsembleLogs)")
T.check(f"{arrivals} times" in title_short and f"{arrivals} times" in title_full
        and "drawn: the logged" in title_short and "drawn" not in title_full,
        f"wheel_fig5: the title counts {arrivals} arrivals at full stick from the counts with "
        "either log, and says when it draws only the logged ones")
obs_s, meta_s = oq.load("short.h5")
obs_f, meta_f = oq.load("full.h5")
T.check(meta_s["lost"]["return_time"] == sum(want_lost) and meta_f["lost"]["return_time"] == 0
        and meta_s["lost"]["section_r"] == int((~short.events_complete).sum()) > 0
        and obs_s["returned"] == obs_f["returned"],
        f"open_question: short logs report lost {meta_s['lost']}; returned identical")
T.finish()
