"""The child process of :func:`schedopt.integrations.gavel_sim.simulate`: reads the request
(JSON on stdin), runs Gavel's simulator once and writes the result file. Gavel's directory
goes on ``sys.path`` here only, never in the caller's process."""

from __future__ import annotations

import argparse
import copy
import importlib
import importlib.util
import json
import logging
import math
import sys
import time
import traceback
import types
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

from .gavel_sim import OBJECTIVES, POLICIES, check_allocation, objective

#: modules Gavel's simulator imports but, in simulation, never uses (its ``runtime``
#: package holds the gRPC servers and clients of the physical cluster)
_UNUSED_IN_SIMULATION = ("psutil", "matrix_completion", "grpc")


def _stand_in_for_unused_modules() -> list[str]:
    """Empty modules for those of :data:`_UNUSED_IN_SIMULATION` that cannot be imported
    (without gRPC, an empty ``runtime.rpc`` with the two modules ``scheduler.py`` names)."""
    stood_in = []
    for name in _UNUSED_IN_SIMULATION:
        try:
            importlib.import_module(name)
        except ImportError:
            stood_in.append(name)
    for name in stood_in:
        if name != "grpc":
            sys.modules[name] = types.ModuleType(name)
    if "grpc" in stood_in:
        runtime, rpc = types.ModuleType("runtime"), types.ModuleType("runtime.rpc")
        for sub in ("scheduler_server", "scheduler_client"):
            setattr(rpc, sub, types.ModuleType(f"runtime.rpc.{sub}"))
        runtime.rpc = rpc  # type: ignore[attr-defined]
        sys.modules.update({"runtime": runtime, "runtime.rpc": rpc})
        stood_in[stood_in.index("grpc")] = "runtime (grpc)"
    return stood_in


class Recorder:
    """Wraps the policy Gavel's scheduler calls: times each round, checks its allocation with
    :func:`check_allocation`, and turns an exception into a recorded failed round answered
    with the previous allocation (for the jobs still there)."""

    def __init__(self, policy: Any, shadow: Any = None, policy_name: str = ""):
        self.policy, self.shadow, self.policy_name = policy, shadow, policy_name
        self.objectives: list[tuple[int, float, float]] = []
        self.name = policy.name  # Gavel's scheduler picks arguments and packing by it
        self.policy_s: list[float] = []
        self.failed: list[tuple[int, str]] = []
        self.invalid: list[tuple[int, str, int]] = []
        self._previous: Mapping[Hashable, Mapping[str, float]] = {}

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.policy, attr)

    def get_allocation(self, *args: Any, **kwargs: Any) -> Any:
        throughputs, scale_factors = args[0], args[1]
        cluster_spec = kwargs.get("cluster_spec", args[-1])
        r = len(self.policy_s)
        start = time.perf_counter()
        try:
            out = self.policy.get_allocation(*args, **kwargs)
        except Exception as exc:
            self.policy_s.append(time.perf_counter() - start)
            self.failed.append((r, f"{type(exc).__name__}: {exc}"))
            before = self._previous
            out = {
                k: {w: float(before.get(k, {}).get(w, 0.0)) for w in throughputs[k]}
                for k in throughputs
            }
        else:
            self.policy_s.append(time.perf_counter() - start)
            bad = check_allocation(out, throughputs, scale_factors, cluster_spec)
            if bad:
                self.invalid.append((r, bad[0], len(bad)))
            if self.shadow is not None and throughputs:
                theirs = self.shadow.get_allocation(*copy.deepcopy(args), **copy.deepcopy(kwargs))
                self.objectives.append((r, self._value(out, args), self._value(theirs, args)))
        self._previous = out or {}
        return out

    def _value(self, allocation: Any, args: tuple[Any, ...]) -> float:
        """Gavel's objective of an allocation; the arguments as Gavel's scheduler passes them
        (scheduler.py, ``_compute_allocation``)."""
        throughputs, scale_factors, third, cluster_spec = args[0], args[1], args[2], args[-1]
        if self.policy_name == "min_total_duration_perf":
            return objective(
                self.policy_name,
                allocation,
                throughputs,
                scale_factors,
                cluster_spec,
                num_steps_remaining=third,
            )
        weights = third if self.policy_name.startswith("max_min") else None
        return objective(
            self.policy_name,
            allocation,
            throughputs,
            scale_factors,
            cluster_spec,
            priority_weights=weights,
        )


