"""Suites and recipes: what ``schedopt bench`` and ``schedopt tune`` run, by name.

A :class:`Recipe` builds one instance reproducibly: the problem's ``generate_custom`` (or
``generate`` with a size) with fixed arguments and seed, or a builder (``"module:function"``)
reading a slice of a public trace from the data folder (:func:`data_folder`). ``checksum`` is the
SHA-256 of the instance's canonical JSON (:func:`instance_checksum`); a recipe whose instance no
longer hashes to it has drifted (a generator changed), and the runner says so rather than compare
figures of two different instances. A trace recipe also records the SHA-256 of the file it reads
(``data_sha256``), and is skipped, with the reason, where the data folder or file is absent.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedopt.core.checksum import instance_checksum

#: Where trace data is looked for when ``SCHEDOPT_DATA`` is unset: ``shared/data`` in the
#: working folder or one of its parents (the data is never copied into the repository).
DATA_ENV = "SCHEDOPT_DATA"


class DataMissing(Exception):
    """A trace recipe's data file is not on this machine: the recipe is skipped, not failed."""


class RecipeDrift(Exception):
    """A recipe no longer builds the instance (or reads the data) its checksum records."""


def data_folder() -> Path | None:
    """The folder of public traces: ``$SCHEDOPT_DATA``, else the nearest ``shared/data`` above
    the working folder; None when there is none."""
    if os.environ.get(DATA_ENV):
        path = Path(os.environ[DATA_ENV])
        return path if path.is_dir() else None
    for folder in (Path.cwd(), *Path.cwd().parents):
        if (folder / "shared" / "data").is_dir():
            return folder / "shared" / "data"
    return None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Recipe:
    """One instance, reproducibly: ``schedopt.problems.<problem>.generate.<generator>(**args)``,
    or ``module:function`` (``generator`` with a colon) called with ``path=`` the trace file
    ``data`` (relative to :func:`data_folder`) and ``args``.

    ``name`` is unique within its suite (``"1024gpu-1000j-s0"``). ``checksum`` is recorded in
    ``schedopt/bench/suites/checksums.json`` (``schedopt bench --checksums SUITE --update``);
    empty means not yet recorded.
    """

    name: str
    problem: str
    generator: str
    args: Mapping[str, Any] = field(default_factory=dict)
    checksum: str = ""
    #: The trace file a trace recipe reads, relative to the data folder ("" for a generator).
    data: str = ""
    #: SHA-256 of that file, so that a changed file is noticed rather than silently used.
    data_sha256: str = ""

    def data_path(self) -> Path:
        """The trace file, checked; raises :class:`DataMissing` where it is absent."""
        folder = data_folder()
        if folder is None:
            raise DataMissing(
                f"{self.name}: no data folder (set {DATA_ENV} or put shared/data above the "
                f"working folder) for {self.data}"
            )
        path = folder / self.data
        if not path.is_file():
            raise DataMissing(f"{self.name}: {path} is absent")
        if self.data_sha256 and file_sha256(path) != self.data_sha256:
            raise RecipeDrift(f"{self.name}: {path} is not the file recorded (SHA-256 differs)")
        return path

    def build(self) -> Any:
        """The instance this recipe describes."""
        if ":" in self.generator:
            module_name, _, function = self.generator.partition(":")
            builder = getattr(importlib.import_module(module_name), function)
            if self.data:
                return builder(path=self.data_path(), **dict(self.args))
            return builder(**dict(self.args))
        module = importlib.import_module(f"schedopt.problems.{self.problem}.generate")
        return getattr(module, self.generator)(**dict(self.args))


@dataclass(frozen=True)
class Suite:
    """A named list of recipes of one problem, with the default methods and time limit a run
    of it uses (``schedopt bench SUITE`` may override both). ``columns`` names the metrics
    (the validator's, ``metrics``) and counts (``stats``) of a row that the run's Markdown
    table shows beside L1, bound and gap: what a table of benchmarks/RESULTS.md reports."""

    name: str
    problem: str
    recipes: tuple[Recipe, ...]
    methods: tuple[str, ...] = ("auto",)
    time_limit_s: float = 10.0
    description: str = ""
    columns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [r.name for r in self.recipes]
        if len(set(names)) != len(names):
            raise ValueError(f"suite {self.name!r}: recipe names repeat")
        for r in self.recipes:
            if r.problem != self.problem:
                raise ValueError(f"suite {self.name!r}: recipe {r.name!r} is a {r.problem}")


def seeded(
    problem: str, stem: str, generator: str, args: Mapping[str, Any], seeds: tuple[int, ...]
) -> tuple[Recipe, ...]:
    """One recipe per instance seed: ``<stem>-s<seed>``, ``args`` plus ``seed=``."""
    return tuple(
        Recipe(f"{stem}-s{seed}", problem, generator, {**args, "seed": seed}) for seed in seeds
    )


__all__ = [
    "DATA_ENV",
    "DataMissing",
    "Recipe",
    "RecipeDrift",
    "Suite",
    "data_folder",
    "file_sha256",
    "instance_checksum",
    "seeded",
]
