"""Issue #17: wall time and L1 gap against GPUs × jobs, log-log, from decomp_scale.jsonl.

    python benchmarks/decomp_plot.py   # writes benchmarks/decomp_scale.svg

One panel per problem and measure; one series per method (the latest 10 s row of each
instance and method). A gap of 0 is drawn at 0.01% (a log axis has no 0); a row without an
answer or a bound is left out.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
COLORS = {"auto": "#1f77b4", "decomp": "#d62728", "decomp:pop": "#ff7f0e"}
MONO = {"admission": "cpsat", "fairshare": "milp:highs"}
W, H, PAD = 320, 220, 45


def rows() -> dict[tuple[str, str, str], dict]:
    latest: dict[tuple[str, str, str], dict] = {}
    for line in (HERE / "results" / "decomp_scale.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r.get("time_limit_s") != 10.0 or "suite" not in r:
            continue
        latest[(r["suite"].split("-")[0], r["instance"], r["method"])] = r
    return latest


def size(instance: str) -> float:
    gpus, jobs = re.match(r"(\d+)gpu-(?:\d+t-)?(\d+)j", instance).groups()  # type: ignore[union-attr]
    return float(gpus) * float(jobs)


def panel(x0: float, y0: float, title: str, series: dict[str, list[tuple[float, float]]]) -> str:
    pts = [p for s in series.values() for p in s]
    if not pts:
        return ""
    lx = [math.log10(x) for x, _ in pts]
    ly = [math.log10(y) for _, y in pts]
    xa, xb = min(lx) - 0.2, max(lx) + 0.2
    ya, yb = min(ly) - 0.3, max(ly) + 0.3

    def at(x: float, y: float) -> tuple[float, float]:
        px = x0 + PAD + (math.log10(x) - xa) / (xb - xa) * (W - PAD - 10)
        py = y0 + H - PAD + (ya - math.log10(y)) / (yb - ya) * (H - PAD - 20)
        return px, py

    out = [
        f'<rect x="{x0 + PAD}" y="{y0 + 20}" width="{W - PAD - 10}" height="{H - PAD - 20}" '
        'fill="none" stroke="#999"/>',
        f'<text x="{x0 + W / 2}" y="{y0 + 14}" text-anchor="middle" font-size="12">{title}</text>',
        f'<text x="{x0 + W / 2}" y="{y0 + H - 8}" text-anchor="middle" font-size="10">'
        "GPUs × jobs (log)</text>",
    ]
    for e in range(math.ceil(ya), math.floor(yb) + 1):
        _, py = at(10**xa, 10**e)
        out.append(
            f'<text x="{x0 + PAD - 4}" y="{py + 3}" text-anchor="end" font-size="9">1e{e}</text>'
        )
    for e in range(math.ceil(xa), math.floor(xb) + 1):
        px, _ = at(10**e, 10**ya)
        out.append(
            f'<text x="{px}" y="{y0 + H - PAD + 12}" text-anchor="middle" font-size="9">'
            f"1e{e}</text>"
        )
    for k, (name, s) in enumerate(sorted(series.items())):
        color = COLORS.get(name, "#2ca02c")
        xy = [at(x, y) for x, y in sorted(s)]
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in xy)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}"/>')
        out += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{color}"/>' for px, py in xy]
        out.append(
            f'<text x="{x0 + PAD + 6}" y="{y0 + 34 + 11 * k}" font-size="9" fill="{color}">'
            f"{name}</text>"
        )
    return "\n".join(out)


def main() -> int:
    data = rows()
    parts = []
    for i, problem in enumerate(("admission", "fairshare")):
        keep = ("auto", "decomp", MONO[problem])
        wall: dict[str, list[tuple[float, float]]] = {}
        gap: dict[str, list[tuple[float, float]]] = {}
        for (p, inst, method), r in data.items():
            if p != problem or method not in keep:
                continue
            label = method if method != MONO[problem] else f"{method} (monolithic)"
            wall.setdefault(label, []).append((size(inst), r["wall_s"]))
            if r.get("gap") is not None:
                gap.setdefault(label, []).append((size(inst), max(1e-4, r["gap"])))
        parts.append(panel(0, i * H, f"{problem}: wall time, s (10 s limit)", wall))
        parts.append(panel(W, i * H, f"{problem}: L1 gap to the bound", gap))
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * W}" height="{2 * H}" '
        'font-family="sans-serif">\n' + "\n".join(parts) + "\n</svg>\n"
    )
    (HERE / "decomp_scale.svg").write_text(svg)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
