"""The InfiniteHBD fault trace (stepfun-ai/InfiniteHBD-Trace, Apache-2.0): fault start/end
events per server, times in days.

``fault_trace.json`` is a list of ``{"node_id", "event_time" (days), "event_type"
("fault_start" | "fault_end"), "fault_type": {"Level", "Class", "Desc"}}``. The loader pairs
each start with the next end of the same node in time (the events are read in time order, so a
file not sorted by time pairs as a sorted one; a fault without an end lasts to the end of the
trace) and returns frozen :class:`Fault` records sorted by start. Bad files raise
:class:`InvalidInstanceError` naming the file and the entry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from schedopt.core.errors import InvalidInstanceError

from ._files import read_json

#: More events than this are refused (the published trace has 1,168).
MAX_EVENTS = 1_000_000
#: Latest event time accepted, days (the published trace spans 349).
MAX_DAY = 1e9


@dataclass(frozen=True)
class Fault:
    node: str
    start_day: float
    end_day: float  # inf: still open at the end of the trace
    level: str  # "Hardware Failure", "Software Failure", ...
    kind: str  # the class: "GPU", "Parameter Plane Cable", ...
    desc: str

    @property
    def is_gpu(self) -> bool:
        return self.kind == "GPU"


def load_infinitehbd_faults(path: str | PathLike[str]) -> list[Fault]:
    p = Path(path)
    doc = read_json(p)
    if not isinstance(doc, list):
        raise InvalidInstanceError(p.name, "must be a list of fault events")
    if len(doc) > MAX_EVENTS:
        raise InvalidInstanceError(p.name, f"more than {MAX_EVENTS} events")
    events: list[tuple[float, int, str, str, dict]] = []
    for i, ev in enumerate(doc):
        where = f"{p.name}[{i}]"
        if not isinstance(ev, dict):
            raise InvalidInstanceError(where, "an event must be an object")
        node, t, kind, ft = (
            ev.get("node_id"),
            ev.get("event_time"),
            ev.get("event_type"),
            ev.get("fault_type", {}),
        )
        if not isinstance(node, str) or not node:
            raise InvalidInstanceError(f"{where}.node_id", "must be a non-empty string")
        day = _day(t)
        if day is None:
            raise InvalidInstanceError(
                f"{where}.event_time", f"must be a finite number of days in [0, {MAX_DAY:g}]"
            )
        if kind not in ("fault_start", "fault_end"):
            raise InvalidInstanceError(f"{where}.event_type", "must be fault_start or fault_end")
        if not isinstance(ft, dict):
            raise InvalidInstanceError(f"{where}.fault_type", "must be an object")
        events.append((day, i, node, kind, ft))
    events.sort(key=lambda e: (e[0], e[1]))  # time order; ties keep the file's order
    open_: dict[str, list[tuple[float, dict]]] = {}
    out: list[Fault] = []
    for day, _, node, kind, ft in events:
        if kind == "fault_start":
            open_.setdefault(node, []).append((day, ft))
        elif open_.get(node):
            start, f = open_[node].pop(0)
            out.append(_fault(node, start, day, f))
    for node, starts in open_.items():
        out.extend(_fault(node, s, math.inf, f) for s, f in starts)
    return sorted(out, key=lambda f: (f.start_day, f.node))


def _day(t: object) -> float | None:
    """``event_time`` as a float of days, or None when it is not a number in range (an integer
    too large for a float must not escape as an OverflowError)."""
    if isinstance(t, bool) or not isinstance(t, int | float):
        return None
    if isinstance(t, int) and not 0 <= t <= MAX_DAY:
        return None
    day = float(t)
    return day if math.isfinite(day) and 0 <= day <= MAX_DAY else None


def _fault(node: str, start: float, end: float, ft: dict) -> Fault:
    return Fault(
        node,
        start,
        max(end, start),
        str(ft.get("Level", "")),
        str(ft.get("Class", "")),
        str(ft.get("Desc", "")),
    )
