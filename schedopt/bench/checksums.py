"""Recording and checking the checksums of the instances a suite's recipes build
(``schedopt bench --checksums SUITE [--update]``)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from schedopt.bench.suite import DataMissing, Suite, file_sha256, instance_checksum
from schedopt.bench.suites import CHECKSUMS, recorded_checksums


def compute(suite: Suite) -> Iterator[tuple[str, str]]:
    """``(key, sha256)`` for each recipe of ``suite`` (its name; ``"data:<name>"`` for a trace
    file's own checksum); a recipe whose data is absent yields ``sha256`` = ``""``."""
    for recipe in suite.recipes:
        try:
            if recipe.data:
                yield f"data:{recipe.name}", file_sha256(recipe.data_path())
            yield recipe.name, instance_checksum(recipe.build())
        except DataMissing:
            yield recipe.name, ""


def save(suite: Suite, found: dict[str, str]) -> None:
    """Record ``found`` for ``suite`` in checksums.json (a checkout only: never inside an
    installed package)."""
    if "site-packages" in CHECKSUMS.parts or "dist-packages" in CHECKSUMS.parts:
        raise PermissionError(f"{CHECKSUMS} is inside an installed package; update a checkout")
    table = recorded_checksums()
    table[suite.name] = dict(sorted({k: v for k, v in found.items() if v}.items()))
    CHECKSUMS.write_text(json.dumps(dict(sorted(table.items())), indent=1) + "\n")


__all__ = ["compute", "save"]
