"""cosched's first imports of a solver under a deadline (#17): HiGHS's before column
generation's master, CP-SAT's before a case model of exact pricing, each refused before it
starts when it would not end in the time left (schedopt.backends.first_import), the method then
answering without that solver: colgen with the caller's plan or no solution, a case left
undecided with a bound still above every group. Each refusal runs in a fresh process (the
solver not yet imported), the gates' slowdown injected (``schedopt.core.gates.gate_slowdown``):
nothing depends on the machine's speed but the promise's own margin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from schedopt.problems.cosched import pricing
from schedopt.problems.cosched.pricing import case_bound, open_bound, with_programme
from tests.timing import promised_s

from .cases import best_group, fits, random_case

TINY = Path(__file__).resolve().parents[2] / "instances" / "cosched" / "tiny-s0.json"

#: colgen on ``argv[1]`` within 5 s, from the packing plan when ``argv[2]`` is "hint", the
#: gates' slowdown made 10,000 once the instance is loaded (HiGHS's import would take 200 s).
COLGEN = """\
import json, sys, time
import schedopt
from schedopt.core import gates
inst = schedopt.load(sys.argv[1])
hint = None
if sys.argv[2] == "hint":
    hint = schedopt.solve(inst, "heuristic:packing", time_limit_s=5, deterministic=True).solution
gates.gate_slowdown = lambda: 10000.0
started = time.perf_counter()
result = schedopt.solve(inst, "colgen", time_limit_s=5, hint=hint)
print(json.dumps({"status": result.status.value, "explanation": result.explanation,
                  "same": result.solution == hint, "bound": result.best_bound,
                  "wall": time.perf_counter() - started, "highspy": "highspy" in sys.modules}))
"""

#: A case model of exact pricing (tests/cosched/cases.py's random case of seed ``argv[1]``)
#: given 30 s, the gates' slowdown made 1,000 (CP-SAT's import would take 350 s).
CASE = """\
import json, sys
from schedopt.core import gates
from schedopt.core.stopping import Deadline
from schedopt.problems.cosched.pricing import case_bound
from tests.cosched.cases import random_case
case = random_case(int(sys.argv[1]), jobs=4, pools=2, slo_span=(20, 1), pi_least=0.1)
gates.gate_slowdown = lambda: 1000.0
got = case_bound(*case, 30.0, deadline=Deadline.after(30.0))
print(json.dumps({"upper": got.upper, "decided": got.decided, "found": got.found,
                  "value": got.value, "ortools": "ortools" in sys.modules}))
"""


def _case(seed: int):
    return random_case(seed, jobs=4, pools=2, slo_span=(20, 1), pi_least=0.1)


def _run(script: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("hint", [False, True], ids=["alone", "from-a-plan"])
def test_colgen_without_time_for_highs_answers_without_its_master(hint: bool) -> None:
    """HiGHS refused: never imported, the answer within the limit, the caller's valid plan
    returned as it is (FEASIBLE) or, without one, no solution; the aggregate bound either way,
    and the refusal said."""
    doc = _run(COLGEN, str(TINY), "hint" if hint else "none")
    assert doc["highspy"] is False
    assert doc["wall"] <= promised_s(5.0)
    assert "the HiGHS solver takes about 200.0 s to import" in doc["explanation"]
    assert doc["bound"] is not None
    if hint:
        assert (doc["status"], doc["same"]) == ("feasible", True)
    else:
        assert doc["status"] == "no_solution"


@pytest.mark.parametrize("seed", [1, 3])
def test_a_case_without_time_for_cpsat_is_left_undecided_above_every_group(seed: int) -> None:
    """CP-SAT refused: never imported, the case undecided, its bound above the brute-force
    maximum and its group (the best of one member) a group of the case."""
    doc = _run(CASE, str(seed))
    case = _case(seed)
    assert doc["ortools"] is False
    assert doc["decided"] is False
    assert doc["upper"] >= best_group(case) - 1e-9
    if doc["found"]:
        assert fits(*case, [tuple(pair) for pair in doc["found"]])
        pi, items = case[0], case[1]
        assert doc["value"] == pytest.approx(sum(pi[items[i]] for i, _ in doc["found"]))


def _one_member_only():
    """A case whose only group is one job that fits without its switch: 50 ms on pool 1 with a
    10 ms switch, T at most 55; the model's row for pool 1 (which every combination uses)
    pays the switch, so the programme bounds the model's groups by 0."""
    pi, items, ok = np.array([2.0]), np.arange(1), np.array([[True]])
    duration, switch = np.array([[[0, 50]]]), np.array([10])
    load = duration + np.where(duration > 0, switch[:, None, None], 0)
    mem, chain = np.zeros((1, 1, 2), dtype=int), np.array([[50]])
    slo, factor, room = np.array([55]), np.array([1]), np.array([100, 100])
    return pi, items, ok, duration, load, mem, chain, slo, factor, switch, 55, room


@pytest.mark.parametrize("seed", [*range(20), -1])
def test_an_unpriced_case_with_the_programme_stays_above_the_maximum(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refinement tightens an undecided case by the two-pool programme, which bounds the
    groups of two or more only: the unpriced case's best group of one member must be the true
    one, or the bound falls below a group of one (brute force, every group; seed -1:
    :func:`_one_member_only`, where the programme's bound is 0). (CP-SAT's import refused
    in-process: the gate made to say no.)"""
    case = _case(seed) if seed >= 0 else _one_member_only()
    pi, items, ok, duration, load, mem, chain, slo, _, switch, level, _ = case
    monkeypatch.setattr(pricing, "solver_in_time", lambda solver, deadline: False)
    got = case_bound(*case, 30.0)
    args = (pi, items, ok, duration, load, mem, chain, slo, level, switch)
    best = best_group(case)
    assert not got.decided
    assert got.upper >= best - 1e-9
    assert with_programme(got, open_bound(*args)).upper >= best - 1e-9
    assert got.upper == pytest.approx(float(np.maximum(pi[items], 0.0).sum()))
