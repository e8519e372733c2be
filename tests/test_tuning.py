"""Bayesian tuning never records parameters worse than the defaults; the store round-trips;
parameters a user saved are used only when passed, and the shipped ones are never written."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

import schedopt
from schedopt.core.registry import get_problem
from schedopt.core.stopping import Deadline
from schedopt.executor import InlineExecutor, Task, TaskResult
from schedopt.problems.admission import generate_custom
from schedopt.tuning import load_tuned, save_tuned, tune
from schedopt.tuning.store import default_save_path, shipped_path
from tests.executor.contract import assert_keeps_contract


@pytest.fixture(scope="module")
def training():
    return [generate_custom(hosts=2, jobs=20, slots=6, seed=s, load=2.5) for s in range(2)]


@pytest.mark.slow
@pytest.mark.slow
@pytest.mark.parametrize("method", ["heuristic:edf", "heuristic:slack"])
def test_tuning_is_no_worse_than_the_defaults(training, method: str) -> None:
    result = tune(method, training, n_calls=8, seed=0)
    assert result.score <= result.default_score
    assert result.evaluations >= 7
    assert set(result.params) and all(isinstance(v, (int, float)) for v in result.params.values())


def test_exact_methods_cannot_be_tuned(training) -> None:
    with pytest.raises(ValueError, match="no tunable parameters"):
        tune("cpsat", training, n_calls=6)


def test_store_round_trip(tmp_path) -> None:
    path = tmp_path / "sub" / "admission.json"
    save_tuned("admission", "heuristic:edf", {"params": {"laxity_weight": 0.5}}, path)
    save_tuned("admission", "heuristic:slack", {"params": {"share_boost": 1}}, path)
    assert [p.name for p in path.parent.iterdir()] == ["admission.json"]  # no temporary left
    shipped = load_tuned("admission")
    # The file overrides the shipped parameters for the methods it lists.
    assert load_tuned("admission", path) == {
        **shipped,
        "heuristic:edf": {"laxity_weight": 0.5},
        "heuristic:slack": {"share_boost": 1},
    }


def test_default_save_path_is_per_user(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_save_path("admission") == tmp_path / "schedopt/params/admission.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")  # ignored, as the XDG spec says
    expected = Path.home() / ".config/schedopt/params/admission.json"
    assert default_save_path("admission") == expected
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert default_save_path("admission") == expected
    assert shipped_path("admission").parent != default_save_path("admission").parent


def _doc(methods: object, problem: str = "admission") -> dict:
    return {"schema_version": 1, "problem": problem, "methods": methods}


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (None, "No such file"),
        ("{", "not JSON"),
        ("[]", "not a schema-1"),
        (_doc({}, problem="fairshare"), "parameters for 'fairshare'"),
        (_doc({"cpsat": {"params": {}}}), "not a tunable heuristic"),
        (_doc({"heuristic:edf": {"params": {"nonsense": 1}}}), "nonsense: unknown"),
        (_doc({"heuristic:edf": {"params": {"laxity_weight": "1"}}}), "finite number"),
        (
            '{"schema_version": 1, "problem": "admission", "methods": {"heuristic:edf": '
            '{"params": {"laxity_weight": 1e999}}}}',
            "finite number",
        ),
        (_doc({"heuristic:edf": []}), "'params' object"),
    ],
)
def test_bad_parameter_files_are_invalid_input(tmp_path, content, fragment) -> None:
    path = tmp_path / "p.json"
    if content is not None:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    inst = generate_custom(hosts=1, jobs=4, slots=3, seed=0)
    with pytest.raises(schedopt.InvalidInstanceError, match=fragment) as err:
        schedopt.solve(inst, "heuristic:edf", tuned=path)
    assert err.value.path == "tuned" and str(path) in str(err.value)


def _record_params(monkeypatch, method: str) -> list[dict]:
    """The ``options.params`` every run of ``method`` sees."""
    spec = get_problem("admission")
    original = spec.methods[method]
    seen: list[dict] = []

    def run(instance, options, deadline):
        seen.append(dict(options.params))
        return original.run(instance, options, deadline)

    monkeypatch.setitem(spec.methods, method, dataclasses.replace(original, run=run))
    return seen


def test_saved_parameters_are_used_only_when_passed(monkeypatch, tmp_path) -> None:
    inst = generate_custom(hosts=1, jobs=6, slots=4, seed=1)
    mine = {"laxity_weight": 0.123, "value_weight": 4.5}
    path = save_tuned("admission", "heuristic:edf", {"params": mine}, tmp_path / "edf.json")
    shipped = load_tuned("admission").get("heuristic:edf", {})
    assert shipped != mine
    seen = _record_params(monkeypatch, "heuristic:edf")

    schedopt.solve(inst, "auto", time_limit_s=5)
    schedopt.solve(inst, "heuristic:edf")
    assert seen == [shipped, {}]  # not passed: shipped for auto, defaults for a named heuristic

    seen.clear()
    schedopt.solve(inst, "auto", time_limit_s=5, tuned=path)
    schedopt.solve(inst, "heuristic:edf", tuned=str(path))
    schedopt.solve(inst, "heuristic:edf", tuned=path, params={"laxity_weight": 1.0})
    assert seen == [mine, mine, {"laxity_weight": 1.0}]  # explicit params still win


class _CountingExecutor(InlineExecutor):
    """Runs tasks here, counting them: how many evaluations a run really made."""

    def __init__(self) -> None:
        super().__init__()
        self.tasks = 0

    def run(
        self, tasks: Iterable[Task], *, deadline: Deadline | None = None, ahead: int = 0
    ) -> Iterator[TaskResult]:
        for row in super().run(tasks, deadline=deadline, ahead=ahead):
            self.tasks += 1
            yield row


def test_the_counting_executor_keeps_the_executor_contract() -> None:
    """It takes what ``Executor.run`` takes: without ``ahead`` it raised a TypeError wherever
    a caller pulls ahead (cosched's refinement hands its cases out with ``ahead=AHEAD``)."""
    counter = _CountingExecutor()
    assert_keeps_contract(counter)
    assert counter.tasks == 3


@pytest.mark.slow
def test_batches_evaluate_every_point_on_every_instance(training) -> None:
    counter = _CountingExecutor()
    result = tune("heuristic:edf", training, n_calls=7, batch=3, executor=counter)
    assert result.evaluations == 7
    assert counter.tasks == 7 * len(training)
    assert result.score <= result.default_score


@pytest.mark.slow
def test_a_resumed_run_does_not_evaluate_its_checkpoint_again(training, tmp_path) -> None:
    checkpoint = tmp_path / "edf.json"
    first = tune("heuristic:edf", training, n_calls=6, batch=2, checkpoint=checkpoint)
    assert json.loads(checkpoint.read_text())["points"].__len__() == 6
    counter = _CountingExecutor()
    resumed = tune(
        "heuristic:edf", training, n_calls=9, batch=2, checkpoint=checkpoint, executor=counter
    )
    assert counter.tasks == 3 * len(training)  # only the three new points
    assert resumed.evaluations == 9
    assert resumed.score <= first.score  # the checkpoint's points still count


@pytest.mark.slow
def test_a_checkpoint_of_another_run_is_refused(training, tmp_path) -> None:
    checkpoint = tmp_path / "cp.json"
    tune("heuristic:edf", training, n_calls=6, checkpoint=checkpoint)
    with pytest.raises(schedopt.InvalidInstanceError, match="another run"):
        tune("heuristic:slack", training, n_calls=6, checkpoint=checkpoint)
    with pytest.raises(schedopt.InvalidInstanceError, match="another run"):
        tune("heuristic:edf", training[:1], n_calls=6, checkpoint=checkpoint)


@pytest.mark.slow
def test_held_out_scores_compare_the_tuned_point_with_the_defaults(training) -> None:
    held = [generate_custom(hosts=2, jobs=20, slots=6, seed=s, load=2.5) for s in (50, 51)]
    result = tune("heuristic:edf", training, held_out=held, n_calls=6, batch=5)
    assert result.held_out_default_score is not None and result.held_out_score is not None
    # The defaults are the held-out reference: they score exactly -1 per maximised level.
    assert result.held_out_default_score == pytest.approx(-1.001)
    gain = 100 * (result.held_out_default_score - result.held_out_score) / 1.001
    assert result.wins_held_out == (gain >= 0.1)
    # A difference of a few thousandths of a per cent is noise, not a win.
    tiny = dataclasses.replace(result, held_out_score=result.held_out_default_score - 4e-5)
    assert not tiny.wins_held_out
    assert result.held_out_spread is not None and result.held_out_spread >= 0
    entry = result.entry(["a", "b"], ["c", "d"])
    assert entry["held_out_on"] == ["c", "d"] and entry["held_out_score"] == result.held_out_score


@pytest.mark.slow
def test_tune_cli_saves_only_what_wins_on_held_out(tmp_path, monkeypatch) -> None:
    from schedopt.cli import main
    from schedopt.tuning import bayes

    verdicts = iter([True, False, True])  # edf wins, slack does not, lns wins

    def judged(*args, **kwargs):
        real = original(*args, **kwargs)
        win = next(verdicts)
        score = real.default_score - 0.5 if win else real.default_score
        return dataclasses.replace(
            real, held_out_score=score, held_out_default_score=real.default_score
        )

    original = bayes.tune
    monkeypatch.setattr("schedopt.tuning.tune", judged)
    path = tmp_path / "mine.json"
    code = main(
        [
            "tune",
            "admission",
            "--size",
            "small",
            "--instances",
            "1",
            "--held-out",
            "1",
            "--n-calls",
            "6",
            "--time-limit",
            "2",
            "--save",
            str(path),
        ]
    )
    assert code == 0
    saved = json.loads(path.read_text())["methods"]
    assert set(saved) == {"heuristic:edf", "heuristic:lns"}


def test_a_crashing_evaluation_is_reported_not_scored(training, monkeypatch) -> None:
    from schedopt.tuning import bayes

    def crash(method, case, params):
        raise ZeroDivisionError("a bug in the heuristic")

    with pytest.raises(RuntimeError, match="ZeroDivisionError: a bug in the heuristic"):
        bayes.search(
            get_problem("admission"),
            "heuristic:edf",
            training,
            crash,
            get_problem("admission").terms,
            case_ids=["a", "b"],
            n_calls=6,
        )


@pytest.mark.slow
def test_a_process_pool_finds_what_this_process_finds(training) -> None:
    from schedopt.executor import make_executor

    inline = tune("heuristic:slack", training, n_calls=6, batch=3)
    with make_executor("process", jobs=2) as pool:
        pooled = tune("heuristic:slack", training, n_calls=6, batch=3, executor=pool)
    assert pooled.params == inline.params and pooled.score == inline.score


def test_a_space_of_few_points_is_searched_once_through() -> None:
    from schedopt.problems.reconfig import generate

    instances = [generate("tiny", 0)]
    counter = _CountingExecutor()
    result = tune("heuristic:keep_shrink", instances, n_calls=30, executor=counter)
    assert result.evaluations == 2  # keep_slow in {0, 1}
    assert counter.tasks == 2
