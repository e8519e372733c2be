"""The expert-placement picture: a cell per layer and GPU, each with the validator's load, and
the most loaded GPU of every layer drawn darkest."""

from __future__ import annotations

import re
import xml.dom.minidom
from pathlib import Path

import schedopt
from schedopt.problems.moe_placement.plot import to_svg
from schedopt.problems.moe_placement.validate import gpu_loads

INSTANCES = Path(__file__).resolve().parents[2] / "instances" / "moe_placement"


def test_every_layer_and_gpu_is_a_cell_with_its_load() -> None:
    inst = schedopt.load(INSTANCES / "tiny-s0.json")
    result = schedopt.solve(inst, "heuristic:eplb", time_limit_s=10)
    svg = to_svg(inst, result.solution)
    doc = xml.dom.minidom.parseString(svg)
    cells = [r for r in doc.getElementsByTagName("rect") if r.getElementsByTagName("title")]
    gpus = inst.cluster.gpus()
    assert len(cells) == len(inst.layers) * len(gpus)
    loads = gpu_loads(inst, result.solution)
    for li, load in enumerate(loads):
        row = cells[li * len(gpus) : (li + 1) * len(gpus)]
        shown = [
            float(
                re.search(r": ([0-9.e+-]+) µs", c.getElementsByTagName("title")[0].firstChild.data)[
                    1
                ]
            )
            for c in row
        ]
        assert shown == [float(f"{load.get(g, 0.0):.4g}") for g in gpus]
        darkest = min(row, key=lambda c: int(c.getAttribute("fill")[1:3], 16))
        assert float(f"{max(load.values()):.4g}") == shown[row.index(darkest)]
