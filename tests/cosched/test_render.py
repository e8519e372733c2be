"""The CLI table and the SVG picture of a plan."""

from __future__ import annotations

import io
from pathlib import Path
from xml.etree import ElementTree

from rich.console import Console

import schedopt

INSTANCES = Path(__file__).resolve().parents[2] / "instances" / "cosched"


def test_table_and_picture() -> None:
    inst = schedopt.load(INSTANCES / "affinity-3j.json")
    r = schedopt.solve(inst, "cpsat", time_limit_s=20)
    spec = schedopt.get_problem("cosched")
    out = io.StringIO()
    spec.render(Console(file=out, width=160), inst, r)
    text = out.getvalue()
    for job in inst.jobs:
        assert job.id in text
    svg = spec.plot(inst, r.solution)
    ElementTree.fromstring(svg)  # well-formed
    # every phase is drawn (a titled rectangle, two when it wraps the cycle's end); the
    # background and the pool lanes alone made "more rects than jobs" true already
    assert svg.count("<title>") >= sum(len(j.phases) for j in inst.jobs)
    for g in r.solution.groups:
        assert g.id in svg
