"""Tuned heuristic parameters: versioned JSON files that ``method="auto"`` picks up.

One file per problem, ``schedopt/tuning/params/<problem>.json``::

    {"schema_version": 1, "problem": "admission",
     "methods": {"heuristic:edf": {"params": {...}, "score": ..., "tuned_on": [...], ...}}}

A missing file or method means the parameters' defaults.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
PARAMS_DIR = Path(__file__).resolve().parent / "params"


def params_path(problem: str, directory: Path | None = None) -> Path:
    return (directory or PARAMS_DIR) / f"{problem}.json"


def load_tuned(problem: str, directory: Path | None = None) -> dict[str, dict[str, Any]]:
    """method name → tuned parameter values (empty when nothing was tuned)."""
    path = params_path(problem, directory)
    if not path.exists():
        return {}
    doc = json.loads(path.read_text())
    if doc.get("schema_version") != SCHEMA_VERSION or doc.get("problem") != problem:
        raise ValueError(f"{path}: not a schema-{SCHEMA_VERSION} parameter file for {problem!r}")
    return {name: dict(entry["params"]) for name, entry in doc.get("methods", {}).items()}


def save_tuned(
    problem: str, method: str, entry: dict[str, Any], directory: Path | None = None
) -> Path:
    """Record ``entry`` (with a ``params`` mapping) for ``method``, keeping other methods."""
    path = params_path(problem, directory)
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "problem": problem, "methods": {}}
    if path.exists():
        doc = json.loads(path.read_text())
    doc["methods"][method] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return path
