"""A reader of stdout that stops early (``schedopt ... | head``) leaves the command's exit code
as it is, with no traceback (#16 item 14)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from schedopt.cli import EXIT_INFEASIBLE, EXIT_OK, main
from tests.timing import PROOF_LIMIT_S

#: The exit codes kept are a proof's (OPTIMAL, INFEASIBLE): a limit no machine reaches (#17).
PROOF = f"{PROOF_LIMIT_S:g}"

ROOT = Path(__file__).resolve().parents[1]
ADMISSION = ROOT / "instances" / "admission"


class _GoneReader(io.StringIO):
    """A stdout whose reader has gone after ``keep`` characters."""

    def __init__(self, keep: int = 0):
        super().__init__()
        self.keep = keep

    def write(self, text: str) -> int:
        if self.tell() + len(text) > self.keep:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)

    def fileno(self) -> int:
        raise io.UnsupportedOperation("no descriptor")


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["solve", str(ADMISSION / "example.json"), "--time-limit", PROOF], EXIT_OK),
        (
            ["solve", str(ADMISSION / "infeasible-admitted.json"), "--time-limit", PROOF],
            EXIT_INFEASIBLE,
        ),
        (["solve", str(ADMISSION / "example.json"), "--time-limit", PROOF, "--json"], EXIT_OK),
        (["methods"], EXIT_OK),
        (["schema", "admission"], EXIT_OK),
    ],
)
def test_a_broken_pipe_keeps_the_exit_code(monkeypatch, capsys, argv, code) -> None:
    monkeypatch.setattr(sys, "stdout", _GoneReader(keep=40))
    assert main(argv) == code
    assert "Traceback" not in capsys.readouterr().err


def test_a_reader_gone_on_a_real_pipe() -> None:
    """The reader closes the pipe before the command writes (before this, exit 1). The exit
    code it keeps is a proof's (INFEASIBLE), so the limit is one no machine reaches: at 3 s a
    load of 12 ran the limit out while loading the file (exit 5, #17)."""
    file = ADMISSION / "infeasible-admitted.json"
    argv = [sys.executable, "-m", "schedopt", "solve", str(file), "--time-limit", PROOF]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as p:
        assert p.stdout is not None and p.stderr is not None
        p.stdout.close()  # the reader goes away, as head does
        err = p.stderr.read().decode()
        assert p.wait() == EXIT_INFEASIBLE, err
    assert "Traceback" not in err and "Broken pipe" not in err
