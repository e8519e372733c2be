"""``schedopt solve``'s steps that cannot be interrupted on a busy machine (#17): the first
imports of the file functions (pydantic) and of CP-SAT are refused before they start when they
would not end in the time left, with an honest exit 5 and a message; and the process ends
without the interpreter's teardown (0.24 CPU s after a CP-SAT solve, 7.6-8.8 s of wall beside 4
CPU burners). Each command runs in a fresh process, as the ``schedopt`` script does, with the
gates' slowdown injected (``schedopt.core.gates.gate_slowdown``): nothing depends on speed but
the promise's own margin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from schedopt.cli import EXIT_NO_SOLUTION, EXIT_OK
from schedopt.cli.ending import can_end_at_once
from tests.timing import promised_s

EXAMPLE = Path(__file__).resolve().parents[1] / "instances" / "admission" / "example.json"

#: The ``schedopt`` script, the gates' slowdown made ``sys.argv[1]`` (0: measured), and a
#: teardown that takes ``sys.argv[2]`` seconds (an object whose ``__del__`` runs when the
#: interpreter clears ``__main__``); what the process imported is said by an ``atexit`` handler.
COMMAND = """\
import atexit, sys, time
from schedopt.core import gates
slower, teardown_s = float(sys.argv.pop(1)), float(sys.argv.pop(1))
if slower:
    gates.gate_slowdown = lambda: slower
class Teardown:
    def __del__(self):
        time.sleep(teardown_s)
        sys.stderr.write("torn down\\n")
TEARDOWN = Teardown()
atexit.register(lambda: sys.stderr.write(
    f"atexit ran; pydantic {'pydantic' in sys.modules}; ortools {'ortools' in sys.modules}\\n"))
from schedopt.cli import main
sys.exit(main())
"""

#: ``schedopt.solve(instance, "cpsat")`` once the instance is loaded, the gates' slowdown then
#: made 1,000: the CP-SAT import would take 350 s.
CPSAT_REFUSED = """\
import json, sys
import schedopt
from schedopt.core import gates
inst = schedopt.load(sys.argv[1])
gates.gate_slowdown = lambda: 1000.0
result = schedopt.solve(inst, "cpsat", time_limit_s=5)
print(json.dumps({"status": result.status.value, "explanation": result.explanation,
                  "ortools": "ortools" in sys.modules}))
"""


def _run(script: str, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, timeout=300
    )
    return done, time.perf_counter() - started


def test_the_file_functions_import_is_refused_when_it_would_not_end_in_time() -> None:
    """At 1,000× pydantic's import (0.15 s quiet) does not fit 5 s: exit 5, said, and pydantic
    never imported (main imported it ungated: 2.3-3.6 s beside 4 burners)."""
    args = (str(EXAMPLE), "--time-limit", "5", "--method", "heuristic:edf", "--json")
    done, _ = _run(COMMAND, "1000", "0", "solve", *args)
    assert done.returncode == EXIT_NO_SOLUTION, done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "no_solution"
    assert "example.json was not loaded: the file functions (pydantic)" in doc["explanation"]
    assert "takes about 150.0 s to import" in doc["explanation"]
    assert "pydantic False" in done.stderr


def test_cpsats_import_is_refused_when_it_would_not_end_in_time() -> None:
    """An exact CP-SAT solve whose solver's first import does not fit: NO_SOLUTION, said, and
    OR-Tools never imported (main imported it ungated inside the solve: 8-11 s beside 4
    burners, past a 10 s limit)."""
    done, _ = _run(CPSAT_REFUSED, str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout.splitlines()[-1])
    assert doc["status"] == "no_solution"
    assert "the CP-SAT solver takes about 350.0 s to import" in doc["explanation"]
    assert doc["ortools"] is False


def test_the_command_ends_without_the_interpreters_teardown() -> None:
    """A teardown that takes 3 s (as 0.24 CPU s does at a thirtieth of a core) is not waited
    for: the command ends within its promise from the spawn, its output whole and its
    ``atexit`` handlers run."""
    args = (str(EXAMPLE), "--time-limit", "2", "--method", "heuristic:edf", "--json")
    done, wall_s = _run(COMMAND, "0", "3", "solve", *args)
    status = json.loads(done.stdout)["status"]  # on a busy machine, maybe no solution in time
    assert done.returncode == (EXIT_OK if status in ("optimal", "feasible") else EXIT_NO_SOLUTION)
    assert "atexit ran" in done.stderr
    assert "torn down" not in done.stderr
    assert wall_s <= promised_s(2.0)


def test_a_process_with_other_threads_ends_the_ordinary_way() -> None:
    """A thread still running: Python's own exit waits for it, so the process is not ended
    under it."""
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert not can_end_at_once()
    finally:
        release.set()
        thread.join()
