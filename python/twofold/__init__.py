"""twofold — run a twofold config from Python and read its results file lazily.

    import twofold
    res = twofold.run("configs/smoke.yaml", output="smoke.h5", set={"ensemble.members": 100})
    res.dims                      # {"members": 100, "state": 3}: named dimensions
    res.statuses()                # member statuses as names ("ok", "max_steps", ...)
    res["members/final_state"]    # a dataset as a numpy array, read when asked for
    res.summary                   # /summary as a plain dict (events and statuses by name)
    res.events(0)                 # member 0's event log as a Table (Filippov ensembles)
    res.run                       # the run's JSON summary (wall_seconds, status, ...)
    res = twofold.open("smoke.h5")    # an existing file: metadata only until asked

run() drives the `twofold` executable (through `twofold mpirun` when ranks > 1), so it
behaves exactly as the command line does; it needs numpy and h5py (Debian: python3-numpy,
python3-h5py; pandas and xarray are optional, for to_pandas and to_xarray).  The executable
is taken from TWOFOLD_EXECUTABLE, else the bin directory of the prefix this module is
installed in, else PATH.
"""
import json
import os
import shutil
import subprocess
import sys
import threading

from .results import STATUS_NAMES, Results, Table

__all__ = ["run", "open", "read", "executable", "TwofoldError", "Results", "Table",
           "STATUS_NAMES"]


class TwofoldError(RuntimeError):
    """A failed run: `status` is twofold's exit status (1 runtime error, 2 bad usage or config,
    3 interrupted, 4 complete but every member failed or more than run.max_failed_fraction of
    them: the file is whole: twofold.open(summary["output"]); 5 the model cannot be set up,
    6 the output cannot be written, 7 internal error), `message` the engine's error message,
    `summary` its JSON summary if it printed one."""

    def __init__(self, status, message, summary=None):
        super().__init__(f"twofold exited with status {status}: {message}")
        self.status = status
        self.message = message
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


def open(path, run=None):  # noqa: A001 (twofold.open, like h5py.File)
    """A results file as a lazy Results (see twofold.results): metadata only until asked."""
    return Results(path, run)


read = open  # the name of earlier versions


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return repr(value) if isinstance(value, float) else str(value)


def _launcher(ranks, mpiexec_options):
    """`twofold mpirun -n RANKS [options] -- run` for ranks > 1, adding Open MPI's
    --oversubscribe when there are more ranks than cores and --allow-run-as-root for root."""
    options = [str(o) for o in mpiexec_options]
    if ranks > (os.cpu_count() or 1) and "--oversubscribe" not in options:
        options.append("--oversubscribe")
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-run-as-root" not in options:
        options.append("--allow-run-as-root")
    return [executable(), "mpirun", "-n", str(int(ranks))] + options + ["--", "run"]


def _read_lines(pipe, progress, kept):
    for line in pipe:
        kept.append(line)
        if progress and not line.startswith("twofold"):
            progress(line.rstrip("\n"))


def _show(line):
    print(line, file=sys.stderr, flush=True)


def run(config, output=None, set=None, ranks=1, overwrite=False, options=(), progress=_show,
        mpiexec_options=()):
    """Runs `twofold run CONFIG` and returns its results file, opened lazily (a Results, with
    the run's JSON summary as .run).

    config     a config file, or the name of an installed one ("smoke": `twofold configs`)
    output     the results file (default: the config's output.file, else CONFIG with .h5)
    set        {path: value} config overrides, as --set path=value (lists as [a, b])
    ranks      MPI ranks; more than 1 runs under `twofold mpirun` (mpiexec: MPIEXEC, else
               mpiexec on PATH), with mpiexec_options, plus --oversubscribe beyond the cores
               and --allow-run-as-root for root
    overwrite  replace an existing output file (--overwrite); by default an existing file is
               refused, as by the command line (TwofoldError, status 2)
    options    further command-line arguments (e.g. ["--resume"], ["--stop-after", 3],
               ["-ts_type", "rosw"])
    progress   called with each progress line of the engine (`--progress log`, e.g.
               "members: 300/3000 (10.0%)  ..." every 5 s and at the end); default: printed
               to stderr; None: none
    Raises TwofoldError with the engine's message and exit status if the run does not
    complete."""
    cmd = _launcher(ranks, mpiexec_options) if ranks > 1 else [executable(), "run"]
    cmd += [os.fspath(config), "--json", "--progress", "log" if progress else "none"]
    if output is not None:
        cmd += ["-o", os.fspath(output)]
    for key, value in (set or {}).items():
        cmd += ["--set", f"{key}={_text(value)}"]
    if overwrite:
        cmd.append("--overwrite")
    cmd += [str(o) for o in options]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    kept = []
    reader = threading.Thread(target=_read_lines, args=(proc.stderr, progress, kept))
    reader.start()
    stdout = proc.stdout.read()
    reader.join()
    returncode = proc.wait()
    stderr = "".join(kept)
    summary = None
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                summary = json.loads(line)
            except ValueError:
                continue
            break
    if returncode != 0:
        message = (summary or {}).get("error") or (summary or {}).get("failures")
        if not message:
            errors = [l for l in stderr.splitlines() if l.startswith("twofold")]
            message = "\n".join(errors) if errors else stderr.strip()
            message = message.removeprefix("twofold: error: ")
        if not message and summary:
            message = f"run {summary.get('status')}; what was done is in {summary.get('output')}"
        raise TwofoldError(returncode, message, summary)
    if summary is None:
        raise TwofoldError(1, "no JSON summary on stdout:\n" + stdout[-2000:])
    return Results(summary.get("output") or output, summary)


try:
    from ._install import VERSION as __version__
except ImportError:  # installed by pip, or the source tree
    try:
        from importlib.metadata import version as _version
        __version__ = _version("twofold")
    except Exception:  # noqa: BLE001 (not installed at all)
        __version__ = None
