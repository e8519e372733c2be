"""The benchmark scripts that became thin callers of ``schedopt bench`` / ``schedopt tune``:
``--help`` parses, and the command each runs parses with schedopt's own parser and names only
suites, recipes, methods, traces and episode fields that exist (so every figure of
benchmarks/RESULTS.md the script reproduces is the command it prints). Nothing is solved."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from schedopt.bench.suites import all_suites
from schedopt.cli import build_parser
from schedopt.cli.bench import _suites
from schedopt.core.registry import get_problem

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _script(name: str) -> ModuleType:
    if str(BENCHMARKS) not in sys.path:  # the scripts import benchmarks/common.py
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"bench_script_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_bench(names: list[str], args: list[str]) -> None:
    parsed = build_parser().parse_args(["bench", *names, *args])
    suites = _suites(parsed.suites, parsed.recipes)  # unknown suites or recipes: CliError
    for suite in suites:
        known = get_problem(suite.problem).methods
        for method in (parsed.methods or "").split(",") if parsed.methods else suite.methods:
            assert method == "auto" or method in known, (suite.name, method)


def _check_tune(args: list[str]) -> None:
    parsed = build_parser().parse_args(["tune", *args])
    spec = get_problem(parsed.problem)
    for method in parsed.method or ():
        assert method in spec.methods, method
    for suite in (parsed.suite, parsed.held_out_suite):
        if suite is not None:
            assert all_suites()[suite].problem == spec.name
    if parsed.replay is not None:
        assert spec.policy is not None and parsed.replay in spec.policy.traces
        from schedopt.problems.admission.policy import Episode

        fields = {f.name for f in dataclasses.fields(Episode)}
        for pair in parsed.episode_set:
            assert pair.partition("=")[0] in fields, pair


def _bench_calls(monkeypatch, module: ModuleType, argv: list[str]) -> list[tuple]:
    calls: list[tuple] = []

    def fake(suites, args):
        calls.append(([suites] if isinstance(suites, str) else list(suites), list(args)))
        return 0

    monkeypatch.setattr(module, "bench", fake)
    for measured_here in ("replay", "scenario_rows", "part_ettr"):  # the parts not a suite
        if hasattr(module, measured_here):
            monkeypatch.setattr(module, measured_here, lambda *a, **k: [])
    assert module.main(argv) == 0
    return calls


@pytest.mark.parametrize(
    ("script", "argv", "suites"),
    [
        ("admission", [], [["admission-scaling"]]),
        ("admission", ["--contended", "--time-limits", "5"], [["admission-contested"]]),
        ("fairshare", ["--quick"], [["fairshare-scaling"]]),
        ("timeshare_ftf_steps", [], [["timeshare-ftf"]]),
        ("timeshare_rounds", ["--part", "cold"], [["timeshare-cold"]]),
        ("timeshare_rounds", ["--part", "pairs", "--pair-sizes", "256"], [["timeshare-pairs"]]),
        ("cosched", ["--decomp"], [["cosched-paper", "cosched-paper-60s"]]),
        (
            "cosched",
            ["--methods", "heuristic:packing,auto"],
            [["cosched-scaling", "cosched-scaling-60s"], ["cosched-chance"]],
        ),
        ("cosched", ["--quick"], [["cosched-scaling"], ["cosched-chance"]]),
        ("moe_placement", ["--part", "methods", "--quick"], [["moe_placement-scaling"]]),
        ("reconfig", ["--part", "scale", "--quick"], [["reconfig-scaling"]]),
        ("reconfig", ["--part", "scale"], [["reconfig-scaling"], ["reconfig-scaling-60s"]]),
    ],
)
def test_bench_callers_run_a_valid_schedopt_bench_command(monkeypatch, script, argv, suites):
    calls = _bench_calls(monkeypatch, _script(script), argv)
    assert [names for names, _ in calls] == suites
    for names, args in calls:
        _check_bench(names, args)


@pytest.mark.parametrize(
    ("script", "argv"),
    [
        ("tune_admission", []),
        ("tune_admission", ["--save", "--n-calls", "12", "--executor", "process"]),
        ("policy_tuning", []),
        ("policy_tuning", ["--windows", "3", "--hosts", "1", "--methods", "heuristic:slack"]),
    ],
)
def test_tune_callers_run_a_valid_schedopt_tune_command(script, argv):
    args = _script(script).command(argv)
    _check_tune(args)
    if script == "tune_admission" and "--save" in argv:
        saved = args[args.index("--save") + 1]
        assert saved.endswith("schedopt/tuning/params/admission.json")
        assert args.count("--n-calls") == 1
    if script == "policy_tuning":
        assert "--sliding" in args and "--replay" in args


@pytest.mark.parametrize(
    ("script", "usage"),
    [
        ("admission", "usage: schedopt bench"),
        ("fairshare", "usage: schedopt bench"),
        ("timeshare_ftf_steps", "usage: schedopt bench"),
        ("tune_admission", "usage: schedopt tune"),
        ("policy_tuning", "usage:"),
        ("cosched", "usage:"),
        ("timeshare_rounds", "usage:"),
        ("moe_placement", "usage:"),
        ("reconfig", "usage:"),
    ],
)
def test_every_caller_parses_help(capsys, script, usage):
    module = _script(script)
    try:
        code = module.main(["--help"])
    except SystemExit as exit_:  # the scripts with their own arguments: argparse's exit
        code = exit_.code
    assert code == 0
    assert usage in capsys.readouterr().out
