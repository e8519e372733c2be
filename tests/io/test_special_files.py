"""Only regular files are read, by every loader (instances, solutions, traces, the Alibaba node
list, tuned parameters): a FIFO that nobody writes to blocked ``open()`` forever in ``solve``,
``info``, ``export`` and ``validate``, and one with a writer streaming junk was read to the cap
(#16). Each is refused before a byte is read, naming the file and what it is."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import schedopt
from schedopt.io import traces
from schedopt.topology.alibaba import alibaba_nodes_spec

from .threads import in_thread

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "instances" / "admission" / "example.json"


def _tuned(path: Path) -> object:
    from schedopt.problems.admission import generate_custom

    inst = generate_custom(hosts=1, jobs=4, slots=3, seed=0)
    return schedopt.solve(inst, "heuristic:edf", tuned=path)


LOADERS: dict[str, Callable[[Path], object]] = {
    "instance": schedopt.load,
    "solution": lambda p: schedopt.load_solution(schedopt.load(EXAMPLE), p),
    "philly": traces.load_philly_chronus,
    "elasticflow": traces.load_elasticflow,
    "gavel_throughputs": traces.load_gavel_throughputs,
    "gavel_trace": traces.load_gavel_trace,
    "astraea": traces.load_astraea_shares,
    "infinitehbd": traces.load_infinitehbd_faults,
    "routing_counts": traces.load_routing_counts,
    "olmoe": traces.load_olmoe_counts,
    "alibaba": alibaba_nodes_spec,
    "tuned": _tuned,
}


def _refused(box: dict, path: Path, kind: str) -> None:
    err = box.get("error")
    assert isinstance(err, schedopt.InvalidInstanceError), box
    assert str(path) in str(err) and kind in str(err), err


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_a_fifo_nobody_writes_to_is_refused(name: str, tmp_path: Path) -> None:
    fifo = tmp_path / "silent.json"
    os.mkfifo(fifo)
    _refused(in_thread(lambda: LOADERS[name](fifo), timeout_s=10), fifo, "FIFO")


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_a_directory_and_a_device_are_refused(name: str, tmp_path: Path) -> None:
    _refused(in_thread(lambda: LOADERS[name](tmp_path), timeout_s=10), tmp_path, "directory")
    if os.path.exists("/dev/zero"):
        zero = Path("/dev/zero")
        _refused(in_thread(lambda: LOADERS[name](zero), timeout_s=10), zero, "device")


def test_a_fifo_with_a_writer_streaming_junk_is_refused_unread(tmp_path: Path) -> None:
    fifo = tmp_path / "junk.json"
    os.mkfifo(fifo)
    stop, written = threading.Event(), []

    def writer() -> None:
        try:
            with open(fifo, "wb") as f:
                while not stop.is_set():
                    written.append(f.write(b"\x00" * 65536))
        except OSError:  # the reader closed the pipe
            pass

    threading.Thread(target=writer, daemon=True).start()
    try:
        _refused(in_thread(lambda: schedopt.load(fifo), timeout_s=10), fifo, "FIFO")
    finally:
        stop.set()
        # a reader that never blocks, so that a writer still waiting in open() goes on and ends
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))


@pytest.mark.parametrize("command", ["solve", "info", "export", "validate-instance", "validate"])
def test_the_cli_answers_a_silent_fifo_as_bad_input(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from schedopt.cli import main

    fifo = tmp_path / "silent.json"
    os.mkfifo(fifo)
    solved = tmp_path / "sol.json"
    argv = {
        "solve": ["solve", str(fifo)],
        "info": ["info", str(fifo)],
        "export": ["export", "--format", "mps", "--out", str(tmp_path / "m.mps"), str(fifo)],
        "validate-instance": ["validate", str(fifo), str(solved)],
        "validate": ["validate", str(EXAMPLE), str(fifo)],
    }[command]
    box = in_thread(lambda: main(argv), timeout_s=30)
    assert box.get("value") == 3, box  # the CLI's exit code for bad input
    assert "FIFO" in capsys.readouterr().err
