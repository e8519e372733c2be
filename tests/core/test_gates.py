"""The gates before an import (schedopt.core.gates): the estimate is the import's quiet CPU
seconds times the slowdown, that slowdown read from the scheduler's accounts of a young thread's
whole life (else the probe), and an import that would not end in the time left is refused before
it starts (#17). The slowdown is injected: no test here depends on the machine's speed."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from schedopt.core import gates
from schedopt.core.stopping import Deadline, DeadlineReached


def _accounts(monkeypatch: pytest.MonkeyPatch, age_s: float, on_cpu: float, waiting: float):
    """The thread started ``age_s`` ago and has been on a CPU and waiting for one so long."""
    monkeypatch.setattr(gates, "started_ago", lambda path: age_s)
    monkeypatch.setattr(gates, "thread_cpu_times", lambda: (1, on_cpu, waiting))


def _probe(monkeypatch: pytest.MonkeyPatch, value: float) -> list[float]:
    """The probe made to read ``value``; the list records each cap it was called with."""
    caps: list[float] = []

    def probe(cpu_s: float = 0.03, cap: float = 3.0) -> float:
        caps.append(cap)
        return min(cap, value)

    monkeypatch.setattr(gates, "cpu_share_slowdown", probe)
    return caps


def test_a_young_thread_is_measured_over_its_life(monkeypatch: pytest.MonkeyPatch) -> None:
    # 0.2 s on a CPU and 5.8 s waiting for one: 30 times slower than alone (beside 4 burners,
    # load 5-8, the command's start-up read 25-29×); no probe is run for it
    _accounts(monkeypatch, age_s=6.0, on_cpu=0.2, waiting=5.8)
    caps = _probe(monkeypatch, 1.0)
    assert gates.life_slowdown() == pytest.approx(30.0)
    assert gates.gate_slowdown() == pytest.approx(30.0)
    assert not caps


def test_an_old_thread_or_no_accounts_asks_the_probe_uncapped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caps = _probe(monkeypatch, 12.0)
    _accounts(monkeypatch, age_s=gates.HISTORY_S + 1, on_cpu=0.2, waiting=5.8)
    assert gates.life_slowdown() is None
    assert gates.gate_slowdown() == 12.0  # beyond the reserves' 3× cap
    monkeypatch.setattr(gates, "thread_cpu_times", lambda: None)  # no /proc
    monkeypatch.setattr(gates, "started_ago", lambda path: 1.0)
    assert gates.gate_slowdown() == 12.0
    assert caps and all(cap == float("inf") for cap in caps)


def test_a_thread_that_has_hardly_run_measures_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    _accounts(monkeypatch, age_s=0.5, on_cpu=0.001, waiting=0.01)
    assert gates.life_slowdown() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_a_new_threads_accounts_are_read() -> None:
    """A thread started now is young, and its life's slowdown, once it has run, is a ratio."""
    out: list[float | None] = []

    def run() -> None:
        ago = gates.started_ago("/proc/thread-self/stat")
        acc = 0
        for i in range(2_000_000):  # about 0.1 s of CPU quiet
            acc += i
        out.extend([ago, gates.life_slowdown()])

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    ago, life = out
    assert ago is not None and 0.0 <= ago < gates.HISTORY_S
    assert life is None or life >= 1.0


@pytest.fixture
def fresh_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module that no one has imported yet."""
    name = f"gate_fresh_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text("IMPORTED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


@pytest.mark.parametrize(("slower", "refused"), [(10.0, True), (4.0, False)])
def test_an_import_that_would_not_end_in_time_is_refused_before_it_starts(
    slower: float, refused: bool, fresh_module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 0.5 s quiet against 3.5 s left: in time at 4× (2 s), not at 10× (5 s)
    monkeypatch.setattr(gates, "gate_slowdown", lambda: slower)
    deadline = Deadline.after(3.5)
    if refused:
        with pytest.raises(DeadlineReached, match=r"the thing takes about 5\.0 s to import"):
            gates.import_in_time(fresh_module, 0.5, deadline, "the thing")
        assert fresh_module not in sys.modules
    else:
        assert gates.import_in_time(fresh_module, 0.5, deadline, "the thing").IMPORTED


def test_an_imported_module_or_no_deadline_measures_nothing(
    fresh_module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def measured() -> float:
        raise AssertionError("the slowdown was measured")

    monkeypatch.setattr(gates, "gate_slowdown", measured)
    assert gates.import_in_time(fresh_module, 1e6, None, "the thing").IMPORTED
    assert gates.import_in_time(fresh_module, 1e6, Deadline.after(0.0), "the thing").IMPORTED


def test_the_first_import_gate_has_no_deadline_in_deterministic_mode() -> None:
    # deterministic mode: the run must not depend on the wall clock, so no first import is
    # refused by it; otherwise the caller's deadline is the gate's, unchanged
    deadline = Deadline.after(5.0)
    assert gates.first_import_deadline(deadline, deterministic=False) is deadline
    assert gates.first_import_deadline(deadline, deterministic=True) is None
    assert gates.first_import_deadline(None, deterministic=False) is None
