"""The pytest plugin as a test author's project meets it: a test file of theirs, run by pytest
with the plugin (the ``pytest11`` entry point once installed; ``-p`` here), a failing property
whose message names the saved minimal instance that ``schedopt validate`` re-checks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

USER_TEST = """
from schedopt.testing import admission_decision


def eager(inst):  # runs every best-effort job in every slot, arrived or not, unplaced
    types = tuple(inst.cluster.gpu_types())
    gpus = {}
    for job in inst.jobs:
        if not job.kind.is_slo:
            gpu_type, table = next(iter(job.options(types).items()))
            gpus[job.id] = (gpu_type, min(table))
    return admission_decision(inst, gpus=gpus)


def test_my_admission(schedopt_oracle):
    schedopt_oracle.run("admission", eager, max_examples=20)
"""


def test_the_entry_point_is_declared() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert '[project.entry-points.pytest11]\nschedopt = "schedopt.testing.plugin"' in text


def test_a_failing_property_saves_a_minimal_instance_the_cli_rechecks(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text(USER_TEST)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "schedopt.testing.plugin",
            "-p",
            "no:cacheprovider",
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    found = re.search(r"re-check: schedopt validate (\S+) (\S+)", run.stdout)
    assert found, run.stdout
    instance, decision = (Path(p) for p in found.groups())
    assert instance.parent == tmp_path / ".schedopt-failures"
    check = subprocess.run(
        [sys.executable, "-m", "schedopt", "validate", str(instance), str(decision)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 4, check.stdout + check.stderr
    assert "[V" in check.stdout
