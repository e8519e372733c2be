"""``schedopt solve`` stopped by SIGTERM (a scheduler's shutdown, ``kill``) cleans up as on
Ctrl-C: the child it runs is stopped, its temporary files are removed, and it exits with
128 + 15 saying so, instead of dying where it stood (#17: a CBC run's directory with the model
was left behind, and a CBC quiet in a long phase outlived the command)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.executor import procs

pytestmark = [
    pytest.mark.slow,  # the command starts, loads and launches its CBC: 2-6 s at load 10
    pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc"),
]

ROOT = Path(__file__).parents[1]
SHIPPED = ROOT / "instances" / "admission" / "small-s0.json"

#: The command line in a process of its own, its CBC a stand-in that sleeps without a word
#: (as CBC does in a long phase), so the run is still going when the signal comes.
CLI_PROCESS = textwrap.dedent(
    f"""
    import sys
    sys.path.insert(0, {str(ROOT)!r})
    from pathlib import Path
    import pytest
    from tests.backends import fake_cbc
    from schedopt.cli import main
    with pytest.MonkeyPatch.context() as mp:
        fake_cbc.install(mp, Path(sys.argv[1]), "sleep")
        sys.exit(main(["solve", {str(SHIPPED)!r}, "--method", "milp:cbc", "--time-limit", "60"]))
    """
)


def test_sigterm_stops_cbc_removes_its_files_and_exits_cleanly(tmp_path: Path) -> None:
    private = tmp_path / "tmp"
    private.mkdir()
    env = {**os.environ, "TMPDIR": str(private)}
    cli = subprocess.Popen(
        [sys.executable, "-c", CLI_PROCESS, str(tmp_path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    children: set[int] = set()
    try:
        until = time.monotonic() + 60
        while not children:  # wait until CBC runs (its run directory is written by then)
            assert cli.poll() is None and time.monotonic() < until
            time.sleep(0.05)
            children = procs.descendants(cli.pid)
        cli.send_signal(signal.SIGTERM)
        code = cli.wait(timeout=30)
        err = cli.stderr.read().decode() if cli.stderr else ""
        assert code == 128 + signal.SIGTERM, (code, err)  # exited, not killed where it stood
        assert "terminated" in err
        assert not procs.wait_gone(children, 5.0)  # CBC stopped by the command itself
        assert list(private.iterdir()) == []  # the run directory removed
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
        for pid in children:  # a CBC the command left running (ours to stop)
            if procs.alive(pid):
                os.kill(pid, signal.SIGKILL)
