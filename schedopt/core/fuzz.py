"""Hypothesis strategies for broken input, shared by every problem's ``strategies`` module
(re-exported by :mod:`schedopt.testing`, the test authors' API).

Needs the dev extra (hypothesis). For test authors: given a strategy of *valid* instance
documents, :func:`mutations` breaks them at random and :func:`corrupted_texts` breaks the JSON
text itself; a loader that is robust raises ``InvalidInstanceError`` on all of them and nothing
else.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from hypothesis import strategies as st

#: Values a mutation writes over a field: wrong signs, types, sizes and emptiness.
BAD_VALUES: tuple[Any, ...] = (-1, 0, -0.5, 3, "x", None, [], {}, 1e308, True, "")
#: Numbers no solver can take as they are: huge, tiny, just past int64 or exact doubles.
HOSTILE_NUMBERS: tuple[Any, ...] = (
    1e308,
    -1e308,
    1e20,
    1e-300,
    5e-324,
    2**53 + 1,
    2**63,
    2**64,
    -(2**63) - 1,
    10**400,
)
#: In-range extremes: numbers that load and then reach the solvers (a billion seconds, 2**20
#: GPUs, a millionth of an iteration per second...).
EXTREME_NUMBERS: tuple[Any, ...] = (1e-6, 1e-3, 1e6, 1e7, 1e9, 1e12, 1e15, 2**20)
#: JSON number tokens written over a number in the text: overflow to inf, underflow to 0, and
#: an integer past Python's 4,300-digit int-string limit.
HOSTILE_TOKENS: tuple[str, ...] = ("1e999", "-1e999", "1e-999", "9" * 5000, "-0")
_NUMBER = re.compile(r"(?<=[:\[,] )-?\d+(\.\d+)?([eE][-+]?\d+)?|(?<=[:\[,])-?\d+(\.\d+)?")


def mutations(
    documents: st.SearchStrategy[dict[str, Any]],
    *,
    bad_values: Sequence[Any] = BAD_VALUES,
    new_keys: Sequence[str] = ("-1", "0", "3", "X"),
    max_mutations: int = 3,
) -> st.SearchStrategy[Any]:
    """Documents from ``documents`` with 1..``max_mutations`` random edits: a value replaced by
    one of ``bad_values``, a key dropped, a mapping key renamed to one of ``new_keys``, a list
    item duplicated. Often invalid, sometimes still valid."""

    @st.composite
    def mutated(draw: st.DrawFn) -> Any:
        doc = draw(documents)
        n = draw(st.integers(1, max_mutations))
        return mutate(doc, lambda seq: draw(st.sampled_from(seq)), n, bad_values, new_keys)

    return mutated()


def mutate(
    doc: Any,
    choose: Callable[[Sequence[Any]], Any],
    n: int = 1,
    bad_values: Sequence[Any] = BAD_VALUES,
    new_keys: Sequence[str] = ("-1", "0", "3", "X"),
) -> Any:
    """A copy of ``doc`` with ``n`` random edits, each picked by ``choose(sequence)``: a value
    replaced by one of ``bad_values``, a number by a hostile or extreme one, a key
    dropped, a mapping key renamed to one of ``new_keys``, a list item duplicated. ``choose`` is
    ``random.Random.choice`` for a fuzz run or a hypothesis draw in :func:`mutations`."""
    doc = copy.deepcopy(doc)
    for _ in range(n):
        paths = list(_paths(doc))
        if not paths:
            break
        action = choose(["set", "drop", "dup", "rekey", "number"])
        if action == "number":  # a hostile or extreme number over a number of the document
            numbers = [p for p in paths if _is_number(_get(doc, p))]
            if numbers:
                parent, key = _resolve(doc, choose(numbers))
                parent[key] = choose([*HOSTILE_NUMBERS, *EXTREME_NUMBERS])
                continue
            action = "set"
        parent, key = _resolve(doc, choose(paths))
        if action == "set":
            parent[key] = copy.deepcopy(choose(list(bad_values)))
        elif action == "drop":
            del parent[key]
        elif action == "rekey" and isinstance(parent, dict):
            parent[choose(list(new_keys))] = parent.pop(key)
        elif isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
        else:
            parent[key] = copy.deepcopy(parent[key])
    return doc


def corrupt_text(text: str, rng: random.Random) -> str:
    """``text`` (a JSON document) broken at the text level: a number replaced by a hostile
    token (:data:`HOSTILE_TOKENS`), a value wrapped in thousands of brackets, truncated, a stray
    brace, or a quote swapped."""
    kind = rng.choice(["number", "number", "deep", "cut", "brace", "quote"])
    numbers = list(_NUMBER.finditer(text))
    if kind == "number" and numbers:
        m = rng.choice(numbers)
        return text[: m.start()] + rng.choice(HOSTILE_TOKENS) + text[m.end() :]
    if kind == "deep" and numbers:
        m = rng.choice(numbers)
        depth = rng.choice([100, 3000, 100_000])
        return text[: m.start()] + "[" * depth + m.group() + "]" * depth + text[m.end() :]
    cut = rng.randrange(len(text) + 1)
    if kind == "cut":
        return text[:cut]
    if kind == "brace":
        return text[:cut] + "}" + text[cut:]
    return text.replace('"', "'", 1)


def corrupted_texts(documents: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    """JSON texts of ``documents``, truncated, with a stray brace, with a quote swapped, or
    replaced by JSON that is no instance at all (``NaN``, ``[]``, ``null``)."""

    @st.composite
    def corrupted(draw: st.DrawFn) -> str:
        text = json.dumps(draw(documents))
        cut = draw(st.integers(0, len(text)))
        return draw(
            st.sampled_from(
                [
                    text[:cut],
                    text[:cut] + "}" + text[cut:],
                    text.replace('"', "'", 1),
                    "NaN",
                    "[]",
                    "null",
                    text,
                ]
            )
        )

    return corrupted()


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    parent, key = _resolve(doc, path)
    return parent[key]


def _resolve(doc: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    node = doc
    for part in path[:-1]:
        node = node[part]
    return node, path[-1]
