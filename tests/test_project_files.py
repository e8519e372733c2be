"""Packaging promises: compatible ranges in pyproject.toml, exact pins only in the CI
constraints file (inside those ranges), and CI runs exactly the README's test command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement  # packaging comes with pytest
from packaging.utils import canonicalize_name

tomllib = pytest.importorskip("tomllib")  # the standard library from Python 3.11

ROOT = Path(__file__).resolve().parent.parent


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [r for group in project["optional-dependencies"].values() for r in group]
    return [Requirement(r) for r in [*project["dependencies"], *extras]]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints" / "ci.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def test_dependencies_are_ranges_not_pins() -> None:
    for req in _requirements():
        assert not any(s.operator in ("==", "===") for s in req.specifier), req
        assert any(s.operator in (">=", ">") for s in req.specifier), f"{req}: no lower bound"


def test_every_dependency_is_pinned_for_ci_inside_its_range() -> None:
    pins = _pins()
    for req in _requirements():
        version = pins.get(canonicalize_name(req.name))
        assert version is not None, f"{req.name} is not pinned in constraints/ci.txt"
        assert req.specifier.contains(version, prereleases=True), (req, version)


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.startswith(("#", "set ", "cd "))
    ]
    assert len(ci) == 1, ci
    assert "-c constraints/ci.txt" in ci[0]
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"^" + re.escape(ci[0]) + r"$", readme, flags=re.MULTILINE), ci[0]


def test_a_hanging_test_ends_the_run(pytestconfig: pytest.Config) -> None:
    """A per-test cap (pyproject's faulthandler_timeout) that ends the run, not a dump alone:
    a hang then fails CI with every thread's traceback instead of holding it (#17)."""
    cap = float(pytestconfig.getini("faulthandler_timeout"))
    assert 600 < cap <= 3600  # above the proof limit (tests/timing.py), still a cap
    assert pytestconfig.getini("faulthandler_exit_on_timeout") is True
