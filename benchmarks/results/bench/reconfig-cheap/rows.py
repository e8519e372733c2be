"""python rows.py RUN: a Markdown row per run of RUN/ (load before -> after, CPU / wall, each
size's L1 / bound, gap, the bound's rounds, W8 and the first prices' grid)."""

import json
import re
import sys
from pathlib import Path

run = Path(__file__).parent / sys.argv[1]
load: dict[str, list[str]] = {}
with (run / "load.txt").open() as f:
    for line in f:
        name = line.split()[0]
        found = re.search(r"load average: ([\d.]+)", line)
        assert found
        load.setdefault(name, ["", ""])[1 if " after " in line else 0] = found.group(1)
cpu = {}
with (run / "time.txt").open() as f:
    for line in f:
        m = re.match(r"(\S+) ([\d.]+) user .* ([\d.]+) wall", line)
        if m:
            cpu[m.group(1)] = (m.group(2), m.group(3))


def order(f: Path) -> tuple[str, str, str]:
    kind, tree, i = f.stem.split("-")
    return kind, i, tree


for f in sorted(run.glob("*.jsonl"), key=order):
    with f.open() as rows:
        got = {r["recipe"]: r for r in map(json.loads, rows)}
    out = []
    for recipe in ("256gpu-16+16-s0", "1024gpu-16+16-s0"):
        r = got[recipe]
        m, s = r["metrics"], r["stats"]
        rounds = int(s["bound_rounds"]) if "bound_rounds" in s else "-"
        extra = (", W8" if "branch_s" in s else "") + (
            f", grid {int(s['q8_grid'])}" if "q8_grid" in s else ""
        )
        out.append(
            f"{r['objectives'][0]:.4f} / {m['physical_bound_s']:.4f}, "
            f"{100 * m['physical_gap']:.2f}% | {rounds}{extra}"
        )
    c = cpu.get(f.stem, ("?", "?"))
    print(
        f"| {f.stem} | {load[f.stem][0]} → {load[f.stem][1]} | {c[0]} / {c[1]} s | "
        + " | ".join(out)
        + " |"
    )
