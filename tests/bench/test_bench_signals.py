"""``schedopt bench`` stopped by SIGTERM or Ctrl-C leaves no worker running, exits, and keeps
the rows written so far."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.executor import procs

pytestmark = pytest.mark.slow  # the command and two workers start: 6-12 s each


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_bench_stopped_by_a_signal_leaves_no_worker(sig, tmp_path):
    out = tmp_path / "rows.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "schedopt",
            "bench",
            "admission-contested",
            "--methods",
            "cpsat",
            "--time-limits",
            "60",
            "--executor",
            "process",
            "--jobs",
            "2",
            "--out",
            str(out),
            "--no-report",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        until = time.monotonic() + 60
        workers: set[int] = set()
        while len(workers) < 2 and time.monotonic() < until:  # both workers are solving
            time.sleep(0.5)
            workers = procs.descendants(cli.pid)
        assert len(workers) >= 2
        time.sleep(2.0)
        cli.send_signal(sig)
        code = cli.wait(timeout=30)
        assert code != 0
        assert not procs.wait_gone(workers, 5.0)
        assert procs.descendants(cli.pid) == set()
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
