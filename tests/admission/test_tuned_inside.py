"""The user's tuned parameters reach the heuristics a method runs inside (#17): ``decomp:lp``
without a hint and ``heuristic:lns`` (by name or in ``auto``) start from the greedy
heuristics' plans, with the parameters of ``solve(..., tuned=PATH)`` over the shipped ones."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.problems.admission import generate_custom, lns, lpdecomp
from schedopt.problems.admission.heuristics import EdfParams, SlackParams
from schedopt.tuning import load_tuned, save_tuned

MINE = {
    "heuristic:edf": {"laxity_weight": 0.875, "value_weight": 1.625},
    "heuristic:slack": {"work_weight": 0.125, "gpu_weight": 2.5, "share_boost": 1},
}


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "admission.json"
    for method, params in MINE.items():
        save_tuned("admission", method, {"params": params}, path)
    shipped = load_tuned("admission")
    assert all(shipped.get(m) != p for m, p in MINE.items())  # the file changes something
    return path


def _spy(monkeypatch, module) -> list[object]:
    seen: list[object] = []
    for name in ("run_edf", "run_slack"):
        real = getattr(module, name)

        def spy(data, params, *rest, _real=real, **kw):
            seen.append(params)
            return _real(data, params, *rest, **kw)

        monkeypatch.setattr(module, name, spy)
    return seen


def test_decomp_lp_runs_the_greedy_heuristics_with_the_users_tuned_file(
    monkeypatch, user_file
) -> None:
    # auto hands decomp:lp its heuristics' best plan; called by name it makes its own
    inst = generate_custom(hosts=8, jobs=500, slots=6, seed=3)
    seen = _spy(monkeypatch, lpdecomp)
    schedopt.solve(inst, "decomp:lp", time_limit_s=2.0, tuned=user_file)
    assert EdfParams(**MINE["heuristic:edf"]) in seen
    assert SlackParams(**MINE["heuristic:slack"]) in seen
    # without the file: the shipped parameters, as before
    seen.clear()
    schedopt.solve(inst, "decomp:lp", time_limit_s=2.0)
    assert EdfParams(**load_tuned("admission")["heuristic:edf"]) in seen
    assert EdfParams(**MINE["heuristic:edf"]) not in seen


@pytest.mark.parametrize("method", ["auto", "heuristic:lns"])
def test_lns_starts_from_the_greedy_heuristics_with_the_users_tuned_file(
    monkeypatch, user_file, method
) -> None:
    # auto runs LNS after EDF and slack; LNS starts from its own greedy plans
    inst = generate_custom(hosts=4, jobs=40, slots=6, seed=3)
    seen = _spy(monkeypatch, lns)
    schedopt.solve(inst, method, time_limit_s=1.0, tuned=user_file)
    assert EdfParams(**MINE["heuristic:edf"]) in seen
    assert SlackParams(**MINE["heuristic:slack"]) in seen
