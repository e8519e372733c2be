"""The examples in README.md and docs/*.md run, so that they cannot drift from the code (#16).

Every fenced ``python`` block runs in a fresh namespace; every ``bash`` block whose first line
starts with ``schedopt`` runs command by command (``&&`` chains, a ``| jq`` tail dropped, ``>``
redirections written); in a transcript block (no language) every ``$ schedopt ...`` line runs,
and where its printed heading claims a proof (``· OPTIMAL``, ``· INFEASIBLE``) the command must
reach the same proof. Proofs are given all the time they need (a proof returns when found);
every other solve gets at most :data:`CAP_S` seconds, and figures that depend on time are not
asserted (the docs do not promise them).

The blocks of one document run in order, in one working directory that shows the repository
root's files (symbolic links), so that files an example writes stay out of the repository.
Markers, in an HTML comment on the line before a fence:

- ``<!-- docs-test: skip (reason) -->``: the block cannot run here (``pip install``, a file of
  the reader's own);
- ``<!-- docs-test: continue -->``: a python block that goes on in the previous block's
  namespace.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import schedopt
from schedopt.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
#: Seconds every solve that proves nothing the doc states may take.
CAP_S = 5.0
#: Seconds a solve whose proof a doc states may take (it returns as soon as it has the proof).
PROOF_S = 300.0
SKIP, CONTINUE = "<!-- docs-test: skip", "<!-- docs-test: continue -->"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
PROOFS = ("OPTIMAL", "INFEASIBLE")

pytestmark = pytest.mark.slow


@dataclasses.dataclass(frozen=True)
class Block:
    doc: str
    line: int
    lang: str
    body: str
    marker: str  # the comment on the line before the fence, or ""

    @property
    def skipped(self) -> bool:
        return self.marker.startswith(SKIP)

    @property
    def continues(self) -> bool:
        return self.marker.startswith(CONTINUE)


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        marker = before if before.startswith("<!--") else ""
        line = text.count("\n", 0, m.start()) + 1
        out.append(Block(path.name, line, m.group(1), m.group(2), marker))
    return out


def _joined(body: str) -> list[str]:
    """The block's lines, with backslash continuations joined."""
    return body.replace("\\\n", " ").splitlines()


@dataclasses.dataclass(frozen=True)
class Command:
    argv: list[str]
    #: Where ``>`` sends stdout, or None.
    out: str | None = None
    #: The proof the doc prints for it ("OPTIMAL", "INFEASIBLE"), or None.
    claims: str | None = None


def _parse(line: str, claims: str | None = None) -> list[Command]:
    tokens = shlex.split(line, comments=True)
    commands, current = [], []
    for tok in [*tokens, "&&"]:
        if tok != "&&":
            current.append(tok)
            continue
        if "|" in current:  # `| jq ...`, `| head`: the reader's own tools
            current = current[: current.index("|")]
        out = None
        if ">" in current:
            at = current.index(">")
            out, current = current[at + 1], current[:at]
        if current and current[0] == "schedopt":
            commands.append(Command(current[1:], out, claims))
        current = []
    return commands


def commands(block: Block) -> list[Command]:
    lines = _joined(block.body)
    if block.lang == "bash":
        if not lines or not lines[0].startswith("schedopt"):
            return []
        return [c for line in lines for c in _parse(line)]
    out = []
    for k, line in enumerate(lines):
        if line.startswith("$ schedopt"):
            heading = lines[k + 1] if k + 1 < len(lines) else ""
            claims = next((p for p in PROOFS if f"· {p}" in heading), None)
            out += _parse(line[2:], claims)
    return out


def _limited(cmd: Command) -> list[str]:
    """The command with a time limit: the doc's, at most CAP_S, unless it states a proof."""
    argv = list(cmd.argv)
    if argv[:1] != ["solve"]:
        return argv
    limit = PROOF_S if cmd.claims else CAP_S
    if "--time-limit" in argv:
        at = argv.index("--time-limit") + 1
        argv[at] = str(limit if cmd.claims else min(float(argv[at]), CAP_S))
    else:
        argv += ["--time-limit", str(limit)]
    return argv


def _capped_solve(real: Any) -> Any:
    def solve(instance: Any, method: str = "auto", **kwargs: Any) -> Any:
        kwargs["time_limit_s"] = min(kwargs.get("time_limit_s", CAP_S), CAP_S)
        options = kwargs.get("options")
        if options is not None:
            kwargs["options"] = dataclasses.replace(
                options, time_limit_s=min(options.time_limit_s, CAP_S)
            )
        return real(instance, method, **kwargs)

    return solve


@contextlib.contextmanager
def _root_view(tmp: Path) -> Iterator[Path]:
    """A directory showing the repository root's entries (links), to run a document in."""
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (tmp / entry.name).symlink_to(entry)
    yield tmp


def _run_command(cmd: Command, capsys: pytest.CaptureFixture[str], where: str) -> None:
    argv = _limited(cmd)
    code = main(argv)
    out, err = capsys.readouterr()
    if cmd.out is not None:
        Path(cmd.out).write_text(out)
    allowed = {0} if argv[0] != "solve" else {0, 5}  # 5: no solution in the capped time
    if cmd.claims == "INFEASIBLE":
        allowed = {4}
    assert code in allowed, f"{where}: schedopt {' '.join(argv)} exited {code}\n{err}"
    if cmd.claims:
        assert f"· {cmd.claims}" in out, f"{where}: the doc says {cmd.claims}\n{out}"


def _documents() -> list[Any]:
    return [pytest.param(p, id=p.name) for p in DOCS]


def test_every_document_is_collected() -> None:
    found = [b for p in DOCS for b in blocks(p)]
    assert {"README.md", "worked-example.md", "reconfig-example.md"} <= {b.doc for b in found}
    assert sum(len(commands(b)) for b in found) >= 10  # the shell examples are recognised


@pytest.mark.parametrize("doc", _documents())
def test_the_examples_run(
    doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    capped = _capped_solve(schedopt.solve)
    namespace: dict[str, Any] = {}
    ran = 0
    with _root_view(tmp_path) as cwd:
        monkeypatch.chdir(cwd)
        for block in blocks(doc):
            where = f"{block.doc}:{block.line}"
            if block.skipped:
                continue
            if block.lang == "python":
                if not block.continues:
                    namespace = {"__name__": f"docs_{doc.stem}"}
                with monkeypatch.context() as m, contextlib.redirect_stdout(io.StringIO()):
                    m.setattr(schedopt, "solve", capped)  # the python examples' solves only
                    exec(compile(block.body, where, "exec"), namespace)
                ran += 1
            elif block.lang in ("bash", ""):
                for cmd in commands(block):
                    _run_command(cmd, capsys, where)
                    ran += 1
    assert ran or not any(b.lang in ("python", "bash") for b in blocks(doc))
