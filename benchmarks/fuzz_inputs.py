"""Fuzz the inputs: broken instance files and corrupted solution files for every problem.

Every shipped instance under ``instances/<problem>/`` is broken at random (values replaced by
wrong types, signs and hostile numbers such as 1e308 or 2**64, keys dropped or renamed, list
items duplicated; or the JSON text itself: a number replaced by ``1e999`` or 5,000 digits, a
value nested 100,000 brackets deep, truncation, stray braces). Each broken file is loaded, and
if it still loads, solved with one of the problem's methods (in turn) at a small time limit.
Valid solutions (one heuristic solve per shipped instance) are corrupted the same way and run
through ``load_solution`` + the validator + the evaluator, as ``schedopt validate`` does.

The promise checked: every case ends with a result, violations, or ``InvalidInstanceError`` —
never another exception, never a hang (each case runs in a worker process with a timeout).

    python benchmarks/fuzz_inputs.py --count 10000 --solutions 3000 --seed 0

prints one row per problem and kind; the rows go to ``benchmarks/results/fuzz_inputs.jsonl``
(--out), one group per problem keyed by the counts, seed and limits, with the machine and
versions (schedopt.bench.record): a rerun of the same command fuzzes only the problems it does
not find. Failing cases (with their text) go to ``benchmarks/results/fuzz_inputs-failures.jsonl``.

Not a ``schedopt bench`` suite: its cases are broken files, most of which are not instances at
all, and its figure is how each case ends (refused, answered, violations, an exception, a hang,
in a worker process it kills on a timeout), not a solve's value or time.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from anywhere: use this checkout's schedopt
    sys.path.insert(0, str(ROOT))

import schedopt  # noqa: E402
from schedopt.io import to_json  # noqa: E402
from schedopt.testing import BAD_VALUES, HOSTILE_NUMBERS, corrupt_text, mutate  # noqa: E402

INSTANCES = ROOT / "instances"
RESULTS = ROOT / "benchmarks" / "results"
#: Extra values for solution files: ids the instance does not have, and odd shapes.
SOLUTION_VALUES = ("h9/g9", "j999", "nope", [None], [0], [-1], [10**6], {"x": 1})
MAX_FAILURE_TEXT = 20_000  # characters of a failing case kept for reproduction


@dataclass
class Case:
    problem: str
    kind: str  # "instance" or "solution"
    base: str  # the shipped instance file it was made from
    text: str
    method: str | None = None


@dataclass
class Tally:
    cases: int = 0
    invalid: int = 0  # InvalidInstanceError
    accepted: int = 0  # loaded, then solved / validated without an exception
    violations: int = 0  # solution files: the validator answered with violations
    failures: int = 0  # any other exception
    hangs: int = 0
    wall_s: float = 0.0
    kinds: dict[str, int] = field(default_factory=dict)


# --------------------------------------------------------------------------- case generation
def shipped(problem: str) -> dict[str, dict[str, Any]]:
    """The problem's shipped instance documents that load (golden answer files do not)."""
    docs = {}
    for path in sorted((INSTANCES / problem).glob("*.json")):
        doc = json.loads(path.read_text())
        try:
            schedopt.io.parse_instance(doc)
        except schedopt.InvalidInstanceError:
            continue
        docs[path.name] = doc
    return docs


