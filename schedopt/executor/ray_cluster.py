"""Tasks on a Ray cluster: ``make_executor("ray", address=...)`` (the optional extra
``pip install 'schedopt[ray]'``; this module is the only one that imports ``ray``, and only when
an executor is made).

Where: ``address`` (``"ray://head:10001"``, ``"head:6379"``), else the ``RAY_ADDRESS``
environment variable, else a new local cluster on loopback (``127.0.0.1``, no dashboard,
``workers`` CPUs, its session files in a temporary folder removed at close; Ray's token
authentication with a token of its own, held in the environment while it runs, so Ray writes
no ``~/.ray/auth_token``). If this process is
already connected to Ray (``ray.is_initialized()``), that connection is used and left open.
Each task is one call of a ``ray.remote`` function (no retries: a worker that dies gives a
``lost`` result); at the deadline the tasks still running are cancelled with
``ray.cancel(force=True)``, which kills their worker processes. ``close`` shuts Ray down if this
executor started or connected it. On a remote cluster, schedopt must be installed on every node.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from schedopt.executor.base import (
    PoolExecutor,
    Task,
    TaskResult,
    run_task,
    thread_env,
    usable_cores,
)


def _import_ray() -> Any:
    """The ``ray`` module (typed loosely: Ray is an optional extra)."""
    try:
        return importlib.import_module("ray")
    except ImportError as err:
        raise ImportError(
            "the 'ray' executor needs Ray: pip install 'schedopt[ray]' (or 'ray>=2.30,<3')"
        ) from err


#: where Ray looks for a token (its native loader reads the first two; with neither, and no
#: file, a new local cluster writes ~/.ray/auth_token, which would outlive the cluster)
TOKEN_VARS = ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE")


def _own_token() -> bool:
    """Give a new local cluster a token of its own in ``RAY_AUTH_TOKEN``, unless the user set
    Ray's authentication up (a variable or the token file); True if one was set."""
    home_token = os.path.join(os.path.expanduser("~"), ".ray", "auth_token")
    if any(os.environ.get(v) for v in TOKEN_VARS) or os.path.exists(home_token):
        return False
    os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    return True


def _run_on_worker(task: Task) -> TaskResult:
    """What each Ray worker runs: the task, its exception turned into a result."""
    node = _import_ray().get_runtime_context().get_node_id()[:12]
    return dataclasses.replace(run_task(task), worker=f"node {node} pid {os.getpid()}")


class RayExecutor(PoolExecutor):
    """Runs tasks on Ray, at most ``workers`` at a time (default: the cluster's CPUs divided
    by ``threads_per_worker``)."""

    kind = "ray"

    def __init__(
        self,
        workers: int | None = None,
        threads_per_worker: int = 1,
        *,
        address: str | None = None,
    ):
        self._ray = ray = _import_ray()
        super().__init__(workers or 1, threads_per_worker)
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self._started = False
        self._temp_dir: str | None = None
        self._token = False  # RAY_AUTH_TOKEN set by this executor, removed at close
        env = thread_env(threads_per_worker)
        options: dict[str, Any] = {"num_cpus": threads_per_worker, "max_retries": 0}
        if ray.is_initialized():
            options["runtime_env"] = {"env_vars": env}
            self.address = "connected"
        elif self.address:
            ray.init(
                address=self.address,
                runtime_env={"env_vars": env},
                logging_level=logging.WARNING,
            )
            self._started = True
        else:
            self._temp_dir = tempfile.mkdtemp(prefix="schedopt-ray-")
            self._token = _own_token()
            # workers import what this process imports (the same checkout, test modules)
            env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
            try:
                ray.init(
                    address="local",  # never join a cluster someone else runs here
                    num_cpus=(workers or usable_cores()) * threads_per_worker,
                    include_dashboard=False,
                    _node_ip_address="127.0.0.1",
                    _temp_dir=self._temp_dir,
                    runtime_env={"env_vars": env},
                    logging_level=logging.WARNING,
                    log_to_driver=False,
                )
            except BaseException:
                self._forget_token()
                shutil.rmtree(self._temp_dir, ignore_errors=True)
                raise
            self._started = True
            self.address = "local"
        if workers is None:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            self.workers = max(1, cpus // threads_per_worker)
        self._remote = ray.remote(_run_on_worker).options(**options)
        self._refs: dict[Any, tuple[Task, float]] = {}

    def _has_room(self) -> bool:
        return len(self._refs) < self.workers

    def _submit(self, task: Task) -> TaskResult | None:
        try:
            ref = self._remote.remote(task)
        except Exception as err:  # not serialisable
            return TaskResult(task.key, error=f"the task cannot be sent: {err}")
        self._refs[ref] = (task, time.perf_counter())
        return None

    def _running(self) -> int:
        return len(self._refs)

    def _collect(self, timeout: float | None) -> Iterator[TaskResult]:
        ready, _ = self._ray.wait(list(self._refs), num_returns=1, timeout=timeout)
        for ref in ready:
            task, started = self._refs.pop(ref)
            yield self._result(ref, task, time.perf_counter() - started)

    def _stop_running(self) -> Iterator[TaskResult]:
        for ref, (task, started) in list(self._refs.items()):
            self._ray.cancel(ref, force=True)  # kills the worker process
            del self._refs[ref]
            yield TaskResult(task.key, timed_out=True, elapsed_s=time.perf_counter() - started)

    def _result(self, ref: Any, task: Task, elapsed: float) -> TaskResult:
        exceptions = self._ray.exceptions
        try:
            result = self._ray.get(ref)
        except exceptions.RayTaskError as err:  # raised outside run_task (unpickling)
            return TaskResult(task.key, error=f"{type(err.cause).__name__}: {err.cause}")
        except exceptions.RayError as err:  # the worker or its node died
            return TaskResult(
                task.key,
                error=f"WorkerLost: {type(err).__name__}",
                elapsed_s=elapsed,
                lost=True,
            )
        assert isinstance(result, TaskResult)
        return result

    def close(self) -> None:
        if not self.closed and self._started:
            self._ray.shutdown()
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None
        self._forget_token()
        super().close()

    def _forget_token(self) -> None:
        if self._token:
            os.environ.pop("RAY_AUTH_TOKEN", None)
            self._token = False

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "address": self.address, "ray": self._ray.__version__}


__all__ = ["RayExecutor"]
