"""The solvers' first imports under a deadline (schedopt.backends.first_import, #17): refused
before they start when they would not end in the time left, the module then not imported; the
exact runner's HiGHS and CBC models gated as its CP-SAT one is (tests/test_cli_gates.py). The
gates' slowdown is injected: nothing depends on the machine's speed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from schedopt.backends.first_import import Solver, import_solver, solver_in_time
from schedopt.core import gates
from schedopt.core.stopping import Deadline, DeadlineReached

EXAMPLE = Path(__file__).resolve().parents[2] / "instances" / "admission" / "example.json"


@pytest.fixture
def fresh_solver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Solver:
    """A "solver" no one has imported yet, 0.5 s quiet."""
    name = f"solver_fresh_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text("IMPORTED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield Solver(name, 0.5, "the thing")
    sys.modules.pop(name, None)


def test_a_refused_solver_is_not_imported(
    fresh_solver: Solver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 0.5 s quiet at 10× against 3.5 s left: refused; with no deadline (deterministic), ungated
    monkeypatch.setattr(gates, "gate_slowdown", lambda: 10.0)
    assert not solver_in_time(fresh_solver, Deadline.after(3.5))
    with pytest.raises(DeadlineReached, match=r"the thing takes about 5\.0 s to import"):
        import_solver(fresh_solver, Deadline.after(3.5))
    assert fresh_solver.module not in sys.modules
    assert solver_in_time(fresh_solver, None)
    assert fresh_solver.module in sys.modules


#: The exact runner's ``argv[2]`` on ``argv[1]`` within 5 s, the gates' slowdown made 10,000
#: once the instance is loaded (HiGHS's import would take 200 s, PuLP's 500 s).
EXACT = """\
import json, sys
import schedopt
from schedopt.core import gates
inst = schedopt.load(sys.argv[1])
gates.gate_slowdown = lambda: 10000.0
result = schedopt.solve(inst, sys.argv[2], time_limit_s=5)
print(json.dumps({"status": result.status.value, "explanation": result.explanation,
                  "imported": [m for m in ("highspy", "pulp") if m in sys.modules]}))
"""


@pytest.mark.parametrize(
    ("method", "subject"),
    [("milp:highs", "the HiGHS solver takes about 200.0"), ("milp:cbc", "the HiGHS solver")],
)
def test_the_exact_runners_milp_models_are_refused_without_time(method: str, subject: str) -> None:
    """milp:highs and milp:cbc (whose PuLP imports highspy) on admission: no solution, said,
    and neither HiGHS nor PuLP imported (admission's LP bound before the model gated too)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", EXACT, str(EXAMPLE), method],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout.splitlines()[-1])
    assert doc["status"] == "no_solution"
    assert subject in doc["explanation"]
    assert doc["imported"] == []
