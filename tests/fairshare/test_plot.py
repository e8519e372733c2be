"""The fair-share picture: a well-formed SVG with a segment per running job on its GPU type's
bar, a bar per counted unit and the minimum (level 1) named."""

from __future__ import annotations

import xml.dom.minidom
from pathlib import Path

import pytest

import schedopt
from schedopt.problems.fairshare.plot import to_svg

INSTANCES = Path(__file__).resolve().parents[2] / "instances" / "fairshare"


@pytest.mark.parametrize("name", ["small-s0.json", "perjob-32gpu-20j-s4.json"])
def test_the_picture_shows_every_running_job_and_every_unit(name: str) -> None:
    inst = schedopt.load(INSTANCES / name)
    result = schedopt.solve(inst, "heuristic:astraea", time_limit_s=10)
    svg = to_svg(inst, result.solution)
    doc = xml.dom.minidom.parseString(svg)
    titles = [t.firstChild.data for t in doc.getElementsByTagName("title") if t.firstChild]
    running = [a for a in result.solution.allocations if a.hosts]
    drawn = [t for t in titles if " GPUs on " in t]
    assert sorted(t.split(" ")[0] for t in drawn) == sorted(a.job_id for a in running)
    shares = [k for k in result.metrics if k.startswith("share[")]
    assert len([t for t in titles if t.split(":")[0] in {k[6:-1] for k in shares}]) == len(shares)
    assert f"{result.objectives[0]:.4g}" in svg
    assert "the minimum" in titles
