"""Ctrl-C during a solver's search reaches ``solve()``'s caller at once (#17), on CP-SAT and on
HiGHS. Before: CP-SAT caught SIGINT itself (``catch_sigint_signal``) and the solve went on to
its limit; HiGHS dropped the KeyboardInterrupt raised inside schedopt's Python callbacks (its
deadline checks) and the solve returned as if nothing had happened (backends/cpsat.py,
backends/highs_signals.py; benchmarks/RESULTS.md, "The promises at the papers' scale")."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.timing import promised_s

ROOT = Path(__file__).parents[2]

#: argv[1]: the method. Exit 0: the KeyboardInterrupt reached the caller (it prints the seconds
#: from the Ctrl-C); 2: the solve returned after the Ctrl-C as if nothing had happened; 3: it
#: returned before the Ctrl-C was sent (the test proved nothing).
DURING = textwrap.dedent(
    f"""
    import os, signal, sys, threading, time
    sys.path.insert(0, {str(ROOT)!r})
    import schedopt
    from schedopt.problems.admission import generate_custom
    method = sys.argv[1]
    inst = generate_custom(hosts=8, jobs=200, slots=12, seed=0)  # contested: no quick proof
    sent = []

    def interrupt():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    def on_progress(event):  # Ctrl-C 0.2 s after the first incumbent: mid-search
        if event.method == method and event.incumbent is not None and not sent:
            threading.Timer(0.2, interrupt).start()
            sent.append(-1.0)

    try:
        schedopt.solve(inst, method, time_limit_s=30, on_progress=on_progress)
    except KeyboardInterrupt:
        print(time.perf_counter() - sent[-1])
        sys.exit(0)
    sys.exit(2 if len(sent) == 2 else 3)
    """
)


@pytest.mark.slow  # the contested model is built and searched: 2-13 s at load 12
@pytest.mark.parametrize("method", ["cpsat", "milp:highs"])
def test_ctrl_c_during_a_search_reaches_the_caller_at_once(method: str) -> None:
    run = subprocess.run(
        [sys.executable, "-c", DURING, method],
        timeout=120,
        check=False,
        capture_output=True,
        text=True,
    )
    assert run.returncode != 3, "the solve ended before the Ctrl-C: the test proved nothing"
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])  # 2: the solve went on
    # at once, not when the search reaches its limit (the 30 s): CP-SAT 0.08 s at load 12
    assert float(run.stdout) <= promised_s(0.0), run.stdout
