"""The JSON instance format: ``{"problem": ..., "schema_version": 1, ...}``.

Only ``json`` and pydantic touch the input: no pickle, no eval. Every way an input can be wrong
ends as :class:`~schedopt.core.errors.InvalidInstanceError` naming the field path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from schedopt.core import files, gates
from schedopt.core.errors import InvalidInstanceError
from schedopt.core.pydantic_errors import describe, invalid_instance_error
from schedopt.core.registry import get_problem, problem_loaded, problem_names, problem_of
from schedopt.core.stopping import Deadline, DeadlineReached

SCHEMA_VERSION = 1
#: Files larger than this are refused before parsing.
MAX_FILE_BYTES = 512 * 1024 * 1024
#: Seconds a megabyte of instance JSON takes to decode and validate on a quiet machine
#: (admission's 100,000 jobs, 39.4 MB: 3.8-4.8 s quiet; 15.3 s at load 12). Times the slowdown
#: measured before decoding, a file that would take longer than the time left is
#: refused before decoding (#16 item 5).
LOAD_S_PER_MB = 0.1
#: Files from this size on measure the machine's slowdown first (30 ms of CPU).
MEASURED_FROM_MB = 5.0
#: CPU seconds of importing a problem's package (models, validators, solvers' wrappers) on
#: first use: 0.30-0.45 s for the six problems at load 16 (admission the most; 0.36-0.39 s
#: quiet), and admission's 0.51-0.63 s beside 4 CPU burners at load 5-8 (a process that gets a
#: thirtieth of a core finds its caches cold after each wait). An import that would not end in
#: the time left at the slowdown measured now (:func:`schedopt.core.gates.gate_slowdown`) is
#: refused: uncounted, it took 1.6-2.5 s at load 11 and 5.3-6.0 s at load 16, and a 0.7 MB
#: admission file took 9-10 s to load on a 2 s limit (#17).
IMPORT_S = 0.65


def _reject_constants(token: str) -> float:
    raise InvalidInstanceError("", f"{token} is not a number JSON allows")


def _got(value: object) -> str:
    """A short form of a value for a message, never recursive nor unbounded: ``repr`` of a list
    nested 1,000 deep raised RecursionError and of a 5,000-digit integer ValueError (#16)."""
    got = describe(value)
    if got is not None:
        return got
    kinds: dict[type, str] = {dict: "an object", list: "an array", str: "a string"}
    kind = kinds.get(type(value), f"a {type(value).__name__}")
    return f"{kind}, not shown"


def parse_instance(doc: Any) -> BaseModel:
    """Validate a decoded JSON document and return the typed instance of its problem."""
    if not isinstance(doc, dict):
        raise InvalidInstanceError("", f"an instance is a JSON object (got {type(doc).__name__})")
    name = doc.get("problem")
    if name not in problem_names():
        raise InvalidInstanceError(
            "problem", f"must be one of {list(problem_names())} (got {_got(name)})"
        )
    version = doc.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise InvalidInstanceError(
            "schema_version", f"this schedopt reads version {SCHEMA_VERSION} (got {_got(version)})"
        )
    try:  # the models raise InvalidInstanceError themselves (schedopt.core.model.FrozenModel)
        return get_problem(name).instance_type.model_validate(doc)
    except ValidationError as err:  # a problem package whose models are plain pydantic ones
        raise invalid_instance_error(err) from None
    except RecursionError:
        raise InvalidInstanceError("", "the document is nested too deeply") from None


def decode_json(text: str | bytes) -> object:
    """Parse JSON text; NaN and Infinity, and every way the text can fail to decode, raise
    :class:`InvalidInstanceError` (its path names the line and column when JSON does)."""
    try:
        return json.loads(text, parse_constant=_reject_constants)
    except InvalidInstanceError:
        raise
    except json.JSONDecodeError as err:
        raise InvalidInstanceError(
            f"line {err.lineno} column {err.colno}", f"malformed JSON: {err.msg}"
        ) from None
    except (UnicodeDecodeError, RecursionError) as err:
        raise InvalidInstanceError("", f"not a readable JSON document: {err}") from None
    except ValueError as err:
        # e.g. an integer of more than 4,300 digits (Python's int-string conversion limit)
        raise InvalidInstanceError("", f"not a readable JSON document: {err}") from None


def read_capped(p: Path, limit: int | None = None) -> bytes:
    """The file's bytes, refusing more than ``limit`` (default :data:`MAX_FILE_BYTES`; the cap
    is on the bytes actually read: ``schedopt.core.files``)."""
    return files.read_capped(p, MAX_FILE_BYTES if limit is None else limit)


def loads(text: str | bytes) -> BaseModel:
    """Parse instance file contents of any problem."""
    return parse_instance(decode_json(text))


def load(path: str | Path, deadline: Deadline | None = None) -> BaseModel:
    """Read an instance file of any problem and return its typed, validated instance.

    ``deadline``: checked before each stage (reading, decoding the JSON, validating), and a
    file too large to decode in the time left is refused before it is decoded
    (:data:`LOAD_S_PER_MB`, times the slowdown measured now); each stage is one
    call that is not interrupted once started. Raises :class:`DeadlineReached` naming the stage."""
    p = Path(path)
    if deadline is None:
        return loads(read_capped(p))
    deadline.check(f"loading {p.name}, before reading it")
    data = read_capped(p)
    megabytes = len(data) / 1e6
    # Uncapped: a load once started is not interrupted, so a file that cannot load in the time
    # left at the slowdown measured now is refused (capped at 3×, a 12.9 MB file went in on a
    # 5 s limit at a measured 8-12× and took 13-15 s, #17); refusing costs nothing it could do.
    slower = gates.gate_slowdown() if megabytes >= MEASURED_FROM_MB else 1.0
    needed = LOAD_S_PER_MB * megabytes * slower
    if needed > deadline.remaining():
        raise DeadlineReached(
            f"loading {p.name}",
            f"{p.name} was not loaded: {megabytes:.1f} MB take about {needed:.1f} s to decode "
            f"and validate ({LOAD_S_PER_MB} s/MB quiet, this machine {slower:.1f}× slower now), "
            f"more than the {deadline.remaining():.1f} s left of the time limit",
        )
    doc = decode_json(data)
    deadline.check(f"loading {p.name}, after decoding its JSON")
    _import_in_time(doc, p.name, deadline)
    inst = parse_instance(doc)
    deadline.check(f"loading {p.name}, after validating it")
    return inst


def _import_in_time(doc: object, file: str, deadline: Deadline) -> None:
    """Import the package of the problem ``doc`` names, if it is not yet imported, once the
    import (:data:`IMPORT_S` quiet, times the slowdown now) fits in the time left; refused
    before it starts otherwise (an import, once started, is not interrupted)."""
    name = doc.get("problem") if isinstance(doc, dict) else None
    if not isinstance(name, str) or name not in problem_names() or problem_loaded(name):
        return  # nothing to import (a wrong name is parse_instance's to report)
    phase = f"loading {file}"
    gates.ensure_time_for(IMPORT_S, deadline, phase, f"{file} was not loaded: the {name} package")
    get_problem(name)
    deadline.check(f"{phase}, after importing the {name} package")


def to_json(obj: BaseModel) -> str:
    return json.dumps(obj.model_dump(mode="json"), indent=1, allow_nan=False) + "\n"


def dump(obj: BaseModel, path: str | Path) -> None:
    """Write an instance or a solution as JSON."""
    Path(path).write_text(to_json(obj))


def load_solution(instance: BaseModel, path: str | Path) -> BaseModel:
    """Read a solution file for ``instance``'s problem (same checks as instance files)."""
    spec = problem_of(instance)
    doc = decode_json(read_capped(Path(path)))
    if not isinstance(doc, dict):
        raise InvalidInstanceError("", f"a solution is a JSON object (got {type(doc).__name__})")
    # Every problem's solution may name its problem, and a name is checked against the
    # instance's (an admission solution labelled "reconfig" or "" validated as VALID, #16).
    if "problem" in doc and doc["problem"] != spec.name:
        raise InvalidInstanceError(
            "problem", f"a solution of {_got(doc['problem'])}, not of {spec.name!r} as the instance"
        )
    try:
        return spec.solution_type.model_validate(doc)
    except InvalidInstanceError:
        if "problem" not in doc:
            other = _problem_whose_solution(doc, spec.name)
            if other is not None:  # not "plans: required field is missing" (#16)
                raise InvalidInstanceError(
                    "problem", f"a solution of {other!r}, not of {spec.name!r} as the instance"
                ) from None
        raise
    except ValidationError as err:  # a problem package whose models are plain pydantic ones
        raise invalid_instance_error(err) from None
    except RecursionError:
        raise InvalidInstanceError("", "the document is nested too deeply") from None


def _problem_whose_solution(doc: dict[str, Any], but: str) -> str | None:
    """The one other problem whose solution format ``doc`` fits, if exactly one does."""
    fits = []
    for name in problem_names():
        if name == but:
            continue
        try:
            get_problem(name).solution_type.model_validate(doc)
        except (InvalidInstanceError, ValidationError, RecursionError):
            continue
        fits.append(name)
    return fits[0] if len(fits) == 1 else None


def json_schema(problem: str) -> dict[str, Any]:
    schema = get_problem(problem).instance_type.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


__all__ = ["dump", "json_schema", "load", "load_solution", "loads", "parse_instance", "to_json"]
