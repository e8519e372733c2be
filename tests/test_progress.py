"""Progress of a running solve (SolveOptions.on_progress, #16 item 13): silent without a
callback; with one, the method, every level in order with its end, incumbents and bounds on the
right sides, time used and left, at a low rate; a raising callback never breaks a solve; the
CLI's --progress writes to stderr and leaves --json's stdout alone."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

import schedopt
from schedopt.core.progress import PROGRESS_INTERVAL_S, Progress
from schedopt.problems.admission import generate_custom

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def instance():
    return generate_custom(hosts=2, jobs=12, slots=6, seed=0)


@pytest.mark.slow  # up to 4 s a method at load 7
@pytest.mark.parametrize("method", ["cpsat", "milp:highs", "milp:cbc", "auto"])
def test_events_follow_the_levels(instance, method: str) -> None:
    events: list[Progress] = []
    result = schedopt.solve(instance, method, time_limit_s=4, on_progress=events.append)
    assert events and events[0].milestone and events[0].phase == "started"
    levels = [e for e in events if e.level is not None]
    starts = [e.level for e in levels if e.phase == "started"]
    assert starts == sorted(starts) and starts[0] == 1  # levels in order, from the first
    assert all(e.levels == len(result.terms) for e in levels)
    ends = [e for e in levels if e.milestone and e.phase != "started"]
    assert [e.level for e in ends] == starts  # every level started is reported ended
    first = ends[0]
    if result.stats.get("L1_status") == "optimal":
        assert first.phase == "proven optimal"
        assert first.incumbent == pytest.approx(result.objectives[0])  # admission: L1 as is
    for e in levels:  # a maximised L1: the bound is never below the incumbent
        if e.level == 1 and e.incumbent is not None and e.bound is not None:
            assert e.bound >= e.incumbent - 1e-6
    clock = [e.elapsed_s for e in events]
    assert clock == sorted(clock) and clock[-1] <= result.wall_s
    assert all(e.time_left_s is not None and e.time_left_s <= 4 for e in events)
    updates = [e.elapsed_s for e in events if not e.milestone]
    assert all(b - a >= PROGRESS_INTERVAL_S - 1e-3 for a, b in itertools.pairwise(updates))


def test_silent_without_a_callback(instance, capfd) -> None:
    schedopt.solve(instance, "cpsat", time_limit_s=2)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_a_raising_callback_does_not_break_the_solve(instance) -> None:
    calls = []

    def broken(event: Progress) -> None:
        calls.append(event)
        raise RuntimeError("display gone")

    with pytest.warns(UserWarning, match="progress is off"):
        result = schedopt.solve(instance, "milp:highs", time_limit_s=5, on_progress=broken)
    assert result.status.has_solution and len(calls) == 1


@pytest.mark.slow  # two CLI processes
def test_cli_progress_goes_to_stderr_and_json_stays_clean(tmp_path) -> None:
    file = ROOT / "instances" / "admission" / "example.json"
    base = [sys.executable, "-m", "schedopt", "solve", str(file), "--time-limit", "5", "--json"]
    env_cwd = {"cwd": ROOT, "capture_output": True, "text": True, "check": False}
    done = subprocess.run([*base, "--progress"], **env_cwd)  # type: ignore[call-overload]
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "optimal"
    assert "level 1/" in done.stderr and "s left" in done.stderr
    quiet = subprocess.run(base, **env_cwd)  # type: ignore[call-overload]
    assert "level 1/" not in quiet.stderr  # off a terminal, only when asked


def test_feasible_says_which_level_is_unproven() -> None:
    """A FEASIBLE answer with level 1 proven (gap 0.00%) says why it is not OPTIMAL."""
    inst = generate_custom(hosts=16, jobs=150, slots=12, seed=0)
    result = schedopt.solve(inst, "cpsat", time_limit_s=1.5)
    if result.status is schedopt.Status.FEASIBLE:
        assert result.explanation and result.explanation.startswith("not OPTIMAL: ")
        unproven = [k[:-7] for k, v in result.stats.items() if k.endswith("_status")]
        assert any(name in result.explanation for name in unproven)


def test_heuristic_time_is_reported() -> None:
    """Every method's time shows in build_s + solve_s (cosched's heuristics said 0 + 0)."""
    from schedopt.problems.cosched import generate

    result = schedopt.solve(generate("small", 0), "heuristic:packing", time_limit_s=5)
    assert result.build_s + result.solve_s > 0
    assert result.build_s + result.solve_s <= result.wall_s
