"""The InfiniteHBD fault trace (stepfun-ai/InfiniteHBD-Trace, Apache-2.0): fault start/end
events per server, times in days.

``fault_trace.json`` is a list of ``{"node_id", "event_time" (days), "event_type"
("fault_start" | "fault_end"), "fault_type": {"Level", "Class", "Desc"}}``. The loader pairs
each start with the next end of the same node (a fault without an end lasts to the end of the
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
    open_: dict[str, list[tuple[float, dict]]] = {}
    out: list[Fault] = []
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
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
            raise InvalidInstanceError(f"{where}.event_time", "must be a finite number ≥ 0 (days)")
        if kind not in ("fault_start", "fault_end"):
            raise InvalidInstanceError(f"{where}.event_type", "must be fault_start or fault_end")
        if not isinstance(ft, dict):
            raise InvalidInstanceError(f"{where}.fault_type", "must be an object")
        if kind == "fault_start":
            open_.setdefault(node, []).append((float(t), ft))
        elif open_.get(node):
            start, f = open_[node].pop(0)
            out.append(_fault(node, start, float(t), f))
    for node, starts in open_.items():
        out.extend(_fault(node, s, math.inf, f) for s, f in starts)
    return sorted(out, key=lambda f: (f.start_day, f.node))


def _fault(node: str, start: float, end: float, ft: dict) -> Fault:
    return Fault(
        node,
        start,
        max(end, start),
        str(ft.get("Level", "")),
        str(ft.get("Class", "")),
        str(ft.get("Desc", "")),
    )
