"""The rows of this folder: python show.py TAG... (from the repository's root)."""

import json
import os
import sys

D = "benchmarks/results/bench/reconfig-busy"
for t in sys.argv[1:]:
    print("==", t, open(f"{D}/{t}.load").read().replace("\n", " | "))
    for l in open(f"{D}/{t}.jsonl"):
        r = json.loads(l)
        print(
            f"  {r['recipe']:18s} L1 {r['objectives'][0]:.4f} bound {r['bound']} gap {100 * r['gap']:.2f}%"
            f" load1 {r['machine']['load1']} {r['versions']['commit']} stats {r['stats']}"
        )
    if os.path.exists(f"{D}/{t}.events.jsonl"):
        for l in open(f"{D}/{t}.events.jsonl"):
            print("   ", l.strip())
