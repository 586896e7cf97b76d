"""filippov_logs.py — the per-member logs of a Filippov ensemble results file, and what each
log left out.

/members/exits holds each member's first `exit.max_logged` draws (exits from the two-fold,
kind 0, and choices at an intersection of switching surfaces, any other kind) and /members/event_log
its first `output.event_log` events, in NaN-padded slots; draws and events beyond are taken
but not logged.  /members/events (counts per kind) and /members/twofold_visits count every
event, logged or not.  So a member's log is complete exactly when it holds as many rows as the
counts say:

    exit log   draws  = events[exit] + events[intersection_choice]
    event log  events = sum of events[...] - 1 if initial.at_twofold (the start's exit is
               counted and drawn, but is not an event of the integration)

A statistic is read from the counts where they have it (returns to the two-fold, arrivals at
full stick by verdict).  Where it needs a log it uses the logged prefix only where that
settles it (the first return of a member is known once the prefix holds a return, or the
member never returned), and otherwise only members with a complete log; every statistic says
how many members (or events) it could not see (`lost`)."""
import os
import sys

import h5py
import numpy as np
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_layout import names_attr, text_attr  # noqa: E402,F401  (text_attr: for importers)

EXIT_KIND_TWOFOLD = 0  # every other kind is a choice at an intersection (its code names the rule)


def logged_rows(data, width, n):
    """(members x slots*width) NaN-padded -> (members, slots, width) and the rows filled."""
    slots = data.reshape(n, -1, width)
    return slots, (~np.isnan(slots[:, :, 0])).sum(axis=1)


class EnsembleLogs:
    """Counts and logs of one Filippov ensemble file (read at once; the files are small)."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            m = f["members"]
            if "events" not in m or "exits" not in m:
                raise SystemExit(f"{path}: not a Filippov ensemble file (no /members/events, "
                                 "/members/exits)")
            cfg = yaml.safe_load(text_attr(f, "config")) or {}
            self.at_twofold = bool((cfg.get("initial") or {}).get("at_twofold", False))
            self.kinds = names_attr(m["events"], "kinds")
            self.counts = m["events"][:]
            # absent for a model without a nondeterministic two-fold: no member arrives
            self.visits = (m["twofold_visits"][:] if "twofold_visits" in m
                           else np.zeros(len(m["status"]), dtype=np.int64))
            self.status = m["status"][:]
            enum = h5py.check_enum_dtype(m["status"].dtype) or {}
            self.status_names = {int(v): k for k, v in enum.items()}
            self.final_state = m["final_state"][:] if "final_state" in m else None
            self.params = ({k: v for k, v in f["model"].attrs.items()} if "model" in f else {})
            self.t_final = m["t_final"][:]
            n = self.members = len(self.status)
            ex = m["exits"]
            self.exit_fields = names_attr(ex, "fields")
            self.exits, self.exits_logged = logged_rows(ex[:], int(ex.attrs["slot_width"]), n)
            log = m["event_log"]
            self.event_fields = names_attr(log, "fields")
            self.events, self.events_logged = logged_rows(log[:], int(log.attrs["slot_width"]), n)
        self.draws = self.count("exit", "intersection_choice")
        self.events_total = self.counts.sum(axis=1) - (1 if self.at_twofold else 0)
        self.exits_complete = self.exits_logged == self.draws
        self.events_complete = self.events_logged == self.events_total
        if (self.exits_logged > self.draws).any() or (self.events_logged > self.events_total).any():
            raise SystemExit(f"{path}: a log holds more rows than /members/events counts; "
                             "the file is not one this script understands")

    def count(self, *kinds):
        """Per-member number of events of the given kinds (from the counts: complete)."""
        return sum(self.counts[:, self.kinds.index(k)] for k in kinds)

    def intersection_kinds(self):
        return [k for k in self.kinds if k.startswith("intersection_")]

    def exit_rows(self, i):
        return self.exits[i, :self.exits_logged[i]]

    def event_rows(self, i):
        return self.events[i, :self.events_logged[i]]

    def return_times(self, i):
        """Times of member i's returns to the two-fold that its exit log holds (each return
        is followed at once by an exit draw of kind 0; the start's exit is not a return)."""
        rows = self.exit_rows(i)
        t = rows[rows[:, self.exit_fields.index("kind")] == EXIT_KIND_TWOFOLD, 0]
        return t[1:] if self.at_twofold else t

    def first_returns(self):
        """Per member the time of the first return to the two-fold (NaN: never returned) and
        the members whose first return happened but fell beyond their exit log (lost)."""
        first = np.full(self.members, np.nan)
        lost = np.zeros(self.members, bool)
        for i in range(self.members):
            if self.visits[i] == 0:
                continue
            t = self.return_times(i)
            if len(t):
                first[i] = t[0]
            else:
                lost[i] = True
        return first, lost

    def choice_sides(self):
        """Sides (-1 slip-, 0 sliding/sticking, +1 slip+) of every choice at an intersection
        in the members with a complete exit log, and the number of members left out."""
        k, s = self.exit_fields.index("kind"), self.exit_fields.index("side")
        sides = [r[r[:, k] != EXIT_KIND_TWOFOLD, s] for i in range(self.members)
                 if self.exits_complete[i] for r in [self.exit_rows(i)]]
        return (np.concatenate(sides) if sides else np.zeros(0)), int((~self.exits_complete).sum())

    def lost_report(self):
        """One line: how many members' logs were cut short."""
        most = (f" (at most {int(self.draws.max())} draws and {int(self.events_total.max())} "
                f"events per member)" if self.members else "")
        return (f"exit log (exit.max_logged = {self.exits.shape[1]}) cut short for "
                f"{int((~self.exits_complete).sum())} of {self.members} members; event log "
                f"(output.event_log = {self.events.shape[1]}) for "
                f"{int((~self.events_complete).sum())}{most}")


def per_member(values):
    """One value per member (NaN: none) -> the per-member samples of postproc scripts
    (a list of arrays of length 1 or 0)."""
    values = np.asarray(values, dtype=float)
    return [values[i:i + 1] if not np.isnan(values[i]) else values[:0] for i in range(len(values))]


def return_spread(x, gap=10.0):
    """Median, 5-95 % range and the bunches of a sample of first return times: runs of the
    sorted values without a gap wider than `gap` time units (the cycle through full stick
    brings members back in rounds about 53 apart)."""
    if not len(x):
        return None
    x = np.sort(x)
    cut = np.flatnonzero(np.diff(x) > gap) + 1
    lo, med, hi = np.percentile(x, [5, 50, 95])
    return {"median": float(med), "p5": float(lo), "p95": float(hi),
            "bunches": [[float(b[0]), float(b[-1]), int(len(b))] for b in np.split(x, cut)]}
