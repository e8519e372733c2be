# ruff: noqa: E501
"""python table.py TAG...: one Markdown row per run (load, CPU/wall, each row's L1 / bound,
gap (bound rounds), cpu_s; the bound's, W8's and W7's CPU / wall from the phase log)."""

import json
import sys
from pathlib import Path

if "--help" in sys.argv:
    print(__doc__)
    sys.exit()
D = Path(__file__).parent / "out"  # /tmp/rcs/out where it ran; in the repository: beside it
if not D.exists():
    D = Path(__file__).parent
for t in sys.argv[1:]:
    ld = (D / f"{t}.load").read_text().split("\n")
    l0, l1 = ld[0].split()[1].rstrip(","), ld[1].split()[1].rstrip(",")
    tm = (D / f"{t}.time").read_text().split()[-3:]
    rows = [json.loads(x) for x in (D / f"{t}.jsonl").read_text().splitlines()]
    evs = [json.loads(x) for x in (D / f"{t}.events.jsonl").read_text().splitlines()]
    # split the events per row: each row starts with build_data
    per, cur = [], []
    for e in evs:
        if e["ev"] == "build_data" and cur:
            per.append(cur)
            cur = []
        cur.append(e)
    per.append(cur)
    cells = []
    for r, ev in zip(rows, per, strict=True):
        s = r["stats"]
        gap = f"{100 * r['gap']:.2f}%" if r.get("gap") is not None else "–"
        b = r["bound"]
        ph = {}
        for e in ev:
            if e["ev"] in ("bound", "W8", "W7"):
                ph[e["ev"]] = f"{e['cpu']:.2f}/{e['wall']:.2f}"
        rounds = s.get("bound_rounds")
        rounds = int(rounds) if rounds is not None else "–"
        cells.append(
            f"{r['objectives'][0]:.4f} / {b if b is None else round(b, 4)}, {gap} ({rounds}), "
            f"{r.get('cpu_s', 0):.2f}; bound {ph.get('bound', '–')}, W8 {ph.get('W8', '–')}, W7 {ph.get('W7', '–')}"
        )
    print(f"| {t} | {l0} → {l1} | {tm[0]} / {tm[2]} s | " + " | ".join(cells) + " |")
