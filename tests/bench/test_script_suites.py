"""The suites that replaced benchmark scripts' loops build the instances their checksums record,
the run's Markdown table shows a suite's ``columns``, and the rows of the scripts that stay
scripts (:class:`schedopt.bench.record.RowLog`) carry the machine and versions and resume."""

from __future__ import annotations

import json

import pytest

from schedopt.bench import report
from schedopt.bench.checksums import compute
from schedopt.bench.record import RowLog
from schedopt.bench.suites import all_suites

#: The suites added for benchmarks/ scripts (cosched.py, timeshare_rounds.py,
#: timeshare_ftf_steps.py, tune_admission.py).
SCRIPT_SUITES = (
    "cosched-scaling",
    "cosched-scaling-60s",
    "cosched-chance",
    "timeshare-cold",
    "timeshare-pairs",
    "timeshare-ftf",
    "admission-tune",
    "admission-tune-held-out",
)
#: Building these takes more than a few seconds (1,024 jobs with every pair: about 40 s).
SLOW = {"timeshare-cold", "timeshare-pairs"}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in SCRIPT_SUITES],
)
def test_script_suite_builds_its_recorded_instances(name):
    suite = all_suites()[name]
    assert suite.recipes and suite.methods
    found = dict(compute(suite))
    for recipe in suite.recipes:
        assert recipe.checksum, f"{name}/{recipe.name}: record it with --checksums --update"
        assert found[recipe.name] == recipe.checksum, f"{name}/{recipe.name} drifted"


def test_the_chance_suite_pairs_each_p90_instance_with_its_scenario_model():
    suite = all_suites()["cosched-chance"]
    built = {r.name: r.build() for r in suite.recipes}
    for name, inst in built.items():
        if "chance" not in name:
            continue
        plain = built[name.replace("-chance", "")]
        assert plain.chance is None
        assert (inst.chance.epsilon, inst.chance.scenarios) == (0.125, 8)
        assert [j.id for j in inst.jobs] == [j.id for j in plain.jobs]


def test_ftf_suite_has_elapsed_time_and_finish_time_fairness():
    for recipe in all_suites()["timeshare-ftf"].recipes:
        inst = recipe.build()
        assert inst.policy.value == "finish_time_fairness"
        assert any(j.time_since_start_s > 0 for j in inst.jobs)


def _row(recipe: str, method: str, **figures) -> dict:
    return {
        "suite": "s",
        "recipe": recipe,
        "method": method,
        "time_limit_s": 10.0,
        "seed": 0,
        "status": "feasible",
        "objectives": [1.0],
        "bound": 0.5,
        "gap": 0.5,
        "wall_s": 1.0,
        "stats": {"dinkelbach_steps": 7.0},
        "metrics": figures,
    }


def test_markdown_shows_the_suite_columns_from_metrics_stats_and_the_row():
    rows = [_row("a", "auto", slo_attainment_holdout=0.9531), _row("b", "auto")]
    text = report.markdown(rows, ("slo_attainment_holdout", "dinkelbach_steps", "wall_s"))
    assert (
        "| recipe | method | limit s | slo_attainment_holdout | dinkelbach_steps | wall_s |" in text
    )
    assert "| a | auto | 10 | 0.9531 | 7 | 1 |" in text
    assert "| b | auto | 10 | – | 7 | 1 |" in text
    assert "slo_attainment_holdout" not in report.markdown(rows)


def test_row_log_records_machine_versions_and_resumes(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"old": 1}\n{"torn": ')  # an unkeyed row of an older run, a torn line
    calls = []

    def measure():
        calls.append(1)
        return {"value": len(calls)}

    log = RowLog(path, "python benchmarks/x.py --a")
    first = log.row("case/1", measure)
    assert first["value"] == 1 and first["key"] == "case/1"
    assert first["command"] == "python benchmarks/x.py --a"
    assert first["machine"]["cpus"] and "load1" in first["machine"]
    assert {"schedopt", "commit", "highspy", "python"} <= set(first["versions"])
    group = log.rows("replay/s0", lambda: [{"round": 0}, {"round": 1}])
    assert [r["round"] for r in group] == [0, 1]
    assert (log.measured, log.resumed) == (2, 0)

    again = RowLog(path, "python benchmarks/x.py --a")
    assert again.row("case/1", measure)["value"] == 1  # read back, not measured again
    assert again.rows("replay/s0", lambda: []) == group
    assert again.row("case/2", measure)["value"] == 2
    assert len(calls) == 2 and (again.measured, again.resumed) == (1, 2)
    lines = path.read_text().splitlines()
    assert lines[0] == '{"old": 1}' and lines[1] == '{"torn": '  # kept, each on its line
    assert [json.loads(x)["key"] for x in lines[2:]] == ["case/1", "replay/s0", "case/2"]


def test_markdown_says_which_plan_space_a_gap_is_proven_over():
    """A reconfig template answer's gap is over the template plan space, not the physical one
    its stats bound beside it (#17): the table says so, and says nothing where no space is
    named."""
    row = _row("r", "auto")
    row["stats"] = {"proven_over": "template plan space"}
    text = report.markdown([row, _row("s", "auto")])
    assert "| 50.00% (over the template plan space) |" in text
    assert "| s | auto | 10 | 0 | feasible | 1 | 0.5 | 50.00% | 1 |" in text
