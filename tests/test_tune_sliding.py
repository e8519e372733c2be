"""``schedopt tune PROBLEM --replay TRACE --sliding`` and ``--episode-set``: the command behind
benchmarks/policy_tuning.py. Misuse is a usage error naming the flag or field; with the public
traces, a sliding re-tune prints one row per window after the first, every episode set as
asked. Skipped where the traces (../shared/data) are absent."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedopt.tuning.policy as tuning_policy
from schedopt.cli import EXIT_OK, EXIT_USAGE, main

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_data = pytest.mark.skipif(
    not (DATA / "philly-chronus").is_dir(), reason=f"no public traces at {DATA}"
)
REPLAY = ["admission", "--replay", "philly-mix2", "--data", str(DATA), "--start", "5000"]


def test_sliding_and_episode_set_need_a_replay(capsys):
    assert main(["tune", "admission", "--sliding"]) == EXIT_USAGE
    assert "--replay only" in capsys.readouterr().err
    assert main(["tune", "admission", "--episode-set", "hosts=2"]) == EXIT_USAGE


def test_sliding_saves_nothing(capsys, tmp_path):
    argv = ["tune", *REPLAY, "--sliding", "--save", str(tmp_path / "p.json")]
    assert main(argv) == EXIT_USAGE
    assert "drop --save" in capsys.readouterr().err
    assert not (tmp_path / "p.json").exists()


@needs_data
def test_episode_set_refuses_a_field_the_episodes_lack(capsys):
    argv = ["tune", *REPLAY, "--episode-size", "10", "--episode-set", "nodes=2", "--sliding"]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "no field nodes" in err and "hosts" in err
    assert main(["tune", *REPLAY, "--episode-set", "hosts"]) == EXIT_USAGE
    for bad in ("hosts=two", "hosts=1.5", "hosts=true", "jobs=[]", "name=x"):
        assert main(["tune", *REPLAY, "--episode-size", "10", "--episode-set", bad]) == EXIT_USAGE
        assert "not a value of that field" in capsys.readouterr().err, bad


@pytest.mark.slow
@needs_data
def test_sliding_prints_each_later_window_with_the_episodes_set(capsys, monkeypatch):
    seen = []
    real = tuning_policy.sliding_retune

    def spy(spec, method, windows, **kw):
        seen.append([(w.hosts, w.slot_s, type(w.slot_s)) for w in windows])
        return real(spec, method, windows, **kw)

    monkeypatch.setattr(tuning_policy, "sliding_retune", spy)
    argv = ["tune", *REPLAY, "--instances", "1", "--held-out", "2", "--episode-size", "20"]
    argv += ["--episode-set", "hosts=1", "--episode-set", "slot_s=600", "--n-calls", "6"]
    argv += ["--sliding"]
    argv += ["--method", "heuristic:slack"]
    assert main(argv) == EXIT_OK
    out = capsys.readouterr().out
    assert seen == [[(1, 600.0, float)] * 3]
    assert "philly-mix2[5020:5040]" in out and "philly-mix2[5040:5060]" in out
    assert "philly-mix2[5000:5020]" not in out  # window 0 is tuned on, not scored
    assert "L1 defaults" in out and "L2 sliding" in out