def _policy(req: dict[str, Any], gavel_utils: Any) -> Any:
    name, system, seed = req["policy"], req["system"], req["seed"]
    if system == "gavel":
        return gavel_utils.get_policy(name, solver="ECOS", seed=seed)
    from . import gavel

    attr, how = POLICIES[name]
    cls = getattr(gavel, attr)
    kwargs = dict(req["policy_kwargs"])
    if how == "solver":
        return cls("ECOS", **kwargs)
    if how == "seed":
        return cls(seed=seed, **kwargs)
    return cls(**kwargs)


def _trace(req: dict[str, Any], gavel_dir: Path) -> Path:
    """Gavel's ``generate_trace.py`` with its defaults but the job count and seed."""
    spec = importlib.util.spec_from_file_location(
        "gavel_generate_trace", gavel_dir / "scripts/utils/generate_trace.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = Path(req["work_dir"]) / "trace.txt"
    module.main(
        argparse.Namespace(
            num_jobs=req["num_jobs"],
            lam=0.0,
            seed=req["seed"],
            throughputs_file=str(gavel_dir / "simulation_throughputs.json"),
            min_duration=1.0,
            max_duration=4.0,
            num_durations=4,
            generate_multi_gpu_jobs=req["multi_gpu"],
            generate_multi_priority_jobs=False,
            output_file=str(path),
        )
    )
    return path


def run(req: dict[str, Any]) -> dict[str, Any]:
    gavel_dir = Path(req["gavel_dir"])
    stood_in = _stand_in_for_unused_modules()
    sys.path.insert(0, str(gavel_dir))
    gavel_utils = importlib.import_module("utils")
    scheduler = importlib.import_module("scheduler")
    jobs, arrival_times = gavel_utils.parse_trace(str(_trace(req, gavel_dir)))
    shadow = None
    if req["shadow"] and req["system"] == "schedopt":
        if req["policy"] not in OBJECTIVES:
            raise ValueError(f"shadow: no objective for {req['policy']!r}")
        shadow = gavel_utils.get_policy(req["policy"], solver="ECOS", seed=req["seed"])
    rec = Recorder(_policy(req, gavel_utils), shadow, req["policy"])
    sched = scheduler.Scheduler(
        rec,
        throughputs_file=str(gavel_dir / "simulation_throughputs.json"),
        simulate=True,
        seed=req["seed"],
        time_per_iteration=req["time_per_iteration"],
    )
    sched._orig_logger.setLevel(logging.WARNING)  # a line per job and round otherwise
    aborted = None
    try:
        sched.simulate(
            req["cluster_spec"],
            arrival_times,
            jobs,
            num_gpus_per_server=dict.fromkeys(req["cluster_spec"], 1),
        )
    except Exception as exc:
        aborted = f"{type(exc).__name__}: {exc} ({_where(exc)})"
    jct = sched.get_average_jct(verbose=False) if sched._job_completion_times else None
    completed = sum(1 for t in sched._job_completion_times.values() if t is not None)
    return {
        "completed_jobs": completed,
        "average_jct_s": None if jct is None or not math.isfinite(jct) else float(jct),
        "makespan_s": float(sched.get_current_timestamp()),
        "policy_s": rec.policy_s,
        "failed_rounds": rec.failed,
        "invalid_rounds": rec.invalid,
        "objectives": rec.objectives,
        "aborted": aborted,
        "extra": {"stand_ins": stood_in, "trace_jobs": len(jobs)},
    }


def _where(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"


def main() -> None:
    req = json.loads(sys.stdin.read())
    result = run(req)
    Path(req["output"]).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
