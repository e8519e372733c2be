"""Suite-wide settings: the ``slow`` stage, hypothesis profiles, the machine's slowdown.

``python -m pytest -q`` runs the fast stage (``-m "not slow"`` is in pyproject's addopts),
``python -m pytest -q -m slow`` the tests marked ``@pytest.mark.slow`` (more than about 3 s, or
the time limit at the largest sizes); CI runs both. tests/README.md says how to mark a test and
how a test of the time limit (``tests/timing.py``) or of a proof treats time.
"""

from __future__ import annotations

import os
import signal

import pytest
from hypothesis import settings

from tests import timing

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Ctrl-C as in a terminal, whatever started the suite: a job started in the background of a
# non-interactive shell (`cmd &`, nohup) inherits SIGINT ignored, and so would every
# interpreter the tests of Ctrl-C start (tests/backends/test_ctrl_c_during_search.py and the
# signalled solves): they would prove nothing and fail. A handler of our own, unlike "ignore",
# is not inherited across exec, so the children start with Python's KeyboardInterrupt too.
signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_report_header(config: pytest.Config) -> str:
    return f"machine slowdown: {timing.slowdown():.1f}x a quiet run (tests/timing.py)"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # A stage that its marker expression leaves empty (``-m slow`` with no slow test) passes.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    deselected = reporter is not None and reporter.stats.get("deselected")
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and deselected:
        session.exitstatus = pytest.ExitCode.OK
