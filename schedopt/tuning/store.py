"""Tuned heuristic parameters: versioned JSON files of method name → parameter values.

One file per problem::

    {"schema_version": 1, "problem": "admission",
     "methods": {"heuristic:edf": {"params": {...}, "score": ..., "tuned_on": [...], ...}}}

Two kinds of file, kept apart so that tuning never changes what other users get:

- the **shipped** parameters, ``schedopt/tuning/params/<problem>.json``: read-only package
  data, used by ``method="auto"`` always;
- **your** parameters, written by ``schedopt tune --save [PATH]`` (default
  :func:`default_save_path`, a per-user file) and read only when passed explicitly:
  ``schedopt.solve(..., tuned=PATH)`` or ``schedopt solve --tuned PATH``. They override the
  shipped ones for the methods the file lists.

Nothing here reads an environment variable to decide *what* is used; ``XDG_CONFIG_HOME`` only
picks the default *place* a save goes to.
"""

from __future__ import annotations

import functools
import json
import math
import os
import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any

from schedopt.core.errors import InvalidInstanceError
from schedopt.core.files import read_capped
from schedopt.core.registry import get_problem

SCHEMA_VERSION = 1
#: The shipped parameters (package data; never written by schedopt itself).
PARAMS_DIR = Path(__file__).resolve().parent / "params"
#: Largest parameter file read (a few methods' parameters take a few kB).
MAX_FILE_BYTES = 1 << 20


def shipped_path(problem: str) -> Path:
    """The read-only parameter file shipped with schedopt for ``problem``."""
    return PARAMS_DIR / f"{problem}.json"


def default_save_path(problem: str) -> Path:
    """Where ``schedopt tune --save`` writes without a PATH: the per-user config directory.

    ``$XDG_CONFIG_HOME/schedopt/params/<problem>.json`` (``~/.config`` when that variable is
    unset or not an absolute path, as the XDG base-directory specification says).
    """
    base = os.environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / "schedopt" / "params" / f"{problem}.json"


def _read(problem: str, path: Path, field: str) -> dict[str, Any]:
    """The parameter document at ``path``; any defect is an ``InvalidInstanceError`` on
    ``field`` that names the file."""
    try:  # a regular file only, the bytes read capped (a FIFO blocked open(), #16)
        raw = read_capped(path, MAX_FILE_BYTES)
    except InvalidInstanceError as err:
        raise InvalidInstanceError(field, err.reason) from None
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise InvalidInstanceError(field, f"{path}: not JSON ({err})") from None
    if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION:
        raise InvalidInstanceError(
            field, f"{path}: not a schema-{SCHEMA_VERSION} schedopt parameter file"
        )
    if doc.get("problem") != problem:
        raise InvalidInstanceError(
            field, f"{path}: parameters for {doc.get('problem')!r}, not for {problem!r}"
        )
    if not isinstance(doc.get("methods"), dict):
        raise InvalidInstanceError(field, f"{path}: 'methods' must be an object")
    return doc


def _checked_params(problem: str, path: Path, field: str, doc: dict[str, Any]) -> dict[str, Any]:
    """method → params, each checked against the method's parameter dataclass, so that a
    hand-edited file fails here with its name rather than inside a solve."""
    spec = get_problem(problem)
    out: dict[str, dict[str, Any]] = {}
    for name, entry in doc["methods"].items():
        where = f"{path}: methods.{name}"
        method = spec.methods.get(name)
        if method is None or method.params is None:
            raise InvalidInstanceError(field, f"{where}: not a tunable heuristic of {problem}")
        params = entry.get("params") if isinstance(entry, dict) else None
        if not isinstance(params, dict):
            raise InvalidInstanceError(field, f"{where}: needs a 'params' object")
        known = {f.name for f in fields(method.params)}
        for key, value in params.items():
            if key not in known:
                raise InvalidInstanceError(
                    field, f"{where}.params.{key}: unknown; known: {', '.join(sorted(known))}"
                )
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or abs(value) > 1e12:
                raise InvalidInstanceError(
                    field, f"{where}.params.{key}: must be a finite number (got {value!r})"
                )
        try:
            method.params(**params)
        except (TypeError, ValueError) as err:
            raise InvalidInstanceError(field, f"{where}.params: {err}") from None
        out[name] = dict(params)
    return out


@functools.cache
def _shipped(problem: str) -> dict[str, Any]:
    """The shipped parameters, read once per process (package data does not change; ``solve``
    reads them on every call)."""
    shipped = shipped_path(problem)
    if not shipped.exists():
        return {}
    return _checked_params(problem, shipped, "tuned", _read(problem, shipped, "tuned"))


def load_tuned(problem: str, path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """method name → tuned parameter values: the shipped ones, overridden method by method by
    the file at ``path`` when one is given (a file ``save_tuned`` wrote). Empty when nothing was
    tuned. A missing or malformed ``path`` raises ``InvalidInstanceError`` on field ``tuned``."""
    tuned: dict[str, Any] = {name: dict(p) for name, p in _shipped(problem).items()}
    if path is not None:
        user = Path(path)
        tuned.update(_checked_params(problem, user, "tuned", _read(problem, user, "tuned")))
    return tuned


def save_tuned(
    problem: str, method: str, entry: dict[str, Any], path: str | os.PathLike[str]
) -> Path:
    """Record ``entry`` (with a ``params`` mapping) for ``method`` in the file at ``path``,
    keeping the other methods already there. The file is replaced atomically (a crash leaves
    the old file or the new one, and no temporary file)."""
    target = Path(path)
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "problem": problem, "methods": {}}
    if target.exists():
        doc = _read(problem, target, "save")
    doc["methods"][method] = entry
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
