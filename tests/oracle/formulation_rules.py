"""The validator rules (V1..Vn) of every formulation, read from ``formulations/<problem>.md``.

``schedopt/testing/rules.py`` holds them for installed copies (the formulations are not part of
the package); test_rules.py checks that it says what the formulations say, and
``python -m tests.oracle.formulation_rules`` prints the table to paste after a change.
"""

from __future__ import annotations

import re
from pathlib import Path

import schedopt

ROOT = Path(__file__).resolve().parents[2]
_BULLET = re.compile(r"^- \*\*(V\d+)\*\* (.*)$")
_INLINE = re.compile(r"\b(V\d+) ")
_CITED = re.compile(r"\bC\d+[a-z]?\b")


def _clean(text: str) -> str:
    return " ".join(text.split()).rstrip(";").strip()


def rules(problem: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """V-id → (the rule as the formulation states it, the constraint ids it cites)."""
    lines = (ROOT / "formulations" / f"{problem}.md").read_text().splitlines()
    found: dict[str, str] = {}
    current: str | None = None
    for line in lines:
        m = _BULLET.match(line)
        if m:
            current = m.group(1)
            found[current] = m.group(2)
        elif current is not None and line.startswith("  ") and line.strip():
            found[current] += " " + line.strip()
        else:
            current = None
    if not found:  # one paragraph: "V1 ...; V2 ...; V3 ..."
        start = next(i for i, line in enumerate(lines) if line.startswith("V1 "))
        para = []
        for line in lines[start:]:
            if not line.strip():
                break
            para.append(line)
        parts = _INLINE.split(" ".join(para))
        for vid, text in zip(parts[1::2], parts[2::2], strict=True):
            found[vid] = text.split("`evaluate`")[0]
    return {
        vid: (_clean(text), tuple(dict.fromkeys(_CITED.findall(text))))
        for vid, text in found.items()
    }


def table() -> dict[str, dict[str, tuple[str, tuple[str, ...]]]]:
    return {p: rules(p) for p in sorted(schedopt.problem_names())}


if __name__ == "__main__":
    import pprint

    pprint.pprint(table(), width=96, sort_dicts=False)
