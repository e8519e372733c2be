"""Deterministic ``milp:cbc`` bounds CBC's root cut passes (#17): its node budget
(``-maxNodes``) does not bound the root, where CBC ran 79-100 passes on cosched's and
reconfig's small models (benchmarks/RESULTS.md); without the option CBC keeps its own."""

from __future__ import annotations

import pytest

import schedopt
from schedopt.backends import cbc


@pytest.mark.parametrize("deterministic", [True, False])
def test_the_root_cut_passes_are_bounded_in_deterministic_mode(
    monkeypatch, deterministic: bool
) -> None:
    launched: list[list[str]] = []
    real = cbc._launch

    def launch(args: list[str]):
        launched.append(list(args))
        return real(args)

    monkeypatch.setattr(cbc, "_launch", launch)
    inst = schedopt.get_problem("admission").generate("tiny", 0)
    result = schedopt.solve(inst, "milp:cbc", time_limit_s=2.0, deterministic=deterministic)
    assert result.solution is not None
    assert launched  # one CBC run a MIP level
    for args in launched:
        if deterministic:
            i = args.index("-passCuts")
            assert args[i + 1] == str(cbc.DETERMINISTIC_CUT_PASSES)
            assert "-maxNodes" in args
        else:
            assert "-passCuts" not in args
