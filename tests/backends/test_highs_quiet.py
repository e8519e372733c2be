"""HiGHS writes nothing to stdout from schedopt (the CLI's ``--json`` output must parse)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import schedopt

_THREADS_FIRST = """
import threading
from schedopt.backends.highs_quiet import quiet_highs

start = threading.Barrier(4)

def make():
    start.wait()
    quiet_highs().run()

threads = [threading.Thread(target=make) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
quiet_highs()
"""


def test_the_first_highs_made_in_racing_threads_prints_no_banner():
    # four threads make the process's first HiGHS at once: without the lock one of them
    # gets past the mute before the muted instance exists and HiGHS prints its banner
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", _THREADS_FIRST], capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout == ""


def test_every_highs_in_the_package_comes_from_quiet_highs():
    root = pathlib.Path(schedopt.__file__).parent
    makers = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "Highs()" in p.read_text() and p.name != "highs_quiet.py"
    ]
    assert makers == []
