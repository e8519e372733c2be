"""Every command of ``schedopt`` works for every problem, on a shipped instance: generate,
schema, methods, info, solve (with --out, --plot and --json), validate, plot, export and tune.
No problem is missing a command (#16)."""

from __future__ import annotations

import json
import xml.dom.minidom
from pathlib import Path

import pytest

import schedopt
from schedopt.cli import EXIT_OK, EXIT_USAGE, main
from schedopt.core.registry import MethodKind, get_problem, problem_names

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = {
    "admission": "example.json",
    "cosched": "tiny-s0.json",
    "fairshare": "small-s0.json",
    "moe_placement": "tiny-s0.json",
    "reconfig": "tiny-s0.json",
    "timeshare": "max_min_fairness_perf-pairs-6j-s1.json",
}


def test_every_registered_problem_has_a_shipped_instance_here() -> None:
    assert set(SHIPPED) == set(problem_names())


@pytest.mark.slow  # 1-7 s a problem at load 7
@pytest.mark.parametrize("problem", sorted(SHIPPED))
def test_every_command(problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = get_problem(problem)
    file = str(ROOT / "instances" / problem / SHIPPED[problem])
    sol, svg, model = tmp_path / "sol.json", tmp_path / "plan.svg", tmp_path / "model.lp"

    assert main(["generate", problem, "--size", spec.sizes[0], "--seed", "1"]) == EXIT_OK
    assert type(schedopt.loads(capsys.readouterr().out)) is spec.instance_type

    assert main(["schema", problem]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["type"] == "object"

    assert main(["methods", problem]) == EXIT_OK
    assert "auto" in capsys.readouterr().out

    assert main(["info", file]) == EXIT_OK
    shown = capsys.readouterr().out
    assert "exact model: about" in shown
    for label, _ in spec.info(schedopt.load(file)) if spec.info else ():
        assert f"{label}:" in shown

    argv = ["solve", file, "--time-limit", "5", "--json", "--out", str(sol), "--plot", str(svg)]
    assert main(argv) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["status"] in ("optimal", "feasible")
    xml.dom.minidom.parse(str(svg))

    assert main(["validate", file, str(sol)]) == EXIT_OK
    svg.unlink()
    assert main(["plot", file, str(sol), "--out", str(svg)]) == EXIT_OK
    assert xml.dom.minidom.parse(str(svg)).documentElement.tagName == "svg"

    assert main(["export", file, "--format", "lp", "--out", str(model)]) == EXIT_OK
    assert model.stat().st_size > 0

    tunable = [n for n, m in spec.methods.items() if m.kind is MethodKind.HEURISTIC and m.params]
    assert tunable, f"{problem} has nothing to tune"
    argv = ["tune", problem, "--method", tunable[0], "--size", spec.sizes[0], "--instances", "1"]
    assert main([*argv, "--n-calls", "6"]) == EXIT_OK
    assert "training score" in capsys.readouterr().out


def test_generate_refuses_a_size_the_problem_lacks_and_help_lists_each_problems(capsys) -> None:
    missing = [(n, s) for n in problem_names() for s in ("large",) if s not in get_problem(n).sizes]
    assert missing  # cosched and reconfig have no large size
    for problem, size in missing:
        assert main(["generate", problem, "--size", size]) == EXIT_USAGE
        assert "choose from" in capsys.readouterr().err
    assert main(["generate", "--help"]) == EXIT_OK
    text = " ".join(capsys.readouterr().out.split())
    for name in problem_names():
        assert f"{name}: {', '.join(get_problem(name).sizes)}" in text


def test_every_problem_has_a_benchmark_suite(capsys) -> None:
    """``schedopt bench`` runs suites; every problem has at least one."""
    assert main(["bench", "--list"]) == EXIT_OK
    listed = {line.split()[0].rsplit("-", 1)[0] for line in capsys.readouterr().out.splitlines()}
    assert set(problem_names()) <= listed
