"""The rows of run1.sh's runs as RESULTS.md's table cells: python table.py NAME..."""

import json
import sys
from pathlib import Path

D = Path("/tmp/rc1024/out")
for t in sys.argv[1:]:
    load = (D / f"{t}.load").read_text().split("\n")
    lb = load[0].split()[1]
    la = load[1].split()[1] if len(load) > 1 and load[1] else "?"
    tm = (D / f"{t}.time").read_text().split()[-3:] if (D / f"{t}.time").exists() else ["?"] * 3
    cells = {}
    for line in (D / f"{t}.jsonl").read_text().splitlines():
        r = json.loads(line)
        s = r["stats"]
        cells[r["recipe"][:4]] = (
            f"{r['objectives'][0]:.4f} / {r['bound']:.6g}, {100 * (r['gap'] or 0):.2f}% "
            f"({int(s.get('bound_rounds') or 0)}), wall {r.get('wall_s'):.2f}, cpu {r.get('cpu_s')}"
        )
    head = f"| {t} | {load[0].split()[0]} | {lb} → {la} | {tm[0]} / {tm[2]} s"
    print(f"{head} | {cells.get('256g', '–')} | {cells.get('1024', '–')} |")
