"""python show.py RUN [PREFIX]: each row's L1, physical bound, gap, rounds and W8 (branch_s)."""

import json
import sys
from pathlib import Path

here = Path(__file__).parent / sys.argv[1]
for f in sorted(here.glob((sys.argv[2] if len(sys.argv) > 2 else "") + "*.jsonl")):
    if "events" in f.name:
        continue
    with f.open() as rows:
        for line in rows:
            r = json.loads(line)
            m, s = r.get("metrics", {}), r.get("stats", {})
            gap = m.get("physical_gap")
            print(
                f"{f.stem:14} {r['recipe']:18} L1 {r['objectives'][0]:.4f} "
                f"bound {m.get('physical_bound_s')} gap {100 * (gap or 0):.2f}% "
                f"rounds {s.get('bound_rounds')} W8 {s.get('branch_s')} {r['method_used']} "
                f"load {r['machine']['load1']}"
            )
