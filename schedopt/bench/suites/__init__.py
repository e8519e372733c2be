"""Every shipped suite, by name. One module per problem (``admission.py``, ...) exports
``SUITES: tuple[Suite, ...]``; add a module's name to ``_MODULES`` to list its suites.

The checksums of the instances the recipes build are kept apart, in ``checksums.json``
(``{suite: {recipe: sha256}}``), written by ``schedopt bench --checksums SUITE --update`` in a
checkout; :func:`all_suites` fills them into the recipes."""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Mapping
from pathlib import Path

from schedopt.bench.suite import Suite

_MODULES: tuple[str, ...] = (
    "admission",
    "fairshare",
    "timeshare",
    "moe_placement",
    "cosched",
    "reconfig",
)

#: The recorded instance checksums (and trace files' SHA-256, under ``"data:<recipe>"``).
CHECKSUMS = Path(__file__).with_name("checksums.json")


def recorded_checksums() -> dict[str, dict[str, str]]:
    if not CHECKSUMS.is_file():
        return {}
    doc = json.loads(CHECKSUMS.read_text())
    assert isinstance(doc, dict)
    return doc


def with_checksums(suite: Suite, table: Mapping[str, Mapping[str, str]]) -> Suite:
    """``suite`` with the checksums ``table`` records for it filled into its recipes."""
    known = table.get(suite.name, {})
    recipes = tuple(
        dataclasses.replace(
            r,
            checksum=known.get(r.name, r.checksum),
            data_sha256=known.get(f"data:{r.name}", r.data_sha256),
        )
        for r in suite.recipes
    )
    return dataclasses.replace(suite, recipes=recipes)


def all_suites() -> dict[str, Suite]:
    """Every shipped suite, keyed by its name, with its recorded checksums."""
    table = recorded_checksums()
    out: dict[str, Suite] = {}
    for name in _MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        for suite in module.SUITES:
            if suite.name in out:
                raise RuntimeError(f"suite {suite.name!r} defined twice")
            out[suite.name] = with_checksums(suite, table)
    return out


__all__ = ["CHECKSUMS", "all_suites", "recorded_checksums", "with_checksums"]
