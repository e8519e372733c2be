"""timeshare's first import of a solver under a deadline (#17): CBC's model (PuLP) is imported
by the first model emitted to it, inside the solve, and refused before it starts when it would
not end in the time left (schedopt.backends.first_import, through ``model.method.emit``): an
honest NO_SOLUTION within the limit, PuLP never imported. HiGHS comes with the problem's
package (gated there), so milp:highs measures nothing; deterministic mode gates nothing (the
run must not depend on the wall clock). Each case runs in a fresh process, the gates' slowdown
injected (``schedopt.core.gates.gate_slowdown``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.timing import promised_s

INSTANCES = Path(__file__).resolve().parents[2] / "instances" / "timeshare"

#: ``argv[2]`` on ``argv[1]`` within 5 s (deterministic when ``argv[3]`` is "det"), the gates'
#: slowdown made 10,000 once the instance is loaded (PuLP's import would take 500 s); then, in
#: the same process, milp:highs.
SOLVE = """\
import json, sys, time
import schedopt
from schedopt.core import gates
inst = schedopt.load(sys.argv[1])
gates.gate_slowdown = lambda: 10000.0
started = time.perf_counter()
result = schedopt.solve(inst, sys.argv[2], time_limit_s=5, deterministic=sys.argv[3] == "det")
wall = time.perf_counter() - started
highs = schedopt.solve(inst, "milp:highs", time_limit_s=5)
print(json.dumps({"status": result.status.value, "explanation": result.explanation,
                  "wall": wall, "pulp": "pulp" in sys.modules, "highs": highs.status.value}))
"""


def _run(*args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", SOLVE, *args], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", ["max_min_fairness-8j-s0.json", "finish_time_fairness-8j-s2.json"])
def test_cbcs_model_without_time_for_pulp_is_no_solution_within_the_limit(name: str) -> None:
    """The LP (max-min fairness) and finish-time fairness's steps (each step's LP emitted to
    CBC) alike: PuLP refused and never imported, no solution, said, within the limit; HiGHS,
    imported with the package, solves the same instance to optimality at that slowdown."""
    doc = _run(str(INSTANCES / name), "milp:cbc", "wall")
    assert doc["pulp"] is False
    assert doc["status"] == "no_solution"
    assert "PuLP (CBC's model) takes about 500.0 s to import" in doc["explanation"]
    assert doc["wall"] <= promised_s(5.0)
    assert doc["highs"] == "optimal"


def test_deterministic_mode_gates_no_import() -> None:
    """Deterministic mode: the same slowdown refuses nothing (the answer must not depend on the
    machine's load), PuLP imported and CBC's answer optimal."""
    doc = _run(str(INSTANCES / "max_min_fairness-8j-s0.json"), "milp:cbc", "det")
    assert doc["pulp"] is True
    assert doc["status"] == "optimal"
