"""results_layout.py — attributes of a twofold results file as the postproc scripts read them,
in the current layout and in older files (CHANGELOG.md, "One results layout")."""
import numpy as np


def text_attr(obj, name, default=""):
    """A string attribute as str ("" or `default` if absent)."""
    value = obj.attrs.get(name, default)
    return value.decode() if isinstance(value, bytes) else str(value)


def names_attr(obj, name, sep=","):
    """A list of names (state_names, kinds, fields, ...) as a list of str: an array of strings,
    or in older files one string joined with `sep` ("," for names, "\\n" for merged_from, the
    parts' paths); [] if absent."""
    value = obj.attrs.get(name)
    if value is None:
        return []
    if isinstance(value, (bytes, str)):
        text = value.decode() if isinstance(value, bytes) else value
        return text.split(sep) if text else []
    return [v.decode() if isinstance(v, bytes) else str(v) for v in np.asarray(value).ravel()]
