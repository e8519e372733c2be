"""The hypothesis profile for CI, ``schedopt-ci``: derandomised (the same examples every run),
``deadline=None`` (a busy runner fails nothing), 25 examples unless said, no example database;
the exact solves behind ``instances(feasible=True)`` make generation slow, so the health checks
on slow generation and on filtering are off."""

from __future__ import annotations

from typing import Any

PROFILE = "schedopt-ci"


def register_profile() -> None:
    """Register ``schedopt-ci`` (``settings.load_profile("schedopt-ci")`` then uses it)."""
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        PROFILE,
        derandomize=True,
        deadline=None,
        max_examples=25,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


def ci_settings(max_examples: int = 25) -> Any:
    """``schedopt-ci`` with ``max_examples``, a decorator for ``@given`` tests."""
    from hypothesis import settings

    register_profile()
    return settings(settings.get_profile(PROFILE), max_examples=max_examples)
