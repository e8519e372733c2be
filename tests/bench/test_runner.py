"""The benchmark runner: rows equal across executors, resume skips finished rows and repeats
lost ones, the Dolan–Moré profile on a hand-checked example, the best-known table, the
recorded checksums of the small suites, and ``schedopt bench`` end to end."""

from __future__ import annotations

import json
import math
import subprocess
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from schedopt.bench import best_known, report, runner
from schedopt.bench.checksums import compute
from schedopt.bench.suite import Recipe, Suite
from schedopt.bench.suites import all_suites
from schedopt.cli import main
from schedopt.core.registry import get_problem
from schedopt.core.stopping import Deadline
from schedopt.executor import Executor, InlineExecutor, Task, TaskResult, make_executor
from tests.bench.tiny import TINY
from tests.executor.contract import assert_keeps_contract

INF = math.inf


def _essence(rows: Iterable[dict]) -> dict[str, tuple]:
    return {
        runner.key_of(r): (r["status"], r["checksum"], tuple(r["objectives"] or ()), r["bound"])
        for r in rows
    }


@pytest.mark.slow  # two workers start and solve: 7-10 s
def test_rows_equal_inline_and_process(tmp_path):
    jobs = runner.plan([TINY])
    assert len(jobs) == 4
    with InlineExecutor() as ex:
        inline = runner.run(jobs, ex, tmp_path / "inline.jsonl")
    with make_executor("process", jobs=2) as ex:
        pooled = runner.run(jobs, ex, tmp_path / "process.jsonl")
    assert _essence(inline) == _essence(pooled)
    assert {r["status"] for r in inline} == {"optimal", "feasible"}
    row = pooled[0]
    for field in ("machine", "versions", "executor", "wall_s", "build_s", "solve_s", "threads"):
        assert field in row
    assert row["executor"]["executor"] == "process"
    assert row["machine"]["cpus"] >= row["machine"]["usable_cores"] >= 1
    assert set(row["versions"]) >= {"schedopt", "ortools", "highspy", "pulp"}
    assert runner.read_rows(tmp_path / "process.jsonl") == pooled


class _Flaky(Executor):
    """Runs inline, but the worker of ``lose`` "dies": a lost result."""

    kind = "flaky"

    def __init__(self, lose: set[str]):
        super().__init__()
        self.lose, self.ran = lose, []

    def run(
        self, tasks: Iterable[Task], *, deadline: Deadline | None = None, ahead: int = 0
    ) -> Iterator[TaskResult]:
        for task in tasks:  # one at a time, as InlineExecutor: nothing to pull ahead
            self.ran.append(task.key)
            if task.key in self.lose:
                yield TaskResult(task.key, error="WorkerLost: killed", lost=True)
            else:
                yield from InlineExecutor().run([task])


def test_the_flaky_executor_keeps_the_executor_contract():
    assert_keeps_contract(_Flaky(set()))


def test_resume_skips_finished_rows_and_repeats_lost_ones(tmp_path):
    out = tmp_path / "rows.jsonl"
    jobs = runner.plan([TINY])
    lost = jobs[1].key
    first = _Flaky({lost})
    rows = runner.run(jobs, first, out)
    assert len(rows) == 3 and lost not in {runner.key_of(r) for r in rows}
    with out.open("a") as f:
        f.write('{"suite": "test-tiny", "reci')  # a torn line from a killed run
    second = _Flaky(set())
    again = runner.run(jobs, second, out)
    assert second.ran == [lost]  # only the lost row runs again
    assert [runner.key_of(r) for r in again] == [lost]
    assert sorted(runner.key_of(r) for r in runner.read_rows(out)) == sorted(j.key for j in jobs)
    third = _Flaky(set())
    assert runner.run(jobs, third, out) == [] and third.ran == []


def test_errors_and_deadline_are_rows(tmp_path):
    bad = Suite(
        "test-bad", "admission", (Recipe("oops", "admission", "generate", {"size": "huge"}),)
    )
    with InlineExecutor() as ex:
        (row,) = runner.run(runner.plan([bad]), ex, tmp_path / "bad.jsonl")
    assert row["status"] == runner.ERROR and "ValueError" in row["reason"]
    out = tmp_path / "late.jsonl"
    with InlineExecutor() as ex:  # stopped by the run's deadline: nothing written, all to rerun
        assert runner.run(runner.plan([TINY]), ex, out, deadline=Deadline.after(0)) == []
    assert runner.read_rows(out) == []


