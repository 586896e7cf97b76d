"""A twofold results file, read lazily with h5py.

Opening reads metadata only (the root attributes and the names, shapes and attributes of the
datasets); an array is read when it is asked for, and only the rows asked for.

    with twofold.open("wheel.h5") as res:
        res.dims                       # {"members": 20000, "samples": 600, "state": 3}
        res.state_names                # ["r", "v", "omega"]
        res.statuses()                 # member statuses as names: array(["ok", "ok", ...])
        res.summary                    # /summary as a plain dict, kinds and statuses by name
        res.events(7)                  # member 7's event log: a Table of columns, padding dropped
        res.events()                   # every member's events in one long Table (column member)
        res.trajectory(slice(0, 10))   # members x samples x state, with res.sample_times()
        res.initial_states()           # members x state: the sampled (or perturbed) starts
        res.parameters()               # {"lam": array over members}: model.sample's draws
        res["members/final_state"]     # any dataset by its path, as a numpy array
        res.dataset("members/event_log")[:5]   # the h5py Dataset itself, to slice on disk
        res.lyapunov()                 # /lyapunov: spectrum, error, blocks (blocks x exponents)

The layout (docs/CONFIG.md, "Output"; CHANGELOG.md lists each change with its migration):

- lists of names are attributes holding an array of strings: the root's state_names (and
  output_names, event_kinds, derived_names, class_names where a job writes them), kinds of
  /members/events, /members/event_log and /trajectory/events, fields of the logs, columns of
  /members/checksum.  Older files (CHANGELOG.md, "One results layout") hold each as one comma-joined string;
  res.attrs and every method here return both as a list of str.
- /lyapunov/blocks and /lyapunov/running are blocks x exponents.  Older files hold them
  flat (blocks * exponents, block after block); res["lyapunov/blocks"] and res.lyapunov()
  return both as blocks x exponents.
- /members/exits exists only for models that draw (a two-fold, a full-stick intersection, or
  several switching functions).  Older files hold an all-NaN table for the others;
  res.exits() returns an empty Table for both, and "members/exits" in res is False for both.
- /members/twofold_visits exists only where a nondeterministic two-fold was located.  Older
  files hold an all-zero column for every Filippov model; where no member of such a file
  arrived at or left a two-fold (/members/events: twofold and exit all zero) the column is
  taken as absent ("members/twofold_visits" in res is False), as a file cannot say whether its
  model had a two-fold nobody reached.  res.twofold_visits() gives the visits per member
  either way (zeros where the column is absent).
- merged_from (the root attribute of a merged file: the parts' paths) is an array of strings;
  older files hold one string, the paths joined with newlines.  res.attrs["merged_from"] is a
  list of str for both.
"""
import re

import numpy as np

# Member statuses in the order of the engine's enum (src/base/status.c); a file stores them as an
# HDF5 enum with these names, which is used when present.
STATUS_NAMES = ("pending", "ok", "nonfinite", "max_steps", "step_underflow", "zeno", "failed",
                "codim2", "ill_posed", "crashed", "timeout")


def _text(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray) and value.dtype.kind in "SO":
        return np.array([_text(v) for v in value.ravel()], dtype=object).reshape(value.shape)
    if isinstance(value, np.generic):
        return value.item()
    return value


# Attributes that are lists of names: an array of strings, or (older files) one
# comma-joined string.
NAME_LIST_ATTRIBUTES = ("state_names", "output_names", "event_kinds", "derived_names",
                        "class_names", "kinds", "fields", "columns")
# Attributes that are lists of paths: an array of strings, or (older files) one string joined
# with newlines.
LINE_LIST_ATTRIBUTES = ("merged_from",)
# Datasets stored blocks x exponents (flat in older files).
BLOCK_DATASETS = ("lyapunov/blocks", "lyapunov/running")


