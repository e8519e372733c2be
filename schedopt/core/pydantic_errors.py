"""Pydantic ``ValidationError`` → :class:`InvalidInstanceError`, with paths as files read them.

Building the message must never fail on the very input it reports: a hostile document can hold
an integer too long for ``repr`` (Python's 4,300-digit limit) or a list nested thousands deep
(``repr`` would recurse), so offending values are described by :func:`describe`, which never
recurses and never converts a huge integer to text.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from .errors import FieldProblems, InvalidInstanceError

_MAX_GOT_REPR = 60  # longest offending value quoted in an error reason
_MAX_INT_BITS = 200  # integers wider than this are described by their size, not their digits


def loc_to_path(loc: Sequence[int | str]) -> str:
    """``("links", 3, "bandwidth_gbps")`` -> ``"links[3].bandwidth_gbps"``."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part == "[key]" or _is_union_tag(part):  # pydantic's own markers
            continue
        elif not part.isidentifier():  # a mapping key, e.g. a GPU count "-1" or a host "h/0"
            path += f"[{part!r}]" if len(part) <= _MAX_GOT_REPR else "[...]"
        else:
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


def describe(value: object) -> str | None:
    """A short quotable form of an offending value, or None when it has none worth quoting.

    Never recursive and never ``str(int)`` on a huge integer, so it cannot raise on hostile input.
    """
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() > _MAX_INT_BITS:
            return f"an integer of {value.bit_length():,} bits"
        return repr(value)
    if isinstance(value, float | str | bytes):
        text = repr(value)
        return text if len(text) <= _MAX_GOT_REPR else None
    if isinstance(value, list | tuple | dict | set | frozenset):
        if not value:
            return repr(value)
        return None
    return None


def invalid_instance_error(err: ValidationError) -> InvalidInstanceError:
    """Every problem pydantic found, each with its path; the first becomes ``path``/``reason``.

    Cross-field problems raised as :class:`FieldProblems` (or an :class:`InvalidInstanceError`
    from a nested constructor) in model validators contribute one entry each, under the path of
    the model that raised them.
    """
    problems: list[tuple[str, str]] = []
    for e in err.errors():
        prefix = loc_to_path(e["loc"])
        inner = (e.get("ctx") or {}).get("error")
        if isinstance(inner, FieldProblems | InvalidInstanceError):
            problems.extend((join_path(prefix, p), r) for p, r in inner.problems)
            continue
        reason = e["msg"].removeprefix("Value error, ")
        if e["type"] == "missing":
            reason = "required field is missing"
        elif e["type"] == "extra_forbidden":
            reason = "unknown field"
        else:
            got = describe(e.get("input"))
            if got is not None:
                reason += f" (got {got})"
        problems.append((prefix, reason))
    if not problems:  # pragma: no cover - pydantic always reports at least one error
        problems.append(("", "invalid input"))
    path, reason = problems[0]
    return InvalidInstanceError(path, reason, problems=problems)
