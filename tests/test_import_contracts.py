"""The import contracts of pyproject.toml ([tool.importlinter]) hold: imports go only downward
through the layers, problem packages are independent, core imports nothing above it, and no
package has an import cycle. CI also runs ``lint-imports``; this test makes ``pytest`` alone
catch a violation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter", reason="import-linter is not installed (the dev extra)")

ROOT = Path(__file__).resolve().parent.parent

# Run in a fresh interpreter from the repository root, so that the contracts are checked
# against this checkout's schedopt (lint-imports puts the working directory first on the path).
_LINT = (
    "import sys; from importlinter.cli import lint_imports; "
    "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))"
)


def test_import_contracts_are_kept() -> None:
    run = subprocess.run(
        [sys.executable, "-c", _LINT], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_schedopt_registers_the_built_in_problems() -> None:
    # Registration is explicit (schedopt.problems), and importing schedopt performs it.
    code = "import schedopt; print(','.join(schedopt.problem_names()))"
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["admission,cosched,fairshare,moe_placement,reconfig,timeshare"]
