"""Start-up stays light: ``import schedopt``, ``schedopt --help`` and ``--version`` import no
solver and no problem package (each problem, and the solvers behind it, is imported on first
use; #16). Asserted on the modules imported, in a fresh interpreter, not on a time: the times
are in benchmarks/RESULTS.md ("Start-up")."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: Modules that start-up must not import: the solvers, what they pull in (ortools' cp_model
#: imports pandas), the tuner, the topology's graph library, pydantic (the instance models and
#: files: 0.05-0.2 s) and the problem packages.
HEAVY = (
    "pydantic",
    "ortools",
    "highspy",
    "pulp",
    "pandas",
    "skopt",
    "sklearn",
    "scipy",
    "networkx",
    "schedopt.model",
    "schedopt.backends",
    "schedopt.topology",
    "schedopt.tuning",
    "schedopt.problems.admission",
    "schedopt.problems.fairshare",
    "schedopt.problems.moe_placement",
    "schedopt.problems.timeshare",
    "schedopt.problems.cosched",
    "schedopt.problems.reconfig",
)


def _imported(*args: str) -> set[str]:
    """The modules a fresh ``python -X importtime ARGS`` imports (its import-time log)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "args",
    [
        ("-c", "import schedopt"),
        ("-m", "schedopt", "--help"),
        ("-m", "schedopt", "--version"),
        ("-m", "schedopt", "solve", "--help"),
    ],
    ids=["import", "help", "version", "solve-help"],
)
def test_start_up_imports_no_solver_and_no_problem(args: tuple[str, ...]) -> None:
    modules = _imported(*args)
    assert "schedopt.core" in modules  # the log is read right
    assert _heavy(modules) == []


def test_the_log_sees_a_heavy_import() -> None:
    """The checks here can fail: a problem and a solver's emitter show in the log."""
    script = "import schedopt; schedopt.get_problem('admission'); import schedopt.model.emit_cpsat"
    modules = _imported("-c", script)
    assert {"ortools", "pandas", "schedopt.problems.admission"} <= set(_heavy(modules))


@pytest.mark.parametrize(
    "problem", ["admission", "fairshare", "moe_placement", "cosched", "reconfig"]
)
def test_a_problem_imports_its_solvers_on_first_solve(problem: str) -> None:
    """Loading a problem (to read a file, list its methods, run a heuristic) imports no solver:
    each model imports its back-end when it is emitted. (timeshare's column generation and
    warm start still import HiGHS with the package.)"""
    modules = _imported("-c", f"import schedopt; schedopt.get_problem({problem!r})")
    assert f"schedopt.problems.{problem}" in modules
    solvers = ("ortools", "highspy", "pulp", "pandas", "skopt")
    assert [m for m in modules if m.split(".")[0] in solvers] == []


def test_problems_load_on_first_use() -> None:
    """Every built-in problem is known before it is imported; asking for one imports that one
    only, and an instance built from a problem's own package finds its problem."""
    script = (
        "import sys, schedopt\n"
        "from schedopt.core.registry import problem_of\n"
        "assert 'cosched' in schedopt.problem_names()\n"
        "assert 'schedopt.problems.cosched' not in sys.modules\n"
        "assert schedopt.get_problem('fairshare').name == 'fairshare'\n"
        "assert 'schedopt.problems.cosched' not in sys.modules\n"
        "from schedopt.problems.reconfig import generate\n"
        "assert problem_of(generate('small', 0)).name == 'reconfig'\n"
        "assert 'schedopt.problems.cosched' not in sys.modules\n"
        "print(sorted(schedopt.problem_names()))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("[", 1)[1].count("'") == 12  # six names, none lost
