"""Pydantic ``ValidationError`` → :class:`InvalidInstanceError`, with paths as files read them."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from .errors import FieldProblems, InvalidInstanceError

_MAX_GOT_REPR = 60  # longest offending value quoted in an error reason


def loc_to_path(loc: Sequence[int | str]) -> str:
    """``("links", 3, "bandwidth_gbps")`` -> ``"links[3].bandwidth_gbps"``."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not _is_union_tag(part):
            path += f".{part}" if path else str(part)
    return path


def join_path(prefix: str, sub: str) -> str:
    if not prefix:
        return sub
    if not sub:
        return prefix
    return f"{prefix}{sub}" if sub.startswith("[") else f"{prefix}.{sub}"


def _is_union_tag(part: str) -> bool:
    # pydantic names the union member or validator function in the location of some errors.
    return part.startswith(("function-", "is-instance[")) or part in {"dict[str,any]"}


def invalid_instance_error(err: ValidationError) -> InvalidInstanceError:
    """Every problem pydantic found, each with its path; the first becomes ``path``/``reason``.

    Cross-field problems raised as :class:`FieldProblems` in model validators contribute one
    entry each, under the path of the model that raised them.
    """
    problems: list[tuple[str, str]] = []
    for e in err.errors():
        prefix = loc_to_path(e["loc"])
        inner = (e.get("ctx") or {}).get("error")
        if isinstance(inner, FieldProblems):
            problems.extend((join_path(prefix, p), r) for p, r in inner.problems)
            continue
        reason = e["msg"].removeprefix("Value error, ")
        if e["type"] == "missing":
            reason = "required field is missing"
        elif e["type"] == "extra_forbidden":
            reason = "unknown field"
        else:
            got = repr(e.get("input"))
            if len(got) <= _MAX_GOT_REPR:
                reason += f" (got {got})"
        problems.append((prefix, reason))
    if not problems:  # pragma: no cover - pydantic always reports at least one error
        problems.append(("", str(err)))
    path, reason = problems[0]
    return InvalidInstanceError(path, reason, problems=problems)
