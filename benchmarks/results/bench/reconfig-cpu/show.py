import json
import sys
from pathlib import Path

D = Path("/tmp/rcc/out")
ev_on = "-e" in sys.argv
for t in [a for a in sys.argv[1:] if a != "-e"]:
    tm = (D / f"{t}.time").read_text().split() if (D / f"{t}.time").exists() else []
    print("==", t, (D / f"{t}.load").read_text().replace("\n", " | "), "cpu u/s/wall", tm[-3:])
    if not (D / f"{t}.jsonl").exists():
        print((D / f"{t}.stdout").read_text()[-2000:])
        continue
    for line in (D / f"{t}.jsonl").read_text().splitlines():
        r = json.loads(line)
        s = r["stats"]
        print(
            f"  {r['recipe']:18s} L1 {r['objectives'][0]:.4f} bound {r['bound']}"
            f" gap {100 * (r['gap'] or 0):.2f}% {r.get('method')} rounds {s.get('bound_rounds')}"
            f" cpu {r.get('cpu_s')}"
            f" wall {r.get('wall_s', r.get('runtime_s'))}"
        )
    if ev_on and (D / f"{t}.events.jsonl").exists():
        for line in (D / f"{t}.events.jsonl").read_text().splitlines():
            print("   ", line.strip())
