# ruff: noqa
"""rows.jsonl as a Markdown table: python table.py ROWS.jsonl"""

import json, sys

rows = [json.loads(l) for l in open(sys.argv[1])]
print("| run | row | load | plan / bound, gap | wall s | CPU s | guide s | join s |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    s = r.get("stats", {})
    g = r.get("gap")
    print(
        f"| {r['tag']} | {r['recipe']} | {r['load']} | {r['objectives'][0]:,.0f} / {r['bound']:,.0f}, "
        f"{'–' if g is None else f'{100 * g:.2f}%'} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | "
        f"{s.get('guide_s', '–')} | {s.get('join_s', '–')} |"
    )
