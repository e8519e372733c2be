"""The ``schedopt`` command line: exit codes, JSON output, error reporting, every sub-command."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import schedopt
import schedopt.tuning
from schedopt import cli
from schedopt.cli import (
    EXIT_INFEASIBLE,
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_NO_SOLUTION,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VALIDATION_FAILED,
    main,
)
from schedopt.cli.pipes import EXIT_BROKEN_PIPE
from schedopt.cli.progress import wanted
from schedopt.cli.terminate import EXIT_TERMINATED
from schedopt.core.registry import get_problem
from schedopt.problems.admission.render import MAX_ROWS

COMMANDS = ("solve", "validate", "generate", "schema", "export", "methods", "info", "plot", "tune")


@pytest.fixture(scope="module")
def instance_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "tiny.json"
    assert main(["generate", "admission", "--size", "tiny", "--seed", "1", "--out", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def solution_file(instance_file: Path) -> Path:
    path = instance_file.with_name("tiny-sol.json")
    argv = ["solve", str(instance_file), "--method", "milp:highs", "--time-limit", "5"]
    code = main([*argv, "--json", "--out", str(path)])
    assert code == EXIT_OK
    return path


def _write(tmp_path: Path, name: str, doc: object) -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


# --- generate / solve / validate ---------------------------------------------------------------
def test_generate_to_stdout_is_a_loadable_instance(capsys):
    assert main(["generate", "admission", "--size", "tiny", "--seed", "1"]) == EXIT_OK
    out = capsys.readouterr().out
    inst = schedopt.loads(out)
    assert inst.name == "admission-tiny-s1"
    assert len(inst.jobs) == 5


def test_generate_is_seeded(instance_file, capsys):
    main(["generate", "admission", "--size", "tiny", "--seed", "1"])
    assert schedopt.loads(capsys.readouterr().out) == schedopt.load(instance_file)


def test_solve_json(instance_file, capsys):
    code = main(
        ["solve", str(instance_file), "--json", "--time-limit", "5", "--method", "milp:highs"]
    )
    out = capsys.readouterr().out
    doc = json.loads(out)  # nothing but the one JSON object on stdout
    assert code == EXIT_OK
    assert doc["status"] in {"optimal", "feasible"}
    assert doc["method"] == "milp:highs"
    assert set(doc["objectives"]) == {t.name for t in schedopt.get_problem("admission").terms}
    assert {"build_s", "solve_s", "wall_s", "time_limit_s"} <= set(doc["timing"])
    assert doc["timing"]["time_limit_s"] == 5
    assert "slo_admitted" in doc["metrics"]
    assert {p["job_id"] for p in doc["solution"]["plans"]} == {"j0", "j1", "j2", "j3", "j4"}


def test_solve_json_verbose_keeps_stdout_clean(instance_file, capsys):
    argv = ["solve", str(instance_file), "--json", "--verbose", "--method", "cpsat"]
    code = main([*argv, "--time-limit", "5"])
    assert code == EXIT_OK
    assert json.loads(capsys.readouterr().out)["status"] == "optimal"


def test_solve_human_output(instance_file, capsys):
    code = main(["solve", str(instance_file), "--method", "milp:highs", "--time-limit", "5"])
    out = capsys.readouterr().out
    assert code == EXIT_OK
    assert "OPTIMAL" in out
    for job_id in ("j0", "j1", "j2", "j3", "j4"):
        assert job_id in out
    assert "guaranteed deadline value" in out
    assert "best-effort" in out and "admitted" in out
    assert "slot 0 placement" in out and "hosts used" in out


def test_solve_human_output_shows_rejections_and_caps_rows(tmp_path, capsys):
    inst = schedopt.get_problem("admission").generate("medium", 0)
    doc = inst.model_dump(mode="json")
    victim = next(j for j in doc["jobs"] if j["kind"] == "strict_slo" and not j["admitted"])
    victim["remaining_iterations"] = 10**9  # cannot finish even alone: rejected, proven
    path = _write(tmp_path, "medium.json", doc)
    code = main(["solve", str(path), "--method", "heuristic:edf"])
    out = capsys.readouterr().out
    assert code == EXIT_OK
    assert "FEASIBLE" in out
    assert f"… {len(doc['jobs']) - MAX_ROWS} more jobs" in out
    assert doc["jobs"].index(victim) < MAX_ROWS
    assert "rejected" in out and "why rejected:" in out
    assert f"{victim['id']}: " in out


def test_solve_out_then_validate(instance_file, solution_file, capsys):
    capsys.readouterr()
    assert main(["validate", str(instance_file), str(solution_file)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "VALID" in out and "guaranteed deadline value" in out
    assert main(["validate", str(instance_file), str(solution_file), "--json"]) == EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid"] is True and doc["violations"] == []


def test_validate_tampered_solution(instance_file, solution_file, tmp_path, capsys):
    doc = json.loads(solution_file.read_text())
    for plan in doc["plans"]:  # every job on 4 GPUs in slot 0: more than the cluster has
        plan["gpus"][0] = 4
        plan["gpu_types"][0] = "H100"
    bad = _write(tmp_path, "bad-sol.json", doc)
    assert main(["validate", str(instance_file), str(bad)]) == EXIT_VALIDATION_FAILED
    out = capsys.readouterr().out
    assert "INVALID" in out
    assert "[V4]" in out  # capacity
    assert "[V7]" in out  # placement no longer matches the slot-0 counts
    assert main(["validate", str(instance_file), str(bad), "--json"]) == EXIT_VALIDATION_FAILED
    ids = {v["constraint_id"] for v in json.loads(capsys.readouterr().out)["violations"]}
    assert {"V4", "V7"} <= ids


def test_validate_solution_with_unknown_job(instance_file, solution_file, tmp_path, capsys):
    doc = json.loads(solution_file.read_text())
    doc["plans"][0]["job_id"] = "nobody"
    bad = _write(tmp_path, "bad-sol.json", doc)
    assert main(["validate", str(instance_file), str(bad)]) == EXIT_VALIDATION_FAILED
    captured = capsys.readouterr()
    assert "[V1]" in captured.out
    assert "Traceback" not in captured.err


def test_validate_unreadable_solution(instance_file, tmp_path, capsys):
    bad = _write(tmp_path, "sol.json", "{not json")
    assert main(["validate", str(instance_file), str(bad)]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "error:" in err and "malformed JSON" in err and "sol.json" in err


def test_infeasible_exit_code(instance_file, tmp_path, capsys):
    doc = json.loads(instance_file.read_text())
    job = next(j for j in doc["jobs"] if j["kind"] == "strict_slo")
    job["admitted"] = True  # a guarantee that cannot be kept
    job["remaining_iterations"] = 10**9
    path = _write(tmp_path, "infeasible.json", doc)
    assert main(["solve", str(path), "--method", "milp:highs", "--time-limit", "5"]) == (
        EXIT_INFEASIBLE
    )
    out = capsys.readouterr().out
    assert "INFEASIBLE" in out and "cannot be kept" in out
    # a heuristic proves nothing: no solution, exit 5
    code = main(["solve", str(path), "--method", "heuristic:edf", "--json"])
    assert code == EXIT_NO_SOLUTION
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "no_solution" and doc["solution"] is None


def test_out_without_solution_writes_nothing(instance_file, tmp_path, capsys):
    doc = json.loads(instance_file.read_text())
    job = next(j for j in doc["jobs"] if j["kind"] == "strict_slo")
    job["admitted"] = True
    job["remaining_iterations"] = 10**9
    path = _write(tmp_path, "infeasible.json", doc)
    out = tmp_path / "sol.json"
    main(["solve", str(path), "--method", "heuristic:edf", "--out", str(out)])
    assert not out.exists()
    assert "no solution to write" in capsys.readouterr().err


# --- bad input ---------------------------------------------------------------------------------
def _assert_clean_error(capsys, *fragments: str) -> None:
    err = capsys.readouterr().err
    assert "error:" in err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


def test_malformed_json(tmp_path, capsys):
    path = _write(tmp_path, "bad.json", '{"problem": "admission",')
    assert main(["solve", str(path)]) == EXIT_INVALID
    _assert_clean_error(capsys, "malformed JSON", "line 1 column")


def test_negative_slots(instance_file, tmp_path, capsys):
    doc = json.loads(instance_file.read_text())
    doc["slots"] = -1
    doc["jobs"][2]["remaining_iterations"] = 0
    path = _write(tmp_path, "neg.json", doc)
    assert main(["info", str(path)]) == EXIT_INVALID
    _assert_clean_error(capsys, "error: slots:", "error: jobs[2].remaining_iterations:")


def test_unknown_problem_in_file(tmp_path, capsys):
    path = _write(tmp_path, "unknown.json", {"problem": "knapsack", "items": []})
    assert main(["solve", str(path)]) == EXIT_INVALID
    _assert_clean_error(capsys, "error: problem:", "knapsack")


def test_missing_file(tmp_path, capsys):
    assert main(["solve", str(tmp_path / "nope.json")]) == EXIT_INVALID
    _assert_clean_error(capsys, "cannot read")


@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "knapsack"],
        ["schema", "knapsack"],
        ["methods", "knapsack"],
        ["generate", "admission", "--size", "huge"],
        ["solve", "x.json", "--time-limit", "0"],
        ["solve", "x.json", "--gap", "1.5"],
        ["solve", "x.json", "--threads", "0"],
        ["export", "x.json", "--format", "docx", "--out", "x"],
        ["frobnicate"],
        [],
    ],
)
def test_usage_errors(argv, capsys):
    assert main(argv) == EXIT_USAGE
    assert "Traceback" not in capsys.readouterr().err


def test_unknown_method(instance_file, capsys):
    assert main(["solve", str(instance_file), "--method", "gurobi"]) == EXIT_USAGE
    _assert_clean_error(capsys, "unknown method 'gurobi'", "milp:highs")


def test_internal_error_and_debug(instance_file, monkeypatch, capsys):
    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(schedopt, "solve", boom)
    assert main(["solve", str(instance_file)]) == EXIT_INTERNAL
    _assert_clean_error(capsys, "RuntimeError: kaboom", "--debug")
    with pytest.raises(RuntimeError, match="kaboom"):
        main(["--debug", "solve", str(instance_file)])
    with pytest.raises(RuntimeError, match="kaboom"):
        main(["solve", str(instance_file), "--debug"])


def test_unwritable_output(instance_file, tmp_path, capsys):
    out = tmp_path / "no-such-dir" / "x.lp"
    assert main(["export", str(instance_file), "--format", "lp", "--out", str(out)]) == EXIT_USAGE
    _assert_clean_error(capsys, "does not exist")


# --- schema / export / methods / info ----------------------------------------------------------
def test_schema(capsys):
    assert main(["schema", "admission"]) == EXIT_OK
    schema = json.loads(capsys.readouterr().out)
    assert "properties" in schema and "jobs" in schema["properties"]


@pytest.mark.parametrize("fmt", ["lp", "mps"])
def test_export(instance_file, tmp_path, fmt):
    out = tmp_path / f"model.{fmt}"
    assert main(["export", str(instance_file), "--format", fmt, "--out", str(out)]) == EXIT_OK
    text = out.read_text()
    if fmt == "lp":
        assert "Maximize" in text or "MAXIMIZE" in text
    else:
        assert "ROWS" in text and "COLUMNS" in text


def test_methods(capsys):
    assert main(["methods"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "admission" in out
    for name in ("auto", "cpsat", "milp:highs", "milp:cbc", "heuristic:edf"):
        assert name in out
    assert main(["methods", "admission"]) == EXIT_OK
    assert "heuristic" in capsys.readouterr().out


def test_info(instance_file, capsys):
    assert main(["info", str(instance_file)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "admission-tiny-s1" in out
    assert "4 GPUs on 1 hosts" in out
    assert "jobs: 5" in out and "strict_slo" in out
    assert "4 slots × 300 s" in out
    assert "variables" in out


# --- help, version, python -m ------------------------------------------------------------------
@pytest.mark.parametrize("command", COMMANDS)
def test_subcommand_help(command, capsys):
    assert main([command, "--help"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "example:" in out and f"schedopt {command}" in out


def test_top_level_help_and_version(capsys):
    assert main(["--help"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "exit codes:" in out
    # the codes a signal ends a command with, as the CLI returns them
    for code in (130, EXIT_BROKEN_PIPE, EXIT_TERMINATED):
        assert f"\n  {code}  " in out
    for command in COMMANDS:
        assert command in out
    assert main(["--version"]) == EXIT_OK
    assert schedopt.__version__ in capsys.readouterr().out


def test_python_dash_m():
    done = subprocess.run(
        [sys.executable, "-m", "schedopt", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "usage: schedopt" in done.stdout and "exit codes:" in done.stdout


def test_no_progress_without_a_terminal_unless_asked(instance_file):
    args = cli.build_parser().parse_args(["solve", str(instance_file)])
    assert not wanted(args)  # pytest captures stderr: not a TTY
    args = cli.build_parser().parse_args(["solve", str(instance_file), "--progress"])
    assert wanted(args)


# --- arguments checked up front (usage errors, exit 2) -----------------------------------------
@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["solve", "{i}", "--seed", str(2**31)], "--seed: must be an integer in [0, 2147483647]"),
        (["solve", "{i}", "--seed", "9" * 40], "--seed: must be an integer"),
        (["solve", "{i}", "--seed", "-1"], "--seed: must be an integer"),
        (["solve", "{i}", "--threads", "100000"], "--threads: must be an integer in [1, 256]"),
        (["solve", "{i}", "--time-limit", "1e300"], "--time-limit: must be a number of seconds"),
        (["solve", "{i}", "--time-limit", "inf"], "--time-limit: must be a number of seconds"),
        (["solve", "{i}", "--time-limit", "nan"], "--time-limit: must be a number of seconds"),
        (["solve", "{i}", "--gap", "nan"], "--gap: a relative gap is in [0, 1)"),
        (["generate", "admission", "--seed", str(2**31)], "--seed: must be an integer"),
        (["generate", "fairshare", "--seed", "x"], "--seed: not an integer"),
        (["tune", "admission", "--method", "cpsat"], "'cpsat' cannot be tuned"),
        (["tune", "admission", "--method", "auto"], "heuristic:edf"),
        (["tune", "fairshare", "--method", "milp:highs"], "cannot be tuned"),
        (["tune", "admission", "--method", "heuristic:edf", "--seed", str(2**40)], "--seed"),
        (["tune", "admission", "--method", "heuristic:edf", "--n-calls", "5"], "--n-calls"),
        (["tune", "admission", "--method", "heuristic:edf", "--instances", "0"], "--instances"),
        (
            ["tune", "admission", "--method", "heuristic:edf", "--first-seed", str(2**31 - 1)],
            "--first-seed + --instances - 1",
        ),
    ],
)
def test_bad_arguments_are_usage_errors(instance_file, monkeypatch, argv, fragment, capsys):
    def no_work(*args, **kwargs):
        raise AssertionError("a bad argument must be refused before any work")

    monkeypatch.setattr(schedopt, "solve", no_work)
    monkeypatch.setattr("schedopt.tuning.tune", no_work)
    argv = [a.replace("{i}", str(instance_file)) for a in argv]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err and "internal error" not in err
    assert fragment in err, err


def test_largest_seed_solves(instance_file, capsys):
    """The largest accepted seed reaches every solver without overflow (LNS adds its step
    number to the seed, CBC adds one)."""
    for method in ("auto", "cpsat", "milp:highs", "milp:cbc", "heuristic:lns"):
        argv = ["solve", str(instance_file), "--method", method, "--time-limit", "5"]
        assert main([*argv, "--seed", str(2**31 - 1), "--threads", "2"]) == EXIT_OK, method
        capsys.readouterr()


@pytest.mark.parametrize("where", ["missing-dir", "a-directory", "under-a-file"])
@pytest.mark.parametrize("command", ["solve-out", "solve-plot", "generate", "export", "plot"])
def test_unwritable_outputs_are_refused_before_any_work(
    instance_file, solution_file, tmp_path, monkeypatch, capsys, where, command
):
    (tmp_path / "a-file").write_text("")
    out = {
        "missing-dir": tmp_path / "no-such-dir" / "x",
        "a-directory": tmp_path,
        "under-a-file": tmp_path / "a-file" / "x",
    }[where]
    argv = {
        "solve-out": ["solve", str(instance_file), "--out", str(out)],
        "solve-plot": ["solve", str(instance_file), "--plot", str(out)],
        "generate": ["generate", "admission", "--out", str(out)],
        "export": ["export", str(instance_file), "--format", "lp", "--out", str(out)],
        "plot": ["plot", str(instance_file), str(solution_file), "--out", str(out)],
    }[command]

    def no_work(*args, **kwargs):
        raise AssertionError("the output must be checked before any work")

    monkeypatch.setattr(schedopt, "solve", no_work)
    monkeypatch.setattr(schedopt, "load", no_work)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(argv) == EXIT_USAGE
    _assert_clean_error(capsys, f"cannot write {out}")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no stray file


def test_solve_out_is_written_after_the_check(instance_file, tmp_path, capsys):
    out = tmp_path / "sol.json"
    assert main(["solve", str(instance_file), "--method", "heuristic:edf", "--out", str(out)]) == 0
    assert schedopt.load_solution(schedopt.load(instance_file), out) is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sol.json"]  # the probe is gone


# --- tune --save never writes into the installed package ---------------------------------------
def _tree_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


TUNE_TINY = ["tune", "admission", "--method", "heuristic:edf", "--size", "tiny"]
TUNE_TINY += ["--instances", "1", "--n-calls", "6"]


@pytest.mark.slow
def test_tune_save_writes_per_user_never_into_the_package(tmp_path, monkeypatch, capsys):
    package_params = Path(schedopt.tuning.__file__).parent / "params"
    before = _tree_hash(package_params)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    # Only parameters that win on held-out instances are saved: let these win, the point here
    # is where a save goes.
    from schedopt.tuning.bayes import TuningResult

    monkeypatch.setattr(TuningResult, "wins_held_out", property(lambda self: True))
    assert main([*TUNE_TINY, "--save"]) == EXIT_OK
    saved = tmp_path / "config" / "schedopt" / "params" / "admission.json"
    assert str(saved) in capsys.readouterr().out
    chosen = tmp_path / "mine.json"
    assert main([*TUNE_TINY, "--save", str(chosen)]) == EXIT_OK
    assert _tree_hash(package_params) == before
    for path in (saved, chosen):
        assert "heuristic:edf" in schedopt.tuning.load_tuned("admission", path)


def test_tune_save_refuses_an_unwritable_path_before_tuning(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("schedopt.tuning.tune", lambda *a, **k: pytest.fail("tuned anyway"))
    (tmp_path / "a-file").write_text("")
    assert main([*TUNE_TINY, "--save", str(tmp_path / "a-file" / "p.json")]) == EXIT_USAGE
    _assert_clean_error(capsys, "cannot write")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert main([*TUNE_TINY, "--save", str(broken)]) == EXIT_INVALID
    _assert_clean_error(capsys, "not JSON")
    assert broken.read_text() == "{"


def test_solve_uses_saved_parameters_only_with_tuned(instance_file, tmp_path, monkeypatch, capsys):
    spec = get_problem("admission")
    original = spec.methods["heuristic:edf"]
    seen: list[dict] = []

    def run(instance, options, deadline):
        seen.append(dict(options.params))
        return original.run(instance, options, deadline)

    monkeypatch.setitem(spec.methods, "heuristic:edf", dataclasses.replace(original, run=run))
    mine = {"laxity_weight": 0.25, "value_weight": 2.0}
    path = schedopt.tuning.save_tuned(
        "admission", "heuristic:edf", {"params": mine}, tmp_path / "p"
    )
    assert main(["solve", str(instance_file), "--time-limit", "5"]) == EXIT_OK
    assert seen == [schedopt.tuning.load_tuned("admission")["heuristic:edf"]]
    seen.clear()
    assert main(["solve", str(instance_file), "--time-limit", "5", "--tuned", str(path)]) == 0
    assert seen == [mine]
    capsys.readouterr()
    assert main(["solve", str(instance_file), "--tuned", str(tmp_path / "none")]) == EXIT_INVALID
    _assert_clean_error(capsys, "tuned:", "none")


@pytest.mark.slow
def test_info_shows_kinds_only_where_jobs_have_them(tmp_path) -> None:
    """Fair share and time shares have no job kinds: "jobs: 12", not "jobs: 12 (12 ?)"."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for name, want in (
        ("fairshare/small-s0.json", "jobs: 12\n"),
        ("timeshare/min_makespan-8j-s3.json", "jobs: 8\n"),
    ):
        run = subprocess.run(
            [sys.executable, "-m", "schedopt", "info", str(root / "instances" / name)],
            capture_output=True,
            text=True,
            cwd=root,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        assert want in run.stdout and "?" not in run.stdout
