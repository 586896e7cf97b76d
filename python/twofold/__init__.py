"""twofold — run a twofold config from Python and get its results file back as numpy arrays.

    import twofold
    res = twofold.run("configs/smoke.yaml", set={"ensemble.members": 100}, ranks=2)
    res["members/final_state"]      # numpy array, one row per member
    res.summary                     # the run's --json summary (dict)
    res.attrs                       # the file's root attributes (version, config as run, ...)

This drives the installed `twofold` executable (under mpiexec when ranks > 1), so it behaves
exactly as the command line does and needs only numpy and h5py (Debian: python3-numpy,
python3-h5py).  The executable is taken from TWOFOLD_EXECUTABLE, else the bin directory of the
prefix this module is installed in, else PATH.
"""
import json
import os
import shutil
import subprocess

__all__ = ["run", "read", "executable", "TwofoldError", "Results"]


class TwofoldError(RuntimeError):
    """A failed run: `status` is twofold's exit status (1 runtime error, 2 bad usage or config,
    3 interrupted, 4 complete but every member failed or more than run.max_failed_fraction of
    them: the file is whole, read it with read(summary["output"])), `message` the CLI's error
    message."""

    def __init__(self, status, message, summary=None):
        super().__init__(f"twofold exited with status {status}: {message}")
        self.status = status
        self.message = message
        self.summary = summary


class Results(dict):
    """Every dataset of a results file by its path ("members/final_state"), plus `summary`
    (the JSON summary of the run, if there is one), `attrs` (root attributes) and `path`."""

    def __init__(self, path, arrays, attrs, summary):
        super().__init__(arrays)
        self.path = path
        self.attrs = attrs
        self.summary = summary


def executable():
    """The twofold executable this module runs."""
    exe = os.environ.get("TWOFOLD_EXECUTABLE")
    if exe:
        return exe
    try:
        from . import _install
        here = os.path.dirname(os.path.abspath(__file__))
        exe = os.path.normpath(os.path.join(here, _install.BINDIR_FROM_PACKAGE, "twofold"))
        if os.access(exe, os.X_OK):
            return exe
    except ImportError:  # the source tree: no generated _install.py
        pass
    exe = shutil.which("twofold")
    if not exe:
        raise TwofoldError(127, "the twofold executable was not found (set TWOFOLD_EXECUTABLE)")
    return exe


def _decode(value):
    import numpy as np
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray) and value.dtype.kind == "S":
        return value.astype(str)
    return value


def read(path, summary=None):
    """A results file as a Results dict of numpy arrays."""
    import h5py
    arrays = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                arrays[name] = _decode(obj[()])
        f.visititems(visit)
        attrs = {k: _decode(v) for k, v in f.attrs.items()}
    return Results(path, arrays, attrs, summary)


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return repr(value) if isinstance(value, float) else str(value)


def run(config, output=None, set=None, ranks=1, overwrite=True, options=(), mpiexec=None):
    """Runs `twofold run CONFIG` and returns its results file (see Results).

    output     the results file (default: the config's output.file, else CONFIG with .h5)
    set        {path: value} config overrides, as --set path=value (lists as [a, b])
    ranks      MPI ranks; more than 1 runs under mpiexec (MPIEXEC, else mpiexec on PATH)
    overwrite  replace an existing output file (--overwrite, unless options has --resume);
               False refuses it as the CLI does
    options    further command-line arguments (e.g. ["--stop-after", "3", "-ts_type", "rosw"])
    Raises TwofoldError with the CLI's message if the run does not complete."""
    cmd = [executable(), "run", os.fspath(config), "--json", "--quiet"]
    if output is not None:
        cmd += ["-o", os.fspath(output)]
    for key, value in (set or {}).items():
        cmd += ["--set", f"{key}={_text(value)}"]
    options = [str(o) for o in options]
    if overwrite and "--resume" not in options:
        cmd.append("--overwrite")
    cmd += options
    if ranks > 1:
        launcher = mpiexec or os.environ.get("MPIEXEC") or shutil.which("mpiexec") or "mpiexec"
        cmd = [launcher, "-n", str(int(ranks))] + cmd
    proc = subprocess.run(cmd, capture_output=True, text=True)
    summary = None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            try:
                summary = json.loads(line)
            except ValueError:
                continue
            break
    if proc.returncode != 0:
        message = (summary or {}).get("error") or (summary or {}).get("failures")
        if not message:
            errors = [l for l in proc.stderr.splitlines() if l.startswith("twofold")]
            message = "\n".join(errors) if errors else proc.stderr.strip()
            message = message.removeprefix("twofold: error: ")
        if not message and summary:
            message = f"run {summary.get('status')}; what was done is in {summary.get('output')}"
        raise TwofoldError(proc.returncode, message, summary)
    if summary is None:
        raise TwofoldError(1, "no JSON summary on stdout:\n" + proc.stdout[-2000:])
    return read(summary.get("output") or output, summary)


try:
    from ._install import VERSION as __version__
except ImportError:
    __version__ = None
