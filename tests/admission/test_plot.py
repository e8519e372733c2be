"""The SVG picture of a decision, and the CLI commands that write it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import schedopt
from schedopt.cli import EXIT_OK, EXIT_VALIDATION_FAILED, main
from schedopt.problems.admission.plot import to_svg

EXAMPLE = Path(__file__).resolve().parents[2] / "instances" / "admission" / "example.json"


def test_svg_is_well_formed_and_shows_every_running_job() -> None:
    inst = schedopt.load(EXAMPLE)
    sol = schedopt.solve(inst, "cpsat", time_limit_s=10).solution
    svg = to_svg(inst, sol)
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    for plan in sol.plans:
        if any(plan.gpus):
            assert plan.job_id in svg
    blocks = [e for e in root.iter() if e.tag.endswith("rect") and e.find("{*}title") is not None]
    assert len(blocks) == sum(1 for p in sol.plans for n in p.gpus if n)
    assert "rejected: resnet-nightly" in svg


def test_cli_plot_and_solve_plot(tmp_path) -> None:
    sol_path, svg_a, svg_b = tmp_path / "s.json", tmp_path / "a.svg", tmp_path / "b.svg"
    args = ["solve", str(EXAMPLE), "--method", "cpsat", "--out", str(sol_path)]
    assert main([*args, "--plot", str(svg_a)]) == EXIT_OK
    assert main(["plot", str(EXAMPLE), str(sol_path), "--out", str(svg_b)]) == EXIT_OK
    assert svg_a.read_text() == svg_b.read_text()


def test_cli_plot_refuses_an_invalid_solution(tmp_path) -> None:
    inst = schedopt.load(EXAMPLE)
    sol = schedopt.solve(inst, "heuristic:edf").solution
    bad = sol.model_copy(update={"plans": sol.plans[1:]})
    path = tmp_path / "bad.json"
    schedopt.dump(bad, path)
    assert main(["plot", str(EXAMPLE), str(path), "--out", str(tmp_path / "x.svg")]) == (
        EXIT_VALIDATION_FAILED
    )
    assert not (tmp_path / "x.svg").exists()
