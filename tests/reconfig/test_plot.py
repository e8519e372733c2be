"""The picture of a plan on the topology and the CLI table."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from rich.console import Console

import schedopt
from schedopt.problems.reconfig import plot, render
from schedopt.problems.reconfig.generate import generate


def test_svg_draws_every_gpu_and_marks_failures() -> None:
    inst = generate("tiny", 1)
    result = schedopt.solve(inst, "milp:highs", time_limit_s=10)
    svg = plot.to_svg(inst, result.solution)
    root = ET.fromstring(svg)
    titles = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert len(titles) == len(inst.cluster.gpus())
    assert sum("failed" in t for t in titles) == len(inst.failed_gpus)
    used = sum(len(s.gpus) for p in result.solution.pipelines for s in p.stages)
    assert sum("pipeline" in t for t in titles) == used


def test_render_prints_the_pipelines() -> None:
    inst = generate("tiny", 0)
    result = schedopt.solve(inst, "heuristic:keep_shrink", time_limit_s=5)
    out = io.StringIO()
    render.render(Console(file=out, width=120), inst, result)
    text = out.getvalue()
    assert "throughput retained" in text and "yes" in text
