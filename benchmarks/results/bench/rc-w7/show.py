# ruff: noqa
"""Diagnostic table of the rows and phase logs in out/ (see RESULTS.md, reconfig W7 cut)."""

import json
import sys

for name in sys.argv[1:]:
    rows = [json.loads(l) for l in open(f"out/{name}.jsonl")]
    for r in rows:
        res = r.get("result", r)
        st = res.get("stats", {}) if isinstance(res, dict) else {}
        L1 = res["objectives"][0]
        pb = st.get("physical_bound_s")
        print(
            name,
            r.get("recipe", ""),
            "L1",
            L1,
            "pb",
            pb,
            "gap %.2f%%" % (100 * (L1 - pb) / L1) if (L1 and pb) else "",
            "wall",
            res.get("wall_s") or r.get("wall_s"),
        )
    ev = [json.loads(l) for l in open(f"out/{name}.events.jsonl")]
    hs = [e for e in ev if e["ev"] == "highs"]
    for e in ev:
        if e["ev"] == "W7.plan" and e["lam"] < 6e6 and e["packed"]:
            ins = [h for h in hs if e["t"] <= h["t"] <= e["t"] + e["wall"] and h["mip"]]
            print(
                "  lam %d packed %s found %s wall %.2f | %s"
                % (
                    e["lam"],
                    e["packed"],
                    e["found"],
                    e["wall"],
                    "; ".join(
                        f"{h['status']} lim={h['limit']} w={h['wall']} obj={h['obj']} dual={h['dual']}"
                        for h in ins
                    ),
                )
            )
