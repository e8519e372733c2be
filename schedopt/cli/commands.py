"""Every sub-command of ``schedopt``, in one table: name, help texts, arguments and what runs.

``schedopt --help`` lists the commands in the table's order; each command's arguments and code
live in its own module (one module a command, or a group of small ones).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

# Module imports, not `from . import ...`: that form also imports the package, whose
# __init__ imports this table (an import cycle the checker reports).
import schedopt.cli.bench as bench
import schedopt.cli.catalog as catalog
import schedopt.cli.info as info
import schedopt.cli.solve as solve
import schedopt.cli.tune as tune
import schedopt.cli.validate as validate


@dataclass(frozen=True)
class Command:
    """One sub-command: ``schedopt NAME ...`` parses with ``add_arguments`` and runs ``run``,
    which returns the exit code."""

    name: str
    #: One line in ``schedopt --help``.
    help: str
    #: The text of ``schedopt NAME --help``.
    description: str
    #: Command lines shown under "example:" in ``schedopt NAME --help``.
    example: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMANDS: tuple[Command, ...] = (
    Command(
        "solve",
        "solve an instance file",
        "Solve an instance and print the objective levels, bound, gap, timing, metrics and the\n"
        "decision for every job. The status is a claim: OPTIMAL only with a proof.\n\n"
        "methods: auto (heuristics, then the exact model warm-started), cpsat, milp:highs,\n"
        "milp:cbc, heuristic:<name>; `schedopt methods PROBLEM` lists them.\n"
        "exit code: 0 OPTIMAL/FEASIBLE, 4 INFEASIBLE, 5 no solution within the limit,\n"
        "3 invalid instance.",
        "  schedopt solve small.json --method cpsat --time-limit 30 --out small-sol.json\n"
        "  schedopt solve small.json --json | jq .objectives\n"
        "  schedopt solve small.json --tuned ~/.config/schedopt/params/admission.json\n"
        "  schedopt solve big.json --method decomp --param executor=process --param workers=2\n",
        solve.add_solve_arguments,
        solve.run_solve,
    ),
    Command(
        "validate",
        "check a solution against an instance",
        "Check a solution file with the problem's independent validator and print every\n"
        "violated constraint (by its id in the formulation), the objective levels and metrics.\n"
        "exit code: 0 valid, 4 violations, 3 unreadable instance or solution.",
        "  schedopt validate small.json small-sol.json\n",
        validate.add_validate_arguments,
        validate.run_validate,
    ),
    Command(
        "generate",
        "generate a seeded random instance",
        "Write a seeded random instance of PROBLEM as JSON, to stdout or to --out.\n"
        "The same size and seed always give the same instance.",
        "  schedopt generate admission --size medium --seed 3 --out medium-s3.json\n",
        catalog.add_generate_arguments,
        catalog.run_generate,
    ),
    Command(
        "schema",
        "print the JSON Schema of a problem's instance file",
        "Print the JSON Schema (draft 2020-12) of PROBLEM's instance files.",
        "  schedopt schema admission > admission.schema.json\n",
        catalog.add_schema_arguments,
        catalog.run_schema,
    ),
    Command(
        "export",
        "write the exact model as MPS or LP",
        "Write the exact MILP of an instance (first objective level) as MPS or LP, for an\n"
        "external solver.",
        "  schedopt export small.json --format lp --out small.lp\n",
        info.add_export_arguments,
        info.run_export,
    ),
    Command(
        "methods",
        "list problems and their methods",
        "List the registered problems and, for each, the methods `solve --method` accepts.",
        "  schedopt methods admission\n",
        catalog.add_methods_arguments,
        catalog.run_methods,
    ),
    Command(
        "info",
        "describe an instance file",
        "Describe an instance: problem, cluster, jobs by kind, horizon, and the estimated\n"
        "size of the exact model.",
        "  schedopt info small.json\n",
        info.add_info_arguments,
        info.run_info,
    ),
    Command(
        "plot",
        "draw a solution as an SVG picture",
        "Validate SOLUTION against FILE and draw it as SVG: for admission, the GPUs of every\n"
        "job in every slot, stacked, against the free-GPU capacity, with guaranteed deadlines\n"
        "marked on the time axis. Hover a block for the job and its GPUs.",
        "  schedopt solve example.json --out sol.json && schedopt plot example.json sol.json "
        "--out plan.svg\n",
        validate.add_plot_arguments,
        validate.run_plot,
    ),
    Command(
        "tune",
        "tune heuristics' parameters by Bayesian optimisation",
        "Tune the parameters of every heuristic of PROBLEM (or each --method) by Bayesian\n"
        "optimisation (scikit-optimize, ask/tell in batches of --batch points evaluated at\n"
        "once on --executor), on generated training instances (or --suite), then check the\n"
        "best point against the defaults on held-out instances (--held-out, or\n"
        "--held-out-suite). --checkpoint DIR makes a long run resumable.\n"
        "\n" + tune.SCORE_HELP + "\n\n"
        "--save [PATH] records, for each heuristic that beats the defaults on the held-out\n"
        "instances, its parameters in PATH (default $XDG_CONFIG_HOME/schedopt/params/\n"
        "PROBLEM.json, else ~/.config/schedopt/params/PROBLEM.json); the parameters shipped\n"
        "with schedopt are never changed. `solve --tuned PATH` (Python: solve(...,\n"
        "tuned=PATH)) uses a saved file; without it method 'auto' uses the shipped ones.",
        "  schedopt tune admission --method heuristic:edf --size medium --instances 6 \\\n"
        "      --n-calls 30 --save edf.json\n"
        "  schedopt tune cosched --executor process --jobs 2 --checkpoint runs/ --save\n"
        "  schedopt solve small.json --tuned edf.json\n",
        tune.add_tune_arguments,
        tune.run_tune,
    ),
    Command(
        "bench",
        "run benchmark suites: rows, a table, performance profiles",
        "Run benchmark suites (suites x methods x time limits x seeds) on an executor: in this\n"
        "process, a local process pool (--executor process --jobs N) or Ray (--executor ray,\n"
        "--address or $RAY_ADDRESS, else a local cluster; pip install 'schedopt[ray]').\n"
        "Rows go to a JSON-lines file as they finish; rows already there are skipped, so the\n"
        "same command resumes a stopped run. Then a Markdown table, Dolan-More performance\n"
        "profiles and gap-over-time curves (SVG) are written beside it.\n"
        "--checksums checks the instances the recipes build against the recorded checksums\n"
        "(--update records them); --update-best-known merges the rows into\n"
        "benchmarks/best_known.json; --plot scale solves nothing and draws wall time and gap\n"
        "against GPUs x jobs (log-log) from the rows already in --out. Trace suites\n"
        "(<problem>-trace) read $SCHEDOPT_DATA or shared/data and are skipped without it.\n"
        "docs/benchmarks.md explains suites and plots.",
        "  schedopt bench --list\n"
        "  schedopt bench admission-small --executor process --jobs 2 --time-limits 1,10\n"
        "  schedopt bench admission-paper --executor ray --address ray://head:10001\n"
        "  schedopt bench moe_placement-paper --methods decomp:layer --param executor=process\n"
        "  schedopt bench admission-small --checksums\n"
        "  schedopt bench admission-paper --plot scale --out rows.jsonl\n",
        bench.add_bench_arguments,
        bench.run_bench,
    ),
)
