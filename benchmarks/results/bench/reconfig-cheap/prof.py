"""cProfile (CPU time) of one `auto` 10 s row: python prof.py OUT.prof ROWS.jsonl [recipe]."""

import contextlib
import cProfile
import sys
import time

from schedopt.cli import main

out, rows = sys.argv[1], sys.argv[2]
recipe = sys.argv[3] if len(sys.argv) > 3 else "256gpu-16+16-s0"
args = ["bench", "reconfig-paper", "--methods", "auto", "--time-limits", "10"]
args += ["--recipes", recipe, "--no-report", "--out", rows]
prof = cProfile.Profile(time.process_time)
prof.enable()
with contextlib.suppress(SystemExit):
    main(args)
prof.disable()
prof.dump_stats(out)
