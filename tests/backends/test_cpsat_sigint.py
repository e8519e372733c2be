"""Ctrl-C belongs to the caller (#17). CP-SAT catches SIGINT by default (``catch_sigint_signal``):
a Ctrl-C during its search only stopped that search, as if its limit were reached, and the
method went on to the end of its time limit; and on returning it set SIGINT back to the
system's default, so the next Ctrl-C killed the process where it stood (no ``finally``: CBC's
run directory left, a pool's workers orphaned; a program calling ``solve`` lost its
KeyboardInterrupt)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

AFTER = textwrap.dedent(
    f"""
    import os, signal, sys, time
    sys.path.insert(0, {str(ROOT)!r})
    import schedopt
    spec = schedopt.get_problem(sys.argv[1])
    schedopt.solve(spec.generate(sys.argv[2], 0), sys.argv[3], time_limit_s=30)
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(10)
    except KeyboardInterrupt:
        sys.exit(0)
    sys.exit(1)
    """
)


@pytest.mark.parametrize(
    ("problem", "size", "method"),
    [
        ("admission", "tiny", "cpsat"),
        # colgen's pricing and group models (their own CP-SAT solvers): 3-6 s at load 10
        pytest.param("cosched", "medium", "colgen", marks=pytest.mark.slow),
    ],
)
def test_ctrl_c_after_a_cpsat_solve_is_a_keyboard_interrupt(
    problem: str, size: str, method: str
) -> None:
    argv = [sys.executable, "-c", AFTER, problem, size, method]
    run = subprocess.run(argv, timeout=120, check=False)
    assert run.returncode == 0  # not -2: killed by SIGINT's default action