def _names(text):
    """A names attribute: an array of names -> a list; "a,b,c" (older files) -> [a, b, c];
    "0 a, 1 b" (a description of codes) -> [a, b]."""
    if isinstance(text, (np.ndarray, list, tuple)):
        return [str(_text(item)) for item in np.asarray(text, dtype=object).ravel()]
    items = [item.strip() for item in str(text).split(",") if item.strip()]
    numbered = [re.match(r"^(\d+) (.+)$", item) for item in items]
    if items and all(numbered):
        out = {}
        for m in numbered:
            out[int(m.group(1))] = m.group(2)
        return [out.get(k, str(k)) for k in range(max(out) + 1)]
    return items


def _lines(text):
    """A list of paths: an array of strings -> a list; one newline-joined string (older
    files) -> its lines."""
    if isinstance(text, (np.ndarray, list, tuple)):
        return [str(_text(item)) for item in np.asarray(text, dtype=object).ravel()]
    return [line for line in str(text).split("\n") if line]


class Table(dict):
    """Columns of equal length by name (a dict of numpy arrays); to_pandas() if pandas is
    installed."""

    def __len__(self):
        return len(next(iter(self.values()))) if dict.__len__(self) else 0

    @property
    def columns(self):
        return list(self.keys())

    def to_pandas(self):
        import pandas  # optional: python3-pandas
        return pandas.DataFrame(dict(self))

    def __repr__(self):
        return f"Table({len(self)} rows: {', '.join(self.columns)})"


