"""Checkpoints of a tuning run: every evaluated point and what it found, written after each
batch, so that an interrupted run (Ctrl-C, a lost worker, a time-out) resumes where it was.

The file records the problem, the method, the parameter names and the checksums of the
training instances; a checkpoint of another run is refused rather than mixed in.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedopt.core.errors import InvalidInstanceError

SCHEMA_VERSION = 1


@dataclass
class Checkpoint:
    """What a tuning run has evaluated so far: ``points[i]`` (parameter values in the order of
    ``names``) found ``found[i]`` (per training instance: objectives, or None)."""

    problem: str
    method: str
    names: list[str]
    instances: list[str]  # checksums of the training instances, in order
    points: list[list[float]] = field(default_factory=list)
    found: list[list[list[float] | None]] = field(default_factory=list)

    def matches(self, other: Checkpoint) -> bool:
        return (self.problem, self.method, self.names, self.instances) == (
            other.problem,
            other.method,
            other.names,
            other.instances,
        )


def load_checkpoint(path: str | os.PathLike[str], expected: Checkpoint) -> Checkpoint:
    """The checkpoint at ``path``, or ``expected`` (empty) when there is none yet. A file of
    another run (other method, parameters or instances) raises ``InvalidInstanceError``."""
    target = Path(path)
    if not target.exists():
        return expected
    try:
        doc: dict[str, Any] = json.loads(target.read_text())
        saved = Checkpoint(
            problem=doc["problem"],
            method=doc["method"],
            names=list(doc["names"]),
            instances=list(doc["instances"]),
            points=[list(p) for p in doc["points"]],
            found=[list(f) for f in doc["found"]],
        )
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise InvalidInstanceError(
            "checkpoint", f"{target}: not a tuning checkpoint ({err})"
        ) from None
    if doc.get("schema_version") != SCHEMA_VERSION or len(saved.points) != len(saved.found):
        raise InvalidInstanceError("checkpoint", f"{target}: not a schema-1 tuning checkpoint")
    if not saved.matches(expected):
        raise InvalidInstanceError(
            "checkpoint",
            f"{target}: a checkpoint of another run ({saved.problem} {saved.method} over "
            f"{len(saved.instances)} instances); remove it or choose another path",
        )
    return saved


def save_checkpoint(path: str | os.PathLike[str], state: Checkpoint) -> None:
    """Write ``state`` to ``path`` atomically (the old file or the new one, never half)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    doc = {"schema_version": SCHEMA_VERSION, **state.__dict__}
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["Checkpoint", "load_checkpoint", "save_checkpoint"]
