"""The time-share picture: a well-formed SVG with a segment per share, a bar per job and the
minimum drawn where level 1 says."""

from __future__ import annotations

import xml.dom.minidom

import pytest

import schedopt
from schedopt.problems.timeshare.plot import to_svg


@pytest.mark.parametrize(
    "name", ["max_min_fairness_perf-pairs-6j-s1.json", "min_makespan-8j-s3.json"]
)
def test_the_picture_shows_every_share_and_every_job(name: str) -> None:
    from pathlib import Path

    inst = schedopt.load(Path(__file__).resolve().parents[2] / "instances" / "timeshare" / name)
    result = schedopt.solve(inst, "milp:highs")
    svg = to_svg(inst, result.solution)
    doc = xml.dom.minidom.parseString(svg)
    titles = [t.firstChild.data for t in doc.getElementsByTagName("title") if t.firstChild]
    shares = [t for t in titles if "of the round" in t]
    assert len(shares) == len(result.solution.shares)
    jobs = [t for t in titles if t.split(":")[0] in {j.id for j in inst.jobs} and "round" not in t]
    assert len(jobs) == len(inst.jobs)
    assert f"{result.objectives[0]:.4g}" in svg  # the minimum is named
    assert "the minimum" in titles
