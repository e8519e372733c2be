"""The best-known table: for each recipe, the best first objective level any run found (value,
method, time limit, wall time, commit, date) and the best proven bound, kept small in
``benchmarks/best_known.json`` and updated from rows by ``schedopt bench ... --update-best-known``.

Keyed ``"<suite>/<recipe>"`` with the instance checksum: an entry whose checksum differs from a
row's (a generator changed) is replaced, not merged, since it describes another instance. Only
the first level of a lexicographic objective is compared (the level the suites are ranked by);
a bound is kept only from a row that reports one (a proof), on its own side: for a maximised
level the smallest upper bound, for a minimised one the largest lower bound.

One instance may be a recipe of several suites (cosched's 4,096-GPU row is in
``cosched-paper-60s``, ``cosched-scaling-60s`` and ``cosched-sizes-60s``): entries with the same
checksum share the best value and the best bound any of them holds, the key it came from in
``value_from`` / ``bound_from`` (a value and a bound of one instance are comparable whichever
run found them).
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
            entry.pop("value_from", None)  # its own row's now
        bound = r.get("bound")
        if bound is not None and (
            "bound" not in entry or _better(_other(sense), bound, entry["bound"])
        ):
            entry.update(bound=float(bound), bound_method=r.get("method_used") or r["method"])
            entry.pop("bound_from", None)
        entry["status"] = "closed" if _closed(entry) else "open"
        if (entry != before or key not in out) and key not in changed:
            changed.append(key)
        out[key] = entry
    _share(out, changed)
    return dict(sorted(out.items())), changed


#: The fields that travel with an entry's value, and with its bound.
VALUE_FIELDS = ("value", "method", "time_limit_s", "wall_s", "commit", "when")
BOUND_FIELDS = ("bound", "bound_method")


def _share(table: dict[str, Any], changed: list[str]) -> None:
    """Each entry takes the best value and bound of the entries with its checksum (the same
    instance under another suite's name); ``changed`` gains the keys that took one."""
    by_instance: dict[str, list[str]] = {}
    for key, entry in table.items():
        if entry.get("checksum"):
            by_instance.setdefault(entry["checksum"], []).append(key)
    for keys in by_instance.values():
        if len(keys) < 2:
            continue
        sense = table[keys[0]]["sense"]
        valued = [k for k in keys if "value" in table[k]]
        bounded = [k for k in keys if "bound" in table[k]]
        for key in keys:
            entry, before = table[key], dict(table[key])
            for source in valued:
                src = table[source]
                if "value" not in entry or _better(sense, src["value"], entry["value"]):
                    entry.update({f: src[f] for f in VALUE_FIELDS if f in src})
                    entry["value_from"] = src.get("value_from", source)
            for source in bounded:
                src = table[source]
                if "bound" not in entry or _better(_other(sense), src["bound"], entry["bound"]):
                    entry.update({f: src[f] for f in BOUND_FIELDS if f in src})
                    entry["bound_from"] = src.get("bound_from", source)
            entry["status"] = "closed" if _closed(entry) else "open"
            if entry != before and key not in changed:
                changed.append(key)


def _other(sense: str) -> str:
    """The sense a bound improves in: up for a minimised level, down for a maximised one."""
    return "min" if sense == "max" else "max"


def _closed(entry: Mapping[str, Any]) -> bool:
    return (
        "bound" in entry
        and "value" in entry
        and abs(entry["bound"] - entry["value"]) <= (1e-6 * max(1.0, abs(entry["value"])))
    )


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
