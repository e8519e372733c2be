"""An exported model gives schedopt's optimum in another solver (issue 7, item 10).

Each shipped instance is exported, read back by HiGHS from the file alone, solved, and its
optimum, divided by the scale the file's header documents, compared with the first objective
level of ``schedopt.solve(..., "milp:highs")``. Before OBJSENSE was written, HiGHS minimised
the maximisations (admission 10000 against schedopt's 40, fairshare 0.0 against 0.50225).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import highspy
import pytest

import schedopt
from schedopt.core.errors import InvalidInstanceError
from schedopt.core.registry import get_problem
from schedopt.core.status import Status
from tests.timing import PROOF_LIMIT_S

INSTANCES = sorted(
    p
    for p in Path(__file__).parents[2].joinpath("instances").glob("*/*.json")
    if not p.name.startswith("golden")  # the golden*.json records (tests/conformance/test_golden)
)
#: Solved to optimality in 11 s at load 6, 13-114 s at load 14 (2026-12-03): the slow stage.
SLOW = {"reconfig/example", "admission/4x8-20j-s0", "admission/4x8-20j-s2"}


def _case(p: Path):
    name = f"{p.parent.name}/{p.stem}"
    return pytest.param(p, id=name, marks=[pytest.mark.slow] if name in SLOW else [])


def _header_scale(text: str) -> float:
    m = re.search(r"^[*\\] objective scale: ([0-9.eE+]+)", text, re.MULTILINE)
    assert m, "the header must state the objective's scale"
    return float(m[1])


def _solve_file(path: Path) -> tuple[highspy.HighsModelStatus, float]:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    return h.getModelStatus(), h.getInfo().objective_function_value


@functools.cache
def _schedopt_result(instance: Path) -> schedopt.Result:
    return schedopt.solve(schedopt.load(instance), "milp:highs", time_limit_s=PROOF_LIMIT_S)


@pytest.mark.parametrize("fmt", ["mps", "lp"])
@pytest.mark.parametrize("instance", [_case(p) for p in INSTANCES])
def test_exported_model_has_schedopts_optimum_in_highs(instance, fmt, tmp_path) -> None:
    inst = schedopt.load(instance)
    spec = get_problem(inst.problem)
    out = tmp_path / f"model.{fmt}"
    if getattr(inst, "policy", None) == "finish_time_fairness":  # a sequence of LPs, no file
        with pytest.raises(InvalidInstanceError, match="sequence of LPs"):
            spec.export_model(inst, str(out), fmt)
        assert not out.exists()
        return
    spec.export_model(inst, str(out), fmt)
    text = out.read_text()
    assert "objective level:" in text and "objective sense:" in text
    if fmt == "mps":
        assert re.search(r"^OBJSENSE\s*\n\s*(MAX|MIN)", text, re.MULTILINE)
    status, value = _solve_file(out)
    result = _schedopt_result(instance)
    if result.status is Status.INFEASIBLE:
        assert status == highspy.HighsModelStatus.kInfeasible
        return
    assert result.status is Status.OPTIMAL, "shipped instances are solved to optimality"
    assert status == highspy.HighsModelStatus.kOptimal
    expected = result.objectives[0]
    assert value / _header_scale(text) == pytest.approx(expected, rel=1e-6, abs=1e-6)


def test_export_writes_only_the_file_asked_for(tmp_path, monkeypatch) -> None:
    from schedopt.cli import main

    work, tmp = tmp_path / "cwd", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr("tempfile.tempdir", str(tmp))
    for fmt in ("mps", "lp"):
        out = work / f"m.{fmt}"
        assert main(["export", str(INSTANCES[0]), "--format", fmt, "--out", str(out)]) == 0
    assert sorted(p.name for p in work.iterdir()) == ["m.lp", "m.mps"]
    assert list(tmp.iterdir()) == []
