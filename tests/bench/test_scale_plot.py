"""The scale plot: every row records the instance's size, and ``schedopt bench --plot scale``
draws wall time and gap against GPUs × jobs on log axes, one SVG per problem."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from schedopt.bench import runner
from schedopt.bench.scale import GAP_FLOOR, instance_size, scale_series, scale_svg
from schedopt.cli import main
from schedopt.core.registry import get_problem, problem_names

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("problem", problem_names())
def test_instance_size_counts_gpus_and_jobs(problem):
    inst = get_problem(problem).generate("tiny", 0)
    size = instance_size(inst)
    assert size["gpus"] >= 1 and size["jobs"] >= 1
    if hasattr(inst, "cluster"):
        assert size["gpus"] == inst.cluster.num_gpus
    if hasattr(inst, "jobs"):
        assert size["jobs"] == len(inst.jobs)


def _row(problem, recipe, method, gpus, jobs, wall, gap, when="1"):
    return {
        "suite": f"{problem}-x",
        "recipe": recipe,
        "problem": problem,
        "method": method,
        "time_limit_s": 10.0,
        "seed": 0,
        "status": "feasible",
        "size": {"gpus": gpus, "jobs": jobs},
        "wall_s": wall,
        "gap": gap,
        "when": when,
    }


ROWS = [
    _row("admission", "a", "auto", 64, 50, 0.5, 0.0),
    _row("admission", "b", "auto", 256, 250, 3.0, 0.02),
    _row("admission", "c", "auto", 1024, 1000, 9.5, 0.3),
    _row("admission", "c", "cpsat", 1024, 1000, 9.9, None),  # no bound: not in the gap panel
    _row("fairshare", "f", "decomp", 4096, 5000, 2.0, 0.0),
    {**_row("admission", "a", "auto", 64, 50, 0.0, 0.0), "status": "skipped"},
]


def test_series_take_sizes_and_leave_out_what_has_no_value():
    series = scale_series(ROWS)
    assert set(series) == {"admission", "fairshare"}
    wall, gap = series["admission"]
    assert wall["auto"] == [(3200.0, 0.5), (64000.0, 3.0), (1024000.0, 9.5)]
    assert wall["cpsat"] == [(1024000.0, 9.9)]
    assert gap["auto"] == [(3200.0, GAP_FLOOR), (64000.0, 0.02), (1024000.0, 0.3)]
    assert "cpsat" not in gap
    # the latest row of a recipe and method wins
    later = _row("admission", "a", "auto", 64, 50, 0.25, 0.0)
    assert scale_series([*ROWS, later])["admission"][0]["auto"][0] == (3200.0, 0.25)


def _polylines(panel: ET.Element) -> list[list[tuple[float, float]]]:
    return [
        [tuple(map(float, p.split(","))) for p in line.get("points", "").split()]
        for line in panel.iter(f"{SVG}polyline")
    ]


def test_scale_svg_is_valid_with_log_axes():
    wall, gap = scale_series(ROWS)["admission"]
    root = ET.fromstring(scale_svg("admission", wall, gap, "t"))
    panels = root.findall(f"{SVG}svg")
    assert len(panels) == 2  # wall time, gap
    for panel in panels:
        labels = [t.text or "" for t in panel.iter(f"{SVG}text")]
        numbers = [float(x) for x in labels if re.fullmatch(r"[0-9.e+-]+", x)]
        # every tick on both axes is a power of ten: log axes
        assert numbers and all(math.log10(x) == round(math.log10(x)) for x in numbers)
    # on a log x axis the three sizes (3,200; 64,000; 1,024,000: a factor 20 then 16) are
    # about evenly spaced, which a linear axis would not do
    auto = _polylines(panels[0])[0]  # the series are drawn by method name: auto first
    xs = [x for x, _ in auto]
    assert math.isclose(
        (xs[1] - xs[0]) / (xs[2] - xs[1]), math.log10(20) / math.log10(16), rel_tol=0.02
    )
    # and so are the wall times 0.5, 3.0, 9.5 on the log y axis (higher value: smaller y)
    ys = [y for _, y in auto]
    assert ys[0] > ys[1] > ys[2]
    assert math.isclose(
        (ys[0] - ys[1]) / (ys[1] - ys[2]), math.log10(6) / math.log10(9.5 / 3), rel_tol=0.02
    )


def test_plot_scale_from_a_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = ["--out", "r/rows.jsonl"]
    common = ["bench", "admission-small", "--methods", "heuristic:edf", "--time-limits", "5"]
    # nothing to draw yet: an error, not an empty plot
    assert main([*common, *out, "--plot", "scale"]) == 1
    assert main([*common, *out, "--recipes", "tiny-s0,small-s0", "--no-report"]) == 0
    rows = runner.read_rows(tmp_path / "r" / "rows.jsonl")
    assert {r["recipe"] for r in rows} == {"tiny-s0", "small-s0"}
    assert all(r["size"]["gpus"] >= 1 and r["size"]["jobs"] >= 1 for r in rows)
    assert main([*common, *out, "--plot", "scale"]) == 0
    svg = tmp_path / "r" / "rows-scale-admission.svg"
    ET.fromstring(svg.read_text())
    assert len(runner.read_rows(tmp_path / "r" / "rows.jsonl")) == 2  # the plot solved nothing
    assert main([*common, *out, "--recipes", "no-such-recipe"]) == 2