def test_a_model_refused_for_its_size_is_a_refused_row(tmp_path, monkeypatch):
    """The monolithic model refused before it is built (ModelTooLargeError) is a ``refused``
    row saying why, not an ``error`` row; the heuristic beside it still solves."""
    monkeypatch.setattr("schedopt.problems.admission.data.MAX_MODEL_VARIABLES", 1)
    with InlineExecutor() as ex:
        rows = runner.run(runner.plan([TINY]), ex, tmp_path / "refused.jsonl")
    by_method = {(r["recipe"], r["method"]): r for r in rows}
    assert len(by_method) == 4
    for (_, method), row in by_method.items():
        if method == "cpsat":
            assert row["status"] == runner.REFUSED, row
            assert "variables" in row["reason"] and row["size"]["gpus"] > 0
        else:
            assert row["status"] == "feasible" and row["objectives"]


def test_drift_is_reported_not_solved(tmp_path):
    drifted = Suite(
        "test-drift",
        "admission",
        (
            Recipe(
                "tiny-s0", "admission", "generate", {"size": "tiny", "seed": 0}, checksum="0" * 64
            ),
        ),
    )
    with InlineExecutor() as ex:
        (row,) = runner.run(runner.plan([drifted]), ex, tmp_path / "d.jsonl")
    assert row["status"] == runner.DRIFT and "objectives" not in row


