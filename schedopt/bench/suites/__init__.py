"""Every shipped suite, by name. One module per problem (``admission.py``, ...) exports
``SUITES: tuple[Suite, ...]``; add a module's name to ``_MODULES`` to list its suites."""

from __future__ import annotations

import importlib

from schedopt.bench.suite import Suite

_MODULES: tuple[str, ...] = ("admission", "fairshare")


def all_suites() -> dict[str, Suite]:
    """Every shipped suite, keyed by its name."""
    out: dict[str, Suite] = {}
    for name in _MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        for suite in module.SUITES:
            if suite.name in out:
                raise RuntimeError(f"suite {suite.name!r} defined twice")
            out[suite.name] = suite
    return out


__all__ = ["all_suites"]
