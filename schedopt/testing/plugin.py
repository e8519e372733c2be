"""The pytest plugin (entry point ``pytest11: schedopt``): the ``schedopt_oracle`` fixture.

``schedopt_oracle.run(problem, scheduler)`` draws instances of ``problem`` with hypothesis
(``schedopt.testing.instances``), calls ``scheduler(instance)`` on each, and asserts that the
decision is valid (and, with ``min_ratio``, within that ratio of the optimum). A failure is
shrunk to a minimal instance, saved as JSON beside the decision, and the assertion message
gives both paths and the commands that re-run them (``schedopt validate``, ``schedopt solve``).

``run`` uses the hypothesis profile ``schedopt-ci`` (:mod:`schedopt.testing.profile`) with
``max_examples`` (25 unless said). Everything heavy (hypothesis, the problems) is imported on
first use: the plugin is loaded by every pytest run once schedopt is installed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .profile import PROFILE, ci_settings, register_profile

#: Where failing instances go, under pytest's rootdir.
FAILURES_DIR = ".schedopt-failures"


class Oracle:
    """What the ``schedopt_oracle`` fixture gives a test."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)

    def run(
        self,
        problem: str,
        scheduler: Callable[[Any], Any],
        *,
        size: str = "tiny",
        max_examples: int = 25,
        min_ratio: float | None = None,
        **knobs: Any,
    ) -> None:
        """Property: on every drawn instance, ``scheduler(instance)`` is a valid decision (and
        ``optimality_ratio >= min_ratio`` when given)."""
        from hypothesis import given

        from schedopt.testing import assert_valid, instances, optimality_ratio

        @ci_settings(max_examples)
        @given(instances(problem, size=size, **knobs))
        def prop(instance: Any) -> None:
            decision = scheduler(instance)
            try:
                assert_valid(instance, decision)
                if min_ratio is not None:
                    ratio = optimality_ratio(instance, decision)
                    assert ratio.ratio >= min_ratio, f"optimality ratio below {min_ratio}: {ratio}"
            except AssertionError as err:
                raise AssertionError(f"{err}\n{self.save(instance, decision)}") from None

        prop()

    def save(self, instance: Any, decision: Any) -> str:
        """Write the instance (and decision) as JSON; overwritten by every failing example, so
        the last, hypothesis' shrunk one, stays. Returns the lines for the message."""
        from schedopt.io import dump

        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{self.name}.json"
        dump(instance, path)
        lines = [f"minimal instance: {path}", f"  re-run: schedopt solve {path}"]
        if decision is not None and hasattr(decision, "model_dump_json"):
            sol = self.directory / f"{self.name}-decision.json"
            sol.write_text(decision.model_dump_json(indent=2))
            lines.append(f"  decision: {sol}\n  re-check: schedopt validate {path} {sol}")
        return "\n".join(lines)


@pytest.fixture
def schedopt_oracle(request: pytest.FixtureRequest) -> Oracle:
    """Runs a scheduler over generated instances: ``schedopt_oracle.run("admission", f)``."""
    root = Path(request.config.rootpath)
    return Oracle(root / FAILURES_DIR, request.node.name)


__all__ = [
    "FAILURES_DIR",
    "PROFILE",
    "Oracle",
    "ci_settings",
    "register_profile",
    "schedopt_oracle",
]