def test_trace_recipe_is_skipped_without_data(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDOPT_DATA", str(tmp_path / "nowhere"))
    suite = all_suites()["moe_placement-medium"]
    trace = next(r for r in suite.recipes if r.data)
    only = Suite("test-trace", "moe_placement", (trace,))
    with InlineExecutor() as ex:
        (row,) = runner.run(runner.plan([only]), ex, tmp_path / "t.jsonl")
    assert row["status"] == runner.SKIPPED and "data folder" in row["reason"]


def test_performance_profile_by_hand():
    # three instances, two methods: A is best on p1 and p2, B on p3; B fails p2; A is 2x B on p3
    costs = {
        "p1": {"A": 1.0, "B": 4.0},
        "p2": {"A": 3.0, "B": INF},
        "p3": {"A": 2.0, "B": 1.0},
    }
    profile = report.performance_profile(costs)
    # A: ratios 1, 1, 2 -> rho(1) = 2/3, rho(2) = 1
    assert profile["A"] == [(1.0, 2 / 3), (2.0, 1.0)]
    # B: ratios 4, inf, 1 -> rho(1) = 1/3, rho(4) = 2/3, never 1
    assert profile["B"] == [(1.0, 1 / 3), (4.0, 2 / 3)]
    # an instance no method solves counts against both
    costs["p4"] = {"A": INF, "B": INF}
    assert report.performance_profile(costs)["A"][-1] == (2.0, 3 / 4)
    with pytest.raises(ValueError):
        report.performance_profile({"p": {"A": 0.0}})


def test_quality_costs_respect_the_sense():
    def row(method, value, sense):
        return {
            "suite": "s",
            "recipe": "r",
            "time_limit_s": 1,
            "seed": 0,
            "method": method,
            "status": "feasible",
            "objectives": [value],
            "senses": [sense],
        }

    maxed = report.quality_costs([row("A", 10.0, "max"), row("B", 8.0, "max")])
    assert maxed[("s", "r", 1.0, 0)] == {"A": 1.0, "B": 1.2}
    mined = report.quality_costs([row("A", 10.0, "min"), row("B", 8.0, "min")])
    assert mined[("s", "r", 1.0, 0)] == {"A": 1.25, "B": 1.0}


def test_best_known_keeps_the_best_value_and_tightest_bound():
    def row(method, value, bound, checksum="c1", commit="abc"):
        return {
            "suite": "s",
            "recipe": "r",
            "problem": "admission",
            "method": method,
            "status": "feasible",
            "objectives": [value],
            "senses": ["max"],
            "bound": bound,
            "checksum": checksum,
            "time_limit_s": 10,
            "wall_s": 1.0,
            "when": "2026-12-03T18",
            "versions": {"commit": commit},
        }

    table, changed = best_known.update({}, [row("A", 5.0, None), row("B", 7.0, 9.0)])
    assert changed == ["s/r"]
    entry = table["s/r"]
    assert (entry["value"], entry["method"], entry["bound"], entry["status"]) == (
        7.0,
        "B",
        9.0,
        "open",
    )
    table, changed = best_known.update(table, [row("C", 6.0, 7.0, commit="def")])
    entry = table["s/r"]
    assert (entry["value"], entry["method"], entry["commit"]) == (7.0, "B", "abc")
    assert (entry["bound"], entry["bound_method"], entry["status"]) == (7.0, "C", "closed")
    table, _ = best_known.update(table, [row("D", 1.0, None, checksum="c2")])
    assert table["s/r"]["value"] == 1.0  # another instance: replaced, not merged


def test_best_known_shares_value_and_bound_between_suites_of_one_instance():
    def row(suite, value, bound, checksum="c1"):
        return {
            "suite": suite,
            "recipe": "r",
            "problem": "cosched",
            "method": "auto",
            "status": "feasible",
            "objectives": [value],
            "senses": ["min"],
            "bound": bound,
            "checksum": checksum,
            "time_limit_s": 60,
            "wall_s": 58.0,
            "when": "2026-12-06T17",
            "versions": {"commit": "abc"},
        }

    table, _ = best_known.update({}, [row("a", 3759.0, 3417.0), row("other", 1.0, 0.5, "c2")])
    table, changed = best_known.update(table, [row("b", 3738.0, 3300.0)])
    # a's bound is the better one (a lower bound: the larger), b's value (minimised: smaller)
    for key in ("a/r", "b/r"):
        assert (table[key]["value"], table[key]["bound"]) == (3738.0, 3417.0)
    assert table["a/r"]["value_from"] == "b/r" and "bound_from" not in table["a/r"]
    assert table["b/r"]["bound_from"] == "a/r" and "value_from" not in table["b/r"]
    assert sorted(changed) == ["a/r", "b/r"]
    assert table["other/r"]["value"] == 1.0  # another instance: untouched
    # a row of a's own that beats the shared value takes it back, and the origin goes
    table, _ = best_known.update(table, [row("a", 3700.0, None)])
    assert table["a/r"]["value"] == table["b/r"]["value"] == 3700.0
    assert "value_from" not in table["a/r"] and table["b/r"]["value_from"] == "a/r"


def test_suites_name_known_methods_and_unique_recipes():
    suites = all_suites()
    for problem in ("admission", "fairshare", "timeshare", "moe_placement", "cosched", "reconfig"):
        for size in ("small", "medium", "paper"):
            assert f"{problem}-{size}" in suites
    for suite in suites.values():
        methods = set(get_problem(suite.problem).methods) | {"auto"}
        assert set(suite.methods) <= methods, suite.name


@pytest.mark.parametrize("name", [n for n in all_suites() if n.endswith("-small")])
def test_small_suites_build_their_recorded_instances(name):
    suite = all_suites()[name]
    found = dict(compute(suite))
    recorded = {r.name: r.checksum for r in suite.recipes}
    assert all(recorded.values()), f"{name}: checksums not recorded (schedopt bench --checksums)"
    assert found == recorded


def test_bench_command_end_to_end(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    args = [
        "bench",
        "admission-small",
        "--methods",
        "heuristic:edf",
        "--time-limits",
        "5",
        "--out",
        "r/rows.jsonl",
        "--update-best-known",
        "best.json",
    ]
    assert main(args) == 0
    rows = runner.read_rows(tmp_path / "r" / "rows.jsonl")
    assert len(rows) == len(all_suites()["admission-small"].recipes)
    for name in ("rows.md", "rows-profile-time.svg", "rows-profile-quality.svg", "rows-gap.svg"):
        assert (tmp_path / "r" / name).stat().st_size > 0
    assert (tmp_path / "r" / "rows-gap.svg").read_text().startswith("<svg")
    table = json.loads((tmp_path / "best.json").read_text())
    assert len(table) == len(rows)
    assert main(args) == 0  # resumed: nothing to run, the same rows
    assert runner.read_rows(tmp_path / "r" / "rows.jsonl") == rows
    assert main(["bench", "no-such-suite"]) == 2
    assert main(["bench", "admission-small", "--methods", "heuristic:nope"]) == 2
    capsys.readouterr()
    assert main(["bench", "admission-small", "--checksums"]) == 0
    assert capsys.readouterr().out.count(" ok") == len(all_suites()["admission-small"].recipes)


def test_a_row_keeps_bounds_step_seconds_and_named_counts_of_the_stats():
    from schedopt.bench.runner import _stats

    kept = _stats(
        {
            "L2_bound": 3.5,
            "join_s": 0.25,
            "proven_over": "template plan space",
            "decomposition": "joined from 2 parts; ...",
            "parts_failed": "part1: timeout",
            "label_s": "text",
            "bound": "B0k",
            "polished": 1.0,
            "packing_aside_plan": 1.0,  # cosched's packing plan made aside came back (#17)
        }
    )
    assert kept == {
        "L2_bound": 3.5,
        "join_s": 0.25,
        "proven_over": "template plan space",
        "bound": "B0k",
        "polished": 1.0,
        "packing_aside_plan": 1.0,
    }


def test_method_parameters_reach_the_solve_and_make_their_own_rows(tmp_path):
    """``schedopt bench --param``: the parameters go to every row's solve, are kept in the row
    and its key (rows with other parameters are other rows; rows without keep their old key),
    and the report names them beside the method."""
    plain = runner.plan([TINY], methods=["decomp"])
    assert plain[0].key == "test-tiny/tiny-s0/decomp/30/0"  # the key before parameters existed
    good = runner.plan([TINY], methods=["decomp"], params={"executor": "inline", "parts": 2})
    bad = runner.plan([TINY], methods=["decomp"], params={"executor": "nope"})
    assert good[0].key == 'test-tiny/tiny-s0/decomp/30/0/executor="inline",parts=2'
    assert len({j.key for j in plain + good + bad}) == 3 * len(plain)
    out = tmp_path / "rows.jsonl"
    with InlineExecutor() as ex:
        rows = runner.run(plain + good + bad, ex, out)
    by_key = {runner.key_of(r): r for r in rows}
    assert all(by_key[j.key]["status"] in ("optimal", "feasible") for j in plain + good)
    assert all(by_key[j.key]["params"] == {"executor": "inline", "parts": 2} for j in good)
    for j in bad:  # the solve saw the parameter: it refused it, naming it
        row = by_key[j.key]
        assert row["status"] == runner.ERROR and "params.executor" in row["reason"]
    assert "params" not in by_key[plain[0].key]
    assert runner.method_label(by_key[good[0].key]) == 'decomp [executor="inline",parts=2]'
    assert 'decomp [executor="inline",parts=2]' in report.markdown(rows)


def test_commit_says_when_the_package_differs_from_it(tmp_path: Path) -> None:
    """A row run from a changed checkout is not recorded as the commit alone."""
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "model.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "model.py"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    head = runner.commit(tmp_path)
    assert head != "unknown" and not head.endswith("-dirty")
    (tmp_path / "model.py").write_text("x = 2\n")
    assert runner.commit(tmp_path) == f"{head}-dirty"
    assert runner.commit(tmp_path / "absent") == "unknown"


def test_a_row_records_the_cpu_seconds_of_its_solve(monkeypatch):
    # cpu_s is the process's CPU time around the solve: a wait (a starved process, here a
    # sleep) does not count, CPU work does; wall_s counts both
    real = runner.solve
    job = runner.plan([TINY])[0]

    def sleeping(*args, **kwargs):
        time.sleep(0.4)
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "solve", sleeping)
    row = runner.run_row(job)
    assert row["status"] == "feasible" and 0.0 < row["cpu_s"] < 0.3
    spun = 0.3

    def spinning(*args, **kwargs):
        began = time.process_time()
        while time.process_time() - began < spun:
            pass
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "solve", spinning)
    row = runner.run_row(job)
    assert row["cpu_s"] >= spun and row["cpu_s"] < spun + 5.0
    assert row["wall_s"] <= job.time_limit_s and isinstance(row["cpu_s"], float)
