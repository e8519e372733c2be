"""Regenerate golden instances and record their proven optimal objectives.

    python benchmarks/make_golden.py admission [reconfig ...]   # or: all
    python benchmarks/make_golden.py fairshare-perjob            # fair share's per-job record

Writes ``instances/<problem>/<name>.json`` and the record (``golden.json``; fair share's per-job
fairness unit ``golden-perjob.json``) for the candidates of ``golden_cases.py``. A candidate
becomes golden only if every exact method of its row in :data:`TABLE` proves it OPTIMAL (or,
where the row allows it, every one INFEASIBLE) and they agree on every objective level within
the row's relative tolerance (at least absolute) of the reference method's, whose objectives
are recorded; a method with a grid of its own (CP-SAT's integer shares in fair share and MoE
placement) is instead held to the row's ``check``. Otherwise the script stops with the
disagreement and exit code 1. A bench suite cannot express this (every method must *prove* and
*agree*), so it stays a script; the loop is one for every problem.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import golden_cases as cases

import schedopt
from schedopt.core.result import Result
from schedopt.core.status import Status

INSTANCES = Path(__file__).resolve().parents[1] / "instances"


@dataclass(frozen=True)
class Golden:
    """How one problem's candidates become golden."""

    folder: str
    candidates: Callable[[], cases.Cases]
    methods: tuple[str, ...]  # the first is the reference whose objectives are recorded
    time_limit_s: float = 120.0
    rel_tol: float = 1e-6
    infeasible_ok: bool = False
    record: str = "golden.json"
    #: Methods with a grid of their own: checked by ``check`` against the reference, not by
    #: ``rel_tol``; proven when OPTIMAL or, with ``grid_stat``, when that stat says "yes" (the
    #: grid's optimum, its lower levels given its own upper ones).
    grid: tuple[str, ...] = ()
    grid_stat: str | None = None
    check: Callable[[Any, Result, Result], str | None] = lambda inst, ref, r: None
    #: What the record keeps of a grid method's result beside the reference's objectives.
    extra: Callable[[Any, Result], dict[str, Any]] = lambda inst, r: {}


def _moe_delta(inst: Any) -> float:
    from schedopt.problems.moe_placement.data import build_data

    return build_data(inst).cpsat_tolerance_us  # type: ignore[no-any-return]


def _moe_check(inst: Any, ref: Result, cp: Result) -> str | None:
    """CP-SAT's first level (1/1000-share grid) within its resolution δ above the MILP's."""
    if inst.objective.mode == "weighted":
        return None
    delta = _moe_delta(inst)
    a, b = ref.objectives[0], cp.objectives[0]  # type: ignore[index]
    eps = 1e-6 + 1e-8 * abs(a)  # solver tolerances (HiGHS, CBC: 1e-6 feasibility)
    return None if a - eps <= b <= a + delta + eps else f"CP-SAT {b} not within δ={delta} of {a}"


def _fairshare_check(inst: Any, ref: Result, cp: Result) -> str | None:
    """CP-SAT's L1 within its share resolution (1/SHARE_SCALE) of the MILP's."""
    from schedopt.problems.fairshare.data import SHARE_SCALE

    a, b = ref.objectives[0], cp.objectives[0]  # type: ignore[index]
    return None if abs(a - b) <= 1.01 / SHARE_SCALE else f"CP-SAT's L1 {b} outside its grid of {a}"


def _moe_extra(inst: Any, cp: Result) -> dict[str, Any]:
    return {"cpsat_objectives": list(cp.objectives or ()), "cpsat_tolerance_us": _moe_delta(inst)}


FAIRSHARE = ("milp:highs", "milp:cbc", "cpsat")

TABLE: dict[str, Golden] = {
    "admission": Golden("admission", cases.admission, ("cpsat", "milp:highs", "milp:cbc")),
    "fairshare": Golden(
        "fairshare",
        cases.fairshare,
        FAIRSHARE,
        grid=("cpsat",),
        grid_stat="grid_optimal",
        check=_fairshare_check,
    ),
    "fairshare-perjob": Golden(
        "fairshare",
        cases.fairshare_perjob,
        FAIRSHARE,
        record="golden-perjob.json",
        grid=("cpsat",),
        grid_stat="grid_optimal",
        check=_fairshare_check,
    ),
    "timeshare": Golden("timeshare", cases.timeshare, ("milp:highs", "milp:cbc"), 60.0),
    "moe_placement": Golden(
        "moe_placement",
        cases.moe_placement,
        ("milp:highs", "milp:cbc", "cpsat"),
        grid=("cpsat",),
        grid_stat="grid_optimal",
        check=_moe_check,
        extra=_moe_extra,
    ),
    "cosched": Golden(
        "cosched", cases.cosched, ("cpsat", "milp:highs", "milp:cbc"), infeasible_ok=True
    ),
    "reconfig": Golden(
        "reconfig",
        cases.reconfig,
        ("cpsat", "milp:highs", "milp:cbc"),
        rel_tol=1e-9,
        infeasible_ok=True,
    ),
}


def _proven(g: Golden, method: str, r: Result) -> bool:
    if method in g.grid and g.grid_stat is not None and r.stats.get(g.grid_stat) == "yes":
        return True
    return r.status is Status.OPTIMAL or (g.infeasible_ok and r.status is Status.INFEASIBLE)


def entry(g: Golden, name: str, inst: Any) -> dict[str, Any] | str:
    """The record of one candidate, or why it is not golden."""
    found = {}
    for method in g.methods:
        r = schedopt.solve(inst, method, time_limit_s=g.time_limit_s)
        if not _proven(g, method, r):
            return f"{method} ended {r.status.value}"
        found[method] = r
    exact = [m for m in g.methods if m not in g.grid]
    statuses = {found[m].status for m in exact}
    if len(statuses) != 1:
        return f"statuses differ {[(m, found[m].status.value) for m in exact]}"
    if statuses == {Status.INFEASIBLE}:
        return {"status": "infeasible"}
    ref = found[g.methods[0]]
    assert ref.objectives is not None
    for m in exact:
        obj = found[m].objectives
        assert obj is not None
        if any(
            abs(a - b) > g.rel_tol * max(1.0, abs(a))
            for a, b in zip(ref.objectives, obj, strict=True)
        ):
            return f"{m} {obj} against {g.methods[0]} {ref.objectives}"
    out: dict[str, Any] = {"status": "optimal", "objectives": list(ref.objectives)}
    for m in g.grid:
        why = g.check(inst, ref, found[m])
        if why is not None:
            return why
        out.update(g.extra(inst, found[m]))
    return out


def make(key: str) -> int:
    g = TABLE[key]
    out = INSTANCES / g.folder
    out.mkdir(parents=True, exist_ok=True)
    golden = {}
    for name, inst in g.candidates():
        made = entry(g, name, inst)
        if isinstance(made, str):
            print(f"{key}/{name}: {made}; not golden", file=sys.stderr)
            return 1
        schedopt.dump(inst, out / f"{name}.json")
        golden[f"{name}.json"] = made
        print(f"{key}/{name}: {made}")
    (out / g.record).write_text(json.dumps(golden, indent=1) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    keys = list(sys.argv[1:] if argv is None else argv)
    if keys == ["all"]:
        keys = list(TABLE)
    if not keys or any(k not in TABLE for k in keys):
        print(f"usage: make_golden.py all | {' | '.join(TABLE)} ...", file=sys.stderr)
        return 2
    return max(make(k) for k in keys)


if __name__ == "__main__":
    sys.exit(main())
