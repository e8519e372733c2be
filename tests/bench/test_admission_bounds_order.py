"""benchmarks/admission_bounds.py alternates the order within each pair of rows: the other
checkouts' first in the odd pairs, this checkout's first in the even ones (load drifting
within a pair favours neither side). Nothing is solved: the runs are recorded, not made."""

from __future__ import annotations

from pathlib import Path

from .test_script_callers import _script


def test_the_pairs_alternate_which_checkout_runs_first(monkeypatch, tmp_path) -> None:
    module = _script("admission_bounds")
    ran: list[tuple[str, Path]] = []

    def run(code: str, path: Path) -> dict:
        ran.append(("bounds" if "l1_bound" in code else "auto", path))
        return {}

    monkeypatch.setattr(module, "run_in_checkout", run)
    monkeypatch.setattr(module, "append_rows", lambda *args: None)
    old = tmp_path / "old"
    argv = ["--shapes", "256x800", "--seeds", "0,0,1", "--previous", str(old), "--bounds"]
    assert module.main(argv) == 0
    root = module.ROOT
    bounds, new = ("bounds", root), ("auto", root)
    # per pair the bounds (this checkout's) first, then old-new, new-old, old-new
    assert ran == [
        bounds,
        ("auto", old),
        new,
        bounds,
        new,
        ("auto", old),
        bounds,
        ("auto", old),
        new,
    ]
