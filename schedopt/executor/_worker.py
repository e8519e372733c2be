"""The loop of one worker process of the ``"process"`` executor (``python -m
schedopt.executor._worker FD``): receive a pickled :class:`~schedopt.executor.base.Task` on the
socket ``FD``, run it, send the :class:`~schedopt.executor.base.TaskResult` back; exit when
the parent says so (``None``), closes the socket, or dies.

The parent starts the worker in a session of its own (so a Ctrl-C at the terminal reaches the
parent only, which then stops the workers) with the thread caps of
:func:`~schedopt.executor.base.thread_env` already in its environment, before any numeric
library is imported. A watchdog thread ends the worker's whole process group when the parent
disappears (killed with SIGKILL, so it could not clean up).
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection

from schedopt.executor.base import Task, TaskResult, run_task

#: How often the watchdog checks that the parent is still there.
_WATCH_S = 0.5


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(_WATCH_S)
        if os.getppid() != parent:  # re-parented: the pool's process is gone
            os.killpg(os.getpgrp(), signal.SIGKILL)


def _run_one(key: str, payload: bytes) -> TaskResult:
    where = f"pid {os.getpid()}"
    try:
        task = pickle.loads(payload)
        if not isinstance(task, Task):
            raise TypeError(f"expected a Task, got {type(task).__name__}")
    except Exception as err:  # e.g. the task's function is not importable here
        return TaskResult(key, error=f"{type(err).__name__}: {err}", worker=where)
    return dataclasses.replace(run_task(task), worker=where)


def main(fd: int, parent: int) -> None:
    conn = Connection(fd)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        key, payload = message
        result = _run_one(key, payload)
        try:
            conn.send(result)
        except (pickle.PicklingError, TypeError, AttributeError) as err:
            conn.send(
                dataclasses.replace(
                    result, value=None, error=f"the result cannot be pickled: {err}"
                )
            )
        except (BrokenPipeError, OSError):
            return


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
