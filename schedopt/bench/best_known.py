"""The best-known table: for each recipe, the best first objective level any run found (value,
method, time limit, wall time, commit, date) and the best proven bound, kept small in
``benchmarks/best_known.json`` and updated from rows by ``schedopt bench ... --update-best-known``.

Keyed ``"<suite>/<recipe>"`` with the instance checksum: an entry whose checksum differs from a
row's (a generator changed) is replaced, not merged, since it describes another instance. Only
the first level of a lexicographic objective is compared (the level the suites are ranked by);
a bound is kept only from a row that reports one (a proof), on its own side: for a maximised
level the smallest upper bound, for a minimised one the largest lower bound.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

DEFAULT_PATH = Path("benchmarks") / "best_known.json"


def _better(sense: str, new: float, old: float) -> bool:
    return new > old if sense == "max" else new < old


def update(
    table: Mapping[str, Any], rows: Iterable[Mapping[str, Any]]
) -> tuple[dict[str, Any], list[str]]:
    """``table`` improved by ``rows``; also the keys that changed. The commit recorded is the
    one the row ran at (``versions.commit``)."""
    out = {k: dict(v) for k, v in table.items()}
    changed: list[str] = []
    for r in rows:
        if r.get("objectives") is None or r.get("status") not in ("optimal", "feasible"):
            continue
        key = f"{r['suite']}/{r['recipe']}"
        sense = r["senses"][0]
        value = float(r["objectives"][0])
        entry = out.get(key)
        if entry is None or entry.get("checksum") != r.get("checksum"):
            entry = {"checksum": r.get("checksum"), "problem": r["problem"], "sense": sense}
        before = dict(entry)
        if "value" not in entry or _better(sense, value, entry["value"]):
            entry.update(
                value=value,
                method=r.get("method_used") or r["method"],
                time_limit_s=r["time_limit_s"],
                wall_s=round(float(r["wall_s"]), 3),
                commit=r.get("versions", {}).get("commit", "unknown"),
                when=str(r.get("when", ""))[:10],
            )
        bound = r.get("bound")
        if bound is not None and (
            "bound" not in entry
            or _better("min" if sense == "max" else "max", bound, entry["bound"])
        ):
            entry.update(bound=float(bound), bound_method=r.get("method_used") or r["method"])
        closed = "bound" in entry and abs(entry["bound"] - entry["value"]) <= 1e-6 * max(
            1.0, abs(entry["value"])
        )
        entry["status"] = "closed" if closed else "open"
        if (entry != before or key not in out) and key not in changed:
            changed.append(key)
        out[key] = entry
    return dict(sorted(out.items())), changed


def load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text())
    assert isinstance(doc, dict)
    return doc


def save(path: Path, table: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


__all__ = ["DEFAULT_PATH", "load", "save", "update"]
