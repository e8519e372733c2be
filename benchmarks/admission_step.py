"""One repair step of admission's ``decomp:lp`` under CP-SAT settings, offline (#17; RESULTS.md,
"Admission's repair step: CP-SAT settings per CPU second").

Not a ``schedopt bench`` suite: it measures single steps of the repair (``repair.py``), not a
method's answer. The LP guide and the start are computed once per instance as ``decomp:lp``
does (no time pressure; cached in ``--cache``), and the fixed list of windows is the repair's
first pass from that start (by first deadline, the repair's seed 0, ``--size`` SLO jobs a
window, the first ``--windows`` of them). Every window is solved from the same start under each
setting (a window's model: C1–C7 and L1 over its jobs, on the capacity the others leave; the
start's plans as the hint), on CP-SAT's deterministic time (``det``, the same work on any load),
one worker. Per setting: the summed gain of L1, CP-SAT's wall and user time, the step's whole
wall (build included), and the gain per CPU second. Rows go to
benchmarks/results/admission_step.jsonl.

A setting is ``NAME`` or ``NAME:key=value,...`` with keys ``det`` (deterministic seconds a
step, default 0.6 as ``STEP_S``), ``size`` (SLO jobs a window), ``first`` (1: stop at the
first solution better than the start), ``highs`` (1: HiGHS's MIP on the same window model, on
its wall clock), and any CP-SAT parameter (``linearization_level=0``, ``cp_model_presolve=0``,
``symmetry_level=0``, ``search_branching=FIXED_SEARCH``, ``max_presolve_iterations=1``,
``use_lns_only=1``, ``fix_variables_to_their_hinted_value=1``...).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import time
from pathlib import Path

import numpy as np
from common import append_rows
from ortools.sat.python import cp_model

from schedopt.core.stopping import Deadline
from schedopt.model.emit_cpsat import CpsatSession
from schedopt.problems.admission import generate_custom
from schedopt.problems.admission.assemble import guaranteed_value
from schedopt.problems.admission.codec import decode, encode
from schedopt.problems.admission.data import build_data
from schedopt.problems.admission.guide import guide
from schedopt.problems.admission.lpdecomp import start_plan
from schedopt.problems.admission.model import build_model
from schedopt.problems.admission.repair import groups, left_for

SHAPES = {"256x800": (32, 800), "1024x3200": (128, 3200)}


def prepared(shape: str, seed: int, cache: Path):
    path = cache / f"admission-step-{shape}-s{seed}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    hosts, jobs = SHAPES[shape]
    inst = generate_custom(hosts=hosts, jobs=jobs, slots=12, seed=seed)
    far = Deadline.after(3600)
    data = build_data(inst, check_size=False, deadline=far)
    g = guide(data, 30.0, far)
    start = start_plan(data, g.lp, None, far)
    assert start is not None and g.bound is not None
    out = (data, start, g.bound)
    try:
        path.write_bytes(pickle.dumps(out))
    except Exception:  # not picklable: recompute next time
        path.unlink(missing_ok=True)
    return out


class _FirstBetter(cp_model.CpSolverSolutionCallback):
    """Records when the last solution better than the start came (wall seconds); with
    ``stop``, stops at the first one."""

    def __init__(self, start: float, stop: bool):
        super().__init__()
        self.start, self.stop = start, stop
        self.last_wall = 0.0

    def on_solution_callback(self) -> None:
        if self.objective_value > self.start + 0.5:
            self.last_wall = self.wall_time
            if self.stop:
                self.stop_search()


def parse(spec: str) -> tuple[str, dict[str, str]]:
    name, _, rest = spec.partition(":")
    kv = dict(p.split("=", 1) for p in rest.split(",") if p)
    return name, kv


def step_cpsat(sub, start, kv: dict[str, str], seed: int) -> dict:
    t0 = time.process_time()
    am = build_model(sub, l1_only=True, whole_slots=kv.pop("b1c", "0") == "1")
    session = CpsatSession(am.model, int(kv.pop("linearization_level", 2)))
    session.set_level(am.model.levels[0])
    session.set_hint(encode(am, start))
    build = time.process_time() - t0
    solver = cp_model.CpSolver()
    p = solver.parameters
    det = float(kv.pop("det", 0.6))
    first = kv.pop("first", "0") == "1"
    p.max_deterministic_time = det
    p.max_time_in_seconds = 10 * det + 10
    p.num_workers = 1
    p.random_seed = seed
    p.linearization_level = session.linearization_level
    for k, v in kv.items():
        now = getattr(p, k)
        if isinstance(now, bool):
            setattr(p, k, v in ("1", "true", "True"))
        elif isinstance(now, float):
            setattr(p, k, float(v))
        elif isinstance(now, int) and type(now) is int:
            setattr(p, k, int(v))
        else:  # an enum
            setattr(p, k, getattr(type(now), v))
    start_obj = guaranteed_value(sub, start)
    cb = _FirstBetter(_scaled_start(session, am, start), first)
    t1, c1 = time.perf_counter(), time.process_time()
    status = solver.solve(session.cp, cb)
    solve_wall = time.perf_counter() - t1
    cpu = time.process_time() - c1
    gain = 0
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        values = np.fromiter(solver.response_proto.solution, dtype=float, count=am.model.num_cols)
        values /= session._scale
        found = decode(am, values)
        gain = max(0, guaranteed_value(sub, found) - start_obj)
    return {
        "gain": gain,
        "build_s": build,
        "solve_wall_s": solve_wall,
        "cpu_s": cpu,
        "det_s": solver.response_proto.deterministic_time,
        "optimal": status == cp_model.OPTIMAL,
        "last_share": cb.last_wall / max(1e-9, solver.wall_time),  # its share of the solve
    }


def _scaled_start(session, am, start) -> float:
    """The start's objective in CP-SAT's scaled units."""
    level = am.model.levels[0]
    expr = level.expr_for(session.kind)
    x = encode(am, start)
    coefs = session._coefs(expr.cols, expr.coefs, level.cpsat_scale, "start")
    return float(np.dot(coefs, np.round(x[expr.cols] * session._scale[expr.cols])))


def step_highs(sub, start, kv: dict[str, str], seed: int) -> dict:
    from schedopt.model.emit_highs import HighsSession

    t0 = time.process_time()
    am = build_model(sub, l1_only=True, whole_slots=kv.pop("b1c", "0") == "1")
    session = HighsSession(am.model)
    session.set_level(am.model.levels[0])
    session.set_hint(encode(am, start))
    build = time.process_time() - t0
    start_obj = guaranteed_value(sub, start)
    from schedopt.core.options import SolveOptions

    t1, c1 = time.perf_counter(), time.process_time()
    run = session.run(
        float(kv.get("wall", 0.6)),
        SolveOptions(time_limit_s=float(kv.get("wall", 0.6)), seed=seed, threads=1),
    )
    solve_wall = time.perf_counter() - t1
    cpu = time.process_time() - c1
    gain = 0
    if run.values is not None:
        found = decode(am, run.values)
        gain = max(0, guaranteed_value(sub, found) - start_obj)
    return {
        "gain": gain,
        "build_s": build,
        "solve_wall_s": solve_wall,
        "cpu_s": cpu,
        "det_s": 0.0,
        "optimal": str(run.status) == "Status.OPTIMAL",
        "last_share": 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="1024x3200")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--windows", type=int, default=20)
    ap.add_argument("--cache", default="/tmp")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("settings", nargs="+")
    args = ap.parse_args(argv)
    data, start, bound = prepared(args.shape, args.seed, Path(args.cache))
    base = guaranteed_value(data, start)
    for spec in args.settings:
        _name, kv0 = parse(spec)
        size = int(kv0.pop("size", 60))
        rng = np.random.default_rng(0)
        windows = groups(data, start, size, rng)[: args.windows]
        load0 = os.getloadavg()[0]
        per = []
        for w, indices in enumerate(windows):
            sub = data.subset(indices, slot_capacity=left_for(data, start, set(indices)))
            s = [start[i] for i in indices]
            fn = step_highs if kv0.get("highs") == "1" else step_cpsat
            per.append(fn(sub, s, dict(kv0), w))
        tot = {k: sum(float(r[k]) for r in per) for k in per[0]}
        row = {
            "instance": f"{args.shape}-s{args.seed}",
            "setting": spec,
            "windows": len(windows),
            "start": base / 1000,
            "bound": bound,
            "gain": tot["gain"] / 1000,
            "improved": sum(r["gain"] > 0 for r in per),
            "optimal": sum(bool(r["optimal"]) for r in per),
            "build_s": round(tot["build_s"], 3),
            "solve_wall_s": round(tot["solve_wall_s"], 3),
            "cpu_s": round(tot["cpu_s"], 3),
            "det_s": round(tot["det_s"], 3),
            "gain_per_cpu_s": round(tot["gain"] / 1000 / max(1e-9, tot["cpu_s"]), 2),
            "gain_per_step_s": round(
                tot["gain"] / 1000 / max(1e-9, tot["cpu_s"] + tot["build_s"]), 2
            ),
            "per_window_gain": [r["gain"] / 1000 for r in per],
            "per_window_det_s": [round(r["det_s"], 3) for r in per],
            "per_window_last_share": [round(r["last_share"], 3) for r in per],
            "load_before": load0,
            "load_after": os.getloadavg()[0],
        }
        print(json.dumps({k: v for k, v in row.items() if not k.startswith("per_")}), flush=True)
        if args.verbose:
            print(json.dumps({k: v for k, v in row.items() if k.startswith("per_")}), flush=True)
        append_rows("admission_step", [row], argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
