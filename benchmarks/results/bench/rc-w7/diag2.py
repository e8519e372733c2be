"""Diagnosis only: ``trace.py`` with the bound search's answer, which W7 starts from, capped at
$RC_BOUND µs (5035414: the runs whose W7 started from 5.0354 s; a weaker bound stays valid)."""

import os
import runpy
from pathlib import Path

import schedopt.problems.reconfig.price_bound as pb

_pbu = pb.priced_bound_us


def _capped(*a, **k):
    lo, st = _pbu(*a, **k)
    return (None if lo is None else min(lo, int(os.environ.get("RC_BOUND", "5035414")))), st


pb.priced_bound_us = _capped

if __name__ == "__main__":
    runpy.run_path(str(Path(__file__).parent / "trace.py"), run_name="__main__")
