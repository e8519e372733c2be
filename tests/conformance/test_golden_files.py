"""Every instance file under ``instances/`` (the golden instances of every problem and the
examples beside them) is written in the current schema: loading it and dumping it again gives
the same document, every field the schema has now written out. A schema change that adds a
field without rewriting these files fails here (the fair-share and time-share goldens lacked
``fairness_unit``, ``weight``, ``deserved_gpu_s``, ``colocation`` and ``job_type``, #16/#17);
``benchmarks/make_golden.py`` writes them through ``schedopt.dump``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import schedopt
from schedopt.io.instance_json import to_json

from .support import INSTANCES, PROBLEMS


def _records() -> list[Path]:
    return sorted(INSTANCES.glob("*/golden*.json"))


def _golden_files() -> set[Path]:
    return {rec.parent / name for rec in _records() for name in json.loads(rec.read_text())}


def _instance_files() -> list[Path]:
    return sorted(p for p in INSTANCES.glob("*/*.json") if not p.name.startswith("golden"))


def test_every_problem_has_golden_files_and_each_is_an_instance_file() -> None:
    golden = _golden_files()
    assert {p.parent.name for p in golden} == set(PROBLEMS)
    assert golden <= set(_instance_files())


@pytest.mark.parametrize("path", _instance_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_instance_file_round_trips_with_every_field_written(path: Path) -> None:
    doc = json.loads(path.read_text())
    inst = schedopt.load(path)
    assert json.loads(to_json(inst)) == doc
