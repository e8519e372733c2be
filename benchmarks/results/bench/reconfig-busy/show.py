"""The rows of this folder: python show.py TAG... (from the repository's root)."""

import json
import os
import sys
from pathlib import Path

D = Path("benchmarks/results/bench/reconfig-busy")
for t in sys.argv[1:]:
    print("==", t, (D / f"{t}.load").read_text().replace("\n", " | "))
    for line in (D / f"{t}.jsonl").read_text().splitlines():
        r = json.loads(line)
        print(
            f"  {r['recipe']:18s} L1 {r['objectives'][0]:.4f} bound {r['bound']}"
            f" gap {100 * r['gap']:.2f}% load1 {r['machine']['load1']}"
            f" {r['versions']['commit']} stats {r['stats']}"
        )
    events = D / f"{t}.events.jsonl"
    if os.path.exists(events):
        for line in events.read_text().splitlines():
            print("   ", line.strip())
