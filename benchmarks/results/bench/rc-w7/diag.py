"""Diagnosis only: ``trace.py`` with Q8''s bound capped at $RC_BOUND µs (5038562: the runs
that ended at 5.0386 s; a weaker bound stays valid). W7 does not read it: no change of path."""

import os
import runpy
from pathlib import Path

import schedopt.problems.reconfig.price_bound as pb

_mb = pb.mean_bound_us
pb.mean_bound_us = lambda *a, **k: min(_mb(*a, **k), int(os.environ.get("RC_BOUND", "5038562")))

if __name__ == "__main__":
    runpy.run_path(str(Path(__file__).parent / "trace.py"), run_name="__main__")
