"""Suites and recipes: what ``schedopt bench`` and ``schedopt tune`` run, by name.

A :class:`Recipe` builds one instance reproducibly: the problem's ``generate_custom`` (or
``generate`` with a size) with fixed arguments and seed. ``checksum`` is the SHA-256 of the
instance's canonical JSON (:func:`instance_checksum`); a recipe whose instance no longer hashes
to it has drifted (a generator changed), and the runner says so rather than compare figures of
two different instances.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from schedopt.core.checksum import instance_checksum


@dataclass(frozen=True)
class Recipe:
    """One instance, reproducibly: ``schedopt.problems.<problem>.generate.<generator>(**args)``.

    ``name`` is unique within its suite (``"1024gpu-1000j-s0"``). ``checksum`` is filled in
    when the suite is frozen (``schedopt bench --checksums``); empty means not yet recorded.
    """

    name: str
    problem: str
    generator: str
    args: Mapping[str, Any] = field(default_factory=dict)
    checksum: str = ""

    def build(self) -> Any:
        """The instance this recipe describes."""
        module = importlib.import_module(f"schedopt.problems.{self.problem}.generate")
        return getattr(module, self.generator)(**dict(self.args))


@dataclass(frozen=True)
class Suite:
    """A named list of recipes of one problem, with the default methods and time limit a run
    of it uses (``schedopt bench SUITE`` may override both)."""

    name: str
    problem: str
    recipes: tuple[Recipe, ...]
    methods: tuple[str, ...] = ("auto",)
    time_limit_s: float = 10.0
    description: str = ""

    def __post_init__(self) -> None:
        names = [r.name for r in self.recipes]
        if len(set(names)) != len(names):
            raise ValueError(f"suite {self.name!r}: recipe names repeat")
        for r in self.recipes:
            if r.problem != self.problem:
                raise ValueError(f"suite {self.name!r}: recipe {r.name!r} is a {r.problem}")


__all__ = ["Recipe", "Suite", "instance_checksum"]