def base_solutions(problem: str, docs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One valid solution document per instance: its first heuristic, solved once."""
    spec = schedopt.get_problem(problem)
    out = {}
    for name, doc in docs.items():
        inst = schedopt.io.parse_instance(doc)
        result = schedopt.solve(inst, spec.auto_heuristics[0], time_limit_s=10)
        if result.solution is not None:
            out[name] = json.loads(to_json(result.solution))
    return out


def make_cases(problem: str, count: int, solutions: int, seed: int) -> list[Case]:
    rng = random.Random(f"{seed}-{problem}")
    spec = schedopt.get_problem(problem)
    methods = ["auto", *spec.methods]
    docs = shipped(problem)
    sols = base_solutions(problem, docs) if solutions else {}
    values = (*BAD_VALUES, *HOSTILE_NUMBERS)
    cases = []
    for i in range(count):
        name = rng.choice(sorted(docs))
        cases.append(
            Case(
                problem,
                "instance",
                name,
                _broken(docs[name], rng, values),
                methods[i % len(methods)],
            )
        )
    for _ in range(solutions if sols else 0):
        name = rng.choice(sorted(sols))
        cases.append(
            Case(problem, "solution", name, _broken(sols[name], rng, (*values, *SOLUTION_VALUES)))
        )
    return cases


def _broken(doc: dict[str, Any], rng: random.Random, values: tuple[Any, ...]) -> str:
    mutated = mutate(doc, rng.choice, rng.randint(1, 3), values)
    text = json.dumps(mutated)
    return corrupt_text(text, rng) if rng.random() < 0.3 else text


# --------------------------------------------------------------------------- the worker
def _worker(conn: Any, time_limit_s: float) -> None:
    instances: dict[tuple[str, str], Any] = {}
    with tempfile.TemporaryDirectory(prefix="schedopt-fuzz-") as tmp:
        path = Path(tmp) / "case.json"
        while True:
            case = conn.recv()
            if case is None:
                return
            path.write_text(case.text)
            conn.send(_run(case, path, instances, time_limit_s))


def _run(case: Case, path: Path, instances: dict, time_limit_s: float) -> dict[str, Any]:
    try:
        if case.kind == "instance":
            inst = schedopt.load(path)
            schedopt.solve(inst, case.method or "auto", time_limit_s=time_limit_s)
            return {"outcome": "accepted"}
        key = (case.problem, case.base)
        if key not in instances:
            instances[key] = schedopt.load(INSTANCES / case.problem / case.base)
        inst = instances[key]
        spec = schedopt.get_problem(case.problem)
        sol = schedopt.load_solution(inst, path)
        violations = spec.validate(inst, sol)
        if violations:
            return {"outcome": "violations"}
        spec.evaluate(inst, sol)  # as ``schedopt validate`` does for a valid solution
        spec.metrics(inst, sol)
        return {"outcome": "accepted"}
    except schedopt.InvalidInstanceError as err:
        if not str(err):
            return {"outcome": "failure", "error": "InvalidInstanceError with an empty message"}
        return {"outcome": "invalid"}
    except Exception as err:  # the defect this script looks for
        tb = traceback.format_exc(limit=-3)
        return {"outcome": "failure", "error": f"{type(err).__name__}: {err}"[:500], "tb": tb}


class Runner:
    """One worker process; a case that outlives ``timeout_s`` is a hang and costs the worker."""

    def __init__(self, time_limit_s: float, timeout_s: float):
        self.time_limit_s = time_limit_s
        self.timeout_s = timeout_s
        self.ctx = mp.get_context("spawn")
        self.proc: Any = None
        self.conn: Any = None

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child, self.time_limit_s), daemon=True)
        self.proc.start()

    def run(self, case: Case) -> dict[str, Any]:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send(case)
        if self.conn.poll(self.timeout_s):
            try:
                return self.conn.recv()
            except EOFError:
                self.proc = None
                return {"outcome": "failure", "error": "the worker process died"}
        self.proc.kill()
        self.proc.join()
        self.proc = None
        return {"outcome": "hang", "error": f"no answer within {self.timeout_s:g} s"}

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.conn.send(None)
            self.proc.join(10)
            if self.proc.is_alive():
                self.proc.kill()


def fuzz(
    problems: list[str],
    count: int,
    solutions: int,
    seed: int,
    time_limit_s: float = 0.5,
    timeout_s: float = 60.0,
    progress: bool = False,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run the fuzz; return one summary row per (problem, kind) and the failing cases."""
    rows, failures = [], []
    runner = Runner(time_limit_s, timeout_s)
    try:
        for problem in problems:
            tallies = {"instance": Tally(), "solution": Tally()}
            for n, case in enumerate(make_cases(problem, count, solutions, seed)):
                t = tallies[case.kind]
                start = time.perf_counter()
                answer = runner.run(case)
                t.wall_s += time.perf_counter() - start
                t.cases += 1
                outcome = answer["outcome"]
                if outcome == "invalid":
                    t.invalid += 1
                elif outcome == "accepted":
                    t.accepted += 1
                elif outcome == "violations":
                    t.violations += 1
                else:
                    if outcome == "hang":
                        t.hangs += 1
                    else:
                        t.failures += 1
                    failures.append(
                        {
                            "problem": problem,
                            "kind": case.kind,
                            "base": case.base,
                            "method": case.method,
                            **answer,
                            "text": case.text[:MAX_FAILURE_TEXT],
                        }
                    )
                if progress and n % 500 == 0:
                    print(f"{problem}: {n} cases, {len(failures)} failures", file=sys.stderr)
            for kind, t in tallies.items():
                if t.cases:
                    rows.append(
                        {
                            "problem": problem,
                            "kind": kind,
                            "cases": t.cases,
                            "invalid": t.invalid,
                            "accepted": t.accepted,
                            "violations": t.violations,
                            "failures": t.failures,
                            "hangs": t.hangs,
                            "wall_s": round(t.wall_s, 1),
                            "seed": seed,
                            "time_limit_s": time_limit_s,
                        }
                    )
    finally:
        runner.close()
    return rows, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--count", type=int, default=10_000, help="broken instance files per problem"
    )
    parser.add_argument(
        "--solutions", type=int, default=3_000, help="corrupted solution files per problem"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--problems", nargs="*", default=sorted(schedopt.problem_names()), help="default: all"
    )
    parser.add_argument("--time-limit", type=float, default=0.5, help="solve time limit, s")
    parser.add_argument("--timeout", type=float, default=60.0, help="a case running longer hangs")
    parser.add_argument("--no-save", action="store_true", help="do not append to results/")
    parser.add_argument(
        "--out", type=Path, default=RESULTS / "fuzz_inputs.jsonl", help="rows (a rerun resumes)"
    )
    args = parser.parse_args(argv)

    from common import key, print_table, row_log  # benchmarks/common.py (the script's folder)

    settings = (args.count, args.solutions, args.seed, args.time_limit, args.timeout)
    rows: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    log = None if args.no_save else row_log("fuzz_inputs", argv, args.out)
    for problem in args.problems:

        def one(problem: str = problem) -> list[dict[str, Any]]:
            found, failed = fuzz([problem], *settings, True)
            failures.extend(failed)
            return found

        if log is None:
            rows += one()
        else:
            group = key(problem, f"n{args.count}", f"sol{args.solutions}", f"seed{args.seed}")
            rows += log.rows(f"{group}/{args.time_limit:g}s/{args.timeout:g}s", one)
    columns = [
        "problem",
        "kind",
        "cases",
        "invalid",
        "accepted",
        "violations",
        "failures",
        "hangs",
        "wall_s",
    ]
    print_table("Broken inputs (failures and hangs must be 0)", rows, columns)
    for f in failures[:20]:
        print(f"{f['problem']} {f['kind']} {f['base']} {f.get('method')}: {f['error']}")
    if log is not None:
        print(f"rows in {log.path} ({log.measured} groups measured, {log.resumed} read back)")
        if failures:
            RESULTS.mkdir(parents=True, exist_ok=True)
            with (RESULTS / "fuzz_inputs-failures.jsonl").open("a") as out:
                for f in failures:
                    out.write(json.dumps(f) + "\n")
    return 1 if failures or any(r["failures"] or r["hangs"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
