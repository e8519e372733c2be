"""The JSON instance format: ``{"problem": ..., "schema_version": 1, ...}``.

Only ``json`` and pydantic touch the input: no pickle, no eval. Every way an input can be wrong
ends as :class:`~schedopt.core.errors.InvalidInstanceError` naming the field path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from schedopt.core.errors import FieldProblems, InvalidInstanceError
from schedopt.core.registry import get_problem, problem_of, problems

SCHEMA_VERSION = 1
#: Files larger than this are refused before parsing.
MAX_FILE_BYTES = 512 * 1024 * 1024


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _join(prefix: str, path: str) -> str:
    if not prefix:
        return path
    if not path:
        return prefix
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


def from_validation_error(err: ValidationError) -> InvalidInstanceError:
    found: list[tuple[str, str]] = []
    for e in err.errors():
        where = _path(tuple(p for p in e["loc"] if not _is_union_tag(p)))
        ctx_error = (e.get("ctx") or {}).get("error")
        if isinstance(ctx_error, FieldProblems):
            found.extend((_join(where, p), r) for p, r in ctx_error.split())
            continue
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "missing":
            msg = "required field is missing"
        elif e["type"] == "extra_forbidden":
            msg = "unknown field"
        elif "input" in e and e["type"] not in ("model_type",):
            shown = repr(e["input"])
            msg += f" (got {shown[:60]}{'…' if len(shown) > 60 else ''})"
        found.append((where, msg))
    path, reason = found[0] if found else ("", str(err))
    return InvalidInstanceError(path, reason, found)


def _is_union_tag(part: Any) -> bool:
    # pydantic inserts the member type name into the location of union errors.
    return isinstance(part, str) and (part.startswith("function-") or part in {"dict[str,any]"})


def _reject_constants(token: str) -> float:
    raise InvalidInstanceError("", f"{token} is not a number JSON allows")


def parse_instance(doc: Any) -> BaseModel:
    """Validate a decoded JSON document and return the typed instance of its problem."""
    if not isinstance(doc, dict):
        raise InvalidInstanceError("", f"an instance is a JSON object (got {type(doc).__name__})")
    name = doc.get("problem")
    if name not in problems():
        raise InvalidInstanceError("problem", f"must be one of {list(problems())} (got {name!r})")
    version = doc.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise InvalidInstanceError(
            "schema_version", f"this schedopt reads version {SCHEMA_VERSION} (got {version!r})"
        )
    spec = get_problem(name)
    try:
        return spec.instance_type.model_validate(doc)
    except ValidationError as err:
        raise from_validation_error(err) from None
    except RecursionError:
        raise InvalidInstanceError("", "the document is nested too deeply") from None


def loads(text: str | bytes) -> BaseModel:
    try:
        doc = json.loads(text, parse_constant=_reject_constants)
    except json.JSONDecodeError as err:
        raise InvalidInstanceError(
            f"line {err.lineno} column {err.colno}", f"malformed JSON: {err.msg}"
        ) from None
    except (UnicodeDecodeError, RecursionError) as err:
        raise InvalidInstanceError("", f"not a readable JSON document: {err}") from None
    return parse_instance(doc)


def load(path: str | Path) -> BaseModel:
    """Read an instance file of any problem and return its typed, validated instance."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InvalidInstanceError("", f"{p} is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
        data = p.read_bytes()
    except OSError as err:
        raise InvalidInstanceError("", f"cannot read {p}: {err.strerror or err}") from None
    return loads(data)


def to_json(obj: BaseModel) -> str:
    return json.dumps(obj.model_dump(mode="json"), indent=1, allow_nan=False) + "\n"


def dump(obj: BaseModel, path: str | Path) -> None:
    """Write an instance or a solution as JSON."""
    Path(path).write_text(to_json(obj))


def load_solution(instance: BaseModel, path: str | Path) -> BaseModel:
    """Read a solution file for ``instance``'s problem."""
    spec = problem_of(instance)
    try:
        doc = json.loads(Path(path).read_text(), parse_constant=_reject_constants)
        return spec.solution_type.model_validate(doc)
    except OSError as err:
        raise InvalidInstanceError("", f"cannot read {path}: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise InvalidInstanceError(f"line {err.lineno}", f"malformed JSON: {err.msg}") from None
    except ValidationError as err:
        raise from_validation_error(err) from None


def json_schema(problem: str) -> dict[str, Any]:
    schema = get_problem(problem).instance_type.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


__all__ = ["dump", "json_schema", "load", "load_solution", "loads", "parse_instance", "to_json"]
