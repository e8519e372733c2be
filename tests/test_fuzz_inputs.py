"""CI run of ``benchmarks/fuzz_inputs.py`` at a small count: broken instance files and corrupted
solution files of every problem end with a result, violations or InvalidInstanceError — never
another exception and never a hang. The full run (10,000 + 3,000 per problem) is in RESULTS.md.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _fuzz_module():
    # On sys.path (not loaded from its file) so that the spawned worker process, which gets
    # this sys.path, can import the module its cases and worker function come from.
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module("fuzz_inputs")


@pytest.mark.slow
def test_fuzz_at_a_small_count() -> None:
    fuzz = _fuzz_module()
    problems = ["admission", "fairshare", "moe_placement"]
    rows, failures = fuzz.fuzz(problems, count=80, solutions=60, seed=1, time_limit_s=0.3)
    assert {(r["problem"], r["kind"]) for r in rows} == {
        (p, k) for p in problems for k in ("instance", "solution")
    }
    assert sum(r["cases"] for r in rows) == 3 * (80 + 60)
    assert not failures, [(f["problem"], f["kind"], f.get("error")) for f in failures[:5]]
    # The fuzz must bite: most broken files are refused, and some corrupted solutions are
    # answered with violations rather than refused outright.
    for r in rows:
        assert r["invalid"] > r["cases"] // 2, r
    assert any(r["violations"] for r in rows if r["kind"] == "solution")
