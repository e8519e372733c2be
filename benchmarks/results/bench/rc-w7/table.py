# ruff: noqa
"""Diagnostic table of the rows and phase logs in out/ (see RESULTS.md, reconfig W7 cut)."""

import json
import sys

for name in sys.argv[1:]:
    try:
        r = json.loads(open(f"out/{name}.jsonl").readline())
    except Exception:
        continue
    L1 = r["objectives"][0]
    pb = r["stats"].get("physical_bound_s") or r["metrics"].get("physical_bound_s")
    load = open(f"out/{name}.load").read().split("\n")
    lb = load[0].split()[1]
    la = load[1].split()[1] if len(load) > 1 and load[1] else "?"
    u, s_, e = open(f"out/{name}.time").read().split()[-3:]
    ev = [json.loads(l) for l in open(f"out/{name}.events.jsonl")]
    w7 = [x for x in ev if x["ev"] == "W7"]
    hs = [x for x in ev if x["ev"] == "highs" and x["mip"]]
    tl = sum(1 for x in hs if x["status"].startswith("Time"))
    plans = [x for x in ev if x["ev"] == "W7.plan" and x["packed"]]
    print(
        f"| {name} | {lb} → {la} | {L1:.4f} / {pb:.4f}, {100 * (L1 - pb) / L1:.2f}% ({int(r['stats'].get('bound_rounds', 0))}) | {r['wall_s']:.2f} | {float(u):.2f} | {w7[-1]['wall'] if w7 else '-'} | {len(plans)} | {tl} |"
    )