class Results:
    """A results file opened for reading; see the module's doc.  `run` is the run's JSON
    summary when the file came from twofold.run(), else None."""

    def __init__(self, path, run=None):
        import h5py
        self.path = str(path)
        self.run = run
        self._file = h5py.File(self.path, "r")
        self.attrs = {k: _names(_text(v)) if k in NAME_LIST_ATTRIBUTES else
                      _lines(_text(v)) if k in LINE_LIST_ATTRIBUTES else _text(v)
                      for k, v in self._file.attrs.items()}
        # the older layout: names as one joined string
        self._older = isinstance(_text(self._file.attrs.get("state_names", [])), str)
        self._shapes = {}
        # visit_links and the link's object info: names and shapes without reading data
        self._file.visititems(self._note)

    def _note(self, name, obj):
        import h5py
        if not isinstance(obj, h5py.Dataset):
            return
        if name == "members/exits" and self._older and not self._draws(obj):
            return  # an older file: the all-NaN table of a model that never drew
        if name == "members/twofold_visits" and not self._at_twofold(obj):
            return  # an older file: the all-zero column of a model without a two-fold
        self._shapes[name] = obj.shape
        if name in BLOCK_DATASETS and obj.ndim == 1:  # an older file: flat
            self._shapes[name] = (obj.shape[0] // self._exponents(), self._exponents())

    def _draws(self, exits):
        """Whether an older file's /members/exits holds a draw: from the counts of
        /members/events where they say, else read chunk by chunk."""
        events = self._file.get("members/events")
        kinds = _names(_text(events.attrs.get("kinds", ""))) if events is not None else []
        if "exit" in kinds and "intersection_choice" in kinds:
            taken = [kinds.index("exit"), kinds.index("intersection_choice")]
            return bool(np.asarray(events[()])[:, taken].any())
        step = max(1, (1 << 16) // max(1, exits.shape[1] if exits.ndim == 2 else 1))
        return any(not np.isnan(np.asarray(exits[i:i + step], dtype=float)).all()
                   for i in range(0, exits.shape[0], step))

    def _at_twofold(self, visits):
        """Whether a member of the file arrived at or left a two-fold: visits, or the counts
        twofold and exit of /members/events."""
        if np.asarray(visits[()]).any():
            return True
        events = self._file.get("members/events")
        kinds = _names(_text(events.attrs.get("kinds", ""))) if events is not None else []
        taken = [kinds.index(k) for k in ("twofold", "exit") if k in kinds]
        return bool(taken) and bool(np.asarray(events[()])[:, taken].any())

    def twofold_visits(self, members=slice(None)):
        """Arrivals at the nondeterministic two-fold per member (zeros where the file has no
        such column: a model without a two-fold, or an older file where none was reached)."""
        if "members/twofold_visits" in self._shapes:
            return np.asarray(self.dataset("members/twofold_visits")[members])
        return np.zeros(self.members, dtype=np.int64)[members]

    def _exponents(self):
        spectrum = self._file.get("lyapunov/spectrum")
        return spectrum.shape[0] if spectrum is not None and spectrum.ndim == 1 else 1

    def names(self, name, attribute):
        """The list of names in attribute `attribute` of the object at `name` ("" the root)."""
        obj = self._file[name.strip("/")] if name.strip("/") else self._file
        value = obj.attrs.get(attribute)
        return [] if value is None else _names(_text(value))

    # --- the file ------------------------------------------------------------------------
    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        dims = ", ".join(f"{k} {v}" for k, v in self.dims.items())
        return f"<twofold.Results {self.path!r}: job {self.job}, {dims}>"

    @property
    def file(self):
        """The open h5py.File."""
        return self._file

    def keys(self):
        """Every dataset's path ("members/final_state", ...)."""
        return list(self._shapes)

    def __contains__(self, name):
        return name.strip("/") in self._shapes

    def __iter__(self):
        return iter(self._shapes)

    def dataset(self, name):
        """The h5py Dataset at `name`, unread: slice it to read rows (as stored: see the
        module's doc for the layout of older files)."""
        if name.strip("/") not in self._shapes:
            raise KeyError(f"{self.path}: no dataset {name}")
        return self._file[name.strip("/")]

    def __getitem__(self, name):
        """The dataset at `name`, read whole, strings decoded, in the current layout."""
        value = _text(self.dataset(name)[()])
        if name.strip("/") in BLOCK_DATASETS:
            value = np.asarray(value).reshape(self.shape(name))
        return value

    def shape(self, name):
        return self._shapes[name.strip("/")]

    # --- named dimensions ----------------------------------------------------------------
    @property
    def job(self):
        return self.config_value("job")

    @property
    def state_names(self):
        return list(self.attrs.get("state_names", []))

    @property
    def members(self):
        shape = self._shapes.get("members/status")
        return shape[0] if shape else 0

    @property
    def samples(self):
        if "members/trajectory" in self._shapes:
            return int(self.dataset("members/trajectory").attrs["samples"])
        if "trajectory/t" in self._shapes:
            return self._shapes["trajectory/t"][0]
        return 0

    @property
    def dims(self):
        """The named dimensions: members, samples (if sampled) and state."""
        out = {}
        if self.members:
            out["members"] = self.members
        if self.samples:
            out["samples"] = self.samples
        out["state"] = len(self.state_names)
        return out

    def config_value(self, key):
        """A top-level scalar of the config as run (the root attribute config)."""
        for line in str(self.attrs.get("config", "")).splitlines():
            m = re.match(rf"^{re.escape(key)}:\s*(\S.*)$", line)
            if m:
                return m.group(1).strip().strip("'\"")
        return None

    # --- statuses --------------------------------------------------------------------------
    def status_names(self):
        """Names of the status codes, in code order (from the file's enum if it has one)."""
        import h5py
        if "members/status" in self._shapes:
            mapping = h5py.check_enum_dtype(self.dataset("members/status").dtype)
            if mapping:
                names = [None] * (max(mapping.values()) + 1)
                for name, code in mapping.items():
                    names[code] = name
                return [n if n is not None else f"status {k}" for k, n in enumerate(names)]
        return list(STATUS_NAMES)

    def statuses(self, members=slice(None)):
        """The members' statuses as names (numpy array of str)."""
        codes = np.asarray(self.dataset("members/status")[members])
        names = np.array(self.status_names() + ["unknown"], dtype=object)
        codes = np.where(codes < len(names) - 1, codes, len(names) - 1)
        return names[codes].astype(str)

    # --- summaries -------------------------------------------------------------------------
    @property
    def summary(self):
        """/summary as a plain dict: per-kind and per-status counts as {name: count}, vectors
        as lists, one-element datasets as numbers."""
        out = {}
        if "summary" not in self._file:
            return out
        group = self._file["summary"]
        for name, ds in group.items():
            value = _text(ds[()])
            kinds = ds.attrs.get("kinds")
            if name == "status_counts":
                labels = self.status_names()
            elif kinds is not None:
                labels = _names(_text(kinds))
            elif name == "events" and "members/events" in self._shapes:
                labels = self.names("members/events", "kinds")
            elif name.startswith("final_state") and np.ndim(value) == 1 and \
                    len(value) == len(self.state_names):
                labels = self.state_names
            else:
                labels = None
            if labels is not None and np.ndim(value) == 1 and len(labels) == len(value):
                out[name] = {label: v.item() for label, v in zip(labels, value)}
            elif isinstance(value, np.ndarray):
                out[name] = value.item() if value.size == 1 else value.tolist()
            else:
                out[name] = value
        return out

    def status_counts(self):
        """Members per status name, counted from /members/status."""
        names = self.status_names()
        counts = np.bincount(np.asarray(self.dataset("members/status")[()]),
                             minlength=len(names))
        return {name: int(counts[k]) for k, name in enumerate(names)}

    # --- event logs ------------------------------------------------------------------------
    def event_kinds(self, name="members/event_log"):
        """The names of the event kinds of /members/event_log (or of another dataset with the
        attribute kinds, such as /members/events); kinds by number where it has none."""
        ds = self.dataset(name)
        if "kinds" in ds.attrs:
            return self.names(name, "kinds")
        return [str(k) for k in range(ds.shape[1] if ds.ndim == 2 else 1)]

    def events(self, member=None, name="members/event_log"):
        """The event log of one member (an index), of several (a slice or index array), or of
        every member (None) as a Table: columns member (unless one member), then the slot's
        fields (t, kind as its name, from, to, the state by name); the NaN padding after a
        member's last event is dropped."""
        ds = self.dataset(name)
        width = int(ds.attrs["slot_width"])
        fields = self.names(name, "fields")
        kinds = np.array(self.event_kinds(name) + ["unknown"], dtype=object)
        if member is None:
            member = slice(None)
        one = np.ndim(member) == 0 and not isinstance(member, slice)
        rows = np.asarray(ds[member], dtype=float)
        rows = rows.reshape(1 if one else rows.shape[0], -1, width)
        ids = np.arange(self.members)[member] if not one else np.array([member])
        used = ~np.isnan(rows[:, :, 0])
        flat = rows[used]
        table = Table()
        if not one:
            table["member"] = np.repeat(np.atleast_1d(ids), used.sum(axis=1))
        for k, field in enumerate(fields):
            column = flat[:, k]
            if field == "kind":
                codes = column.astype(int)
                codes = np.where((codes >= 0) & (codes < len(kinds) - 1), codes, len(kinds) - 1)
                column = kinds[codes].astype(str)
            elif field in ("from", "to", "side"):
                column = column.astype(int)
            table[field] = column
        return table

    def exits(self, member=None):
        """The logged exit choices (/members/exits) as a Table, like events(); a model that
        never draws has none: a Table of the same columns, empty."""
        if "members/exits" in self._shapes:
            return self.events(member, name="members/exits")
        one = np.ndim(member) == 0 and member is not None and not isinstance(member, slice)
        table = Table() if one else Table(member=np.zeros(0, dtype=int))
        for field in ["t", "u", "side", "kind"] + self.state_names:
            table[field] = np.zeros(0, dtype={"side": int, "kind": str}.get(field, float))
        return table

    # --- Lyapunov exponents ------------------------------------------------------------------
    def lyapunov(self):
        """/lyapunov as a dict: its datasets (blocks and running as blocks x exponents) and its
        attributes."""
        if "lyapunov" not in self._file:
            return {}
        group = self._file["lyapunov"]
        out = {k: _text(v) for k, v in group.attrs.items()}
        for name in group:
            if f"lyapunov/{name}" in self._shapes:
                out[name] = self[f"lyapunov/{name}"]
        return out

    # --- Monte-Carlo draws (initial.sample, initial.from_file, model.sample) ---------------
    def initial_states(self, members=slice(None)):
        """The members' initial states (members x state, columns in state_names order): the
        draws of initial.sample, the rows of initial.from_file, or initial.state plus spread."""
        ds = self.dataset("members/initial_state")
        rows = np.asarray(ds[members], dtype=float)
        return rows[..., None] if ds.ndim == 1 else rows  # one component is stored 1-D

    def parameter_names(self):
        """Names of the parameters drawn per member (model.sample), [] if none were."""
        if "members/parameters" not in self._shapes:
            return []
        return [str(n) for n in _text(self.dataset("members/parameters").attrs["names"])]

    def parameters(self, members=slice(None)):
        """The members' drawn parameters by name: {name: array over members} ({} if no
        parameter was sampled)."""
        names = self.parameter_names()
        if not names:
            return {}
        ds = self.dataset("members/parameters")
        rows = np.asarray(ds[members], dtype=float)
        if ds.ndim == 1:  # one parameter is stored 1-D, like every one-column table
            rows = rows[..., None]
        return {name: rows[..., k] for k, name in enumerate(names)}

    # --- sampled trajectories --------------------------------------------------------------
    def sample_times(self):
        """The times of the trajectory samples."""
        if "members/trajectory" in self._shapes:
            a = self.dataset("members/trajectory").attrs
            return np.linspace(float(a["t0"]), float(a["t_end"]), int(a["samples"]))
        return np.asarray(self.dataset("trajectory/t")[()])

    def trajectory(self, members=slice(None)):
        """Sampled states, members x samples x state (one member: samples x state)."""
        if "members/trajectory" not in self._shapes:
            return np.asarray(self.dataset("trajectory/state")[()])
        rows = np.asarray(self.dataset("members/trajectory")[members])
        return rows.reshape(rows.shape[:-1] + (self.samples, len(self.state_names)))

    # --- optional conversions ---------------------------------------------------------------
    def to_xarray(self):
        """/members as an xarray.Dataset with dimensions member, sample, state (xarray is
        optional: python3-xarray).  Reads every per-member table except the event logs."""
        import xarray
        coords = {"member": np.arange(self.members), "state": self.state_names}
        data = {"status": ("member", self.statuses())}
        for name, shape in self._shapes.items():
            short = name.split("/", 1)[-1]
            if not name.startswith("members/") or short in ("status", "event_log", "exits"):
                continue
            if short == "parameters":
                for pname, column in self.parameters().items():
                    data[f"parameter_{pname}"] = ("member", column)
            elif short == "trajectory":
                coords["time"] = ("sample", self.sample_times())
                data[short] = (("member", "sample", "state"), self.trajectory())
            elif len(shape) == 1:
                data[short] = ("member", self[name])
            elif len(shape) == 2 and shape[1] == len(self.state_names):
                data[short] = (("member", "state"), self[name])
            elif short == "events":
                coords["kind"] = self.event_kinds(name)
                data[short] = (("member", "kind"), self[name])
        return xarray.Dataset(data, coords=coords, attrs={k: v for k, v in self.attrs.items()
                                                          if isinstance(v, (str, int, float))})

    def to_pandas(self):
        """One row per member: status (name), t_final, steps..., final_state_<name>, events
        per kind (pandas is optional: python3-pandas)."""
        import pandas
        columns = {"status": self.statuses()}
        for name, shape in self._shapes.items():
            short = name.split("/", 1)[-1]
            if not name.startswith("members/") or short in ("status", "event_log", "exits",
                                                           "trajectory"):
                continue
            if short == "parameters":
                for pname, column in self.parameters().items():
                    columns[f"parameter_{pname}"] = column
            elif len(shape) == 1:
                columns[short] = self[name]
            elif short == "events":
                for kind, column in zip(self.event_kinds(name), self[name].T):
                    columns[f"events_{kind}"] = column
            elif len(shape) == 2 and shape[1] == len(self.state_names):
                for state, column in zip(self.state_names, self[name].T):
                    columns[f"{short}_{state}"] = column
        return pandas.DataFrame(columns)
