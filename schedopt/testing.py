"""Hypothesis strategies for broken input, shared by every problem's ``strategies`` module.

Needs the dev extra (hypothesis). For test authors: given a strategy of *valid* instance
documents, :func:`mutations` breaks them at random and :func:`corrupted_texts` breaks the JSON
text itself; a loader that is robust raises ``InvalidInstanceError`` on all of them and nothing
else.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Sequence
from typing import Any

from hypothesis import strategies as st

#: Values a mutation writes over a field: wrong signs, types, sizes and emptiness.
BAD_VALUES: tuple[Any, ...] = (-1, 0, -0.5, 3, "x", None, [], {}, 1e308, True, "")


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
        doc = copy.deepcopy(draw(documents))
        for _ in range(draw(st.integers(1, max_mutations))):
            paths = list(_paths(doc))
            if not paths:
                break
            parent, key = _resolve(doc, draw(st.sampled_from(paths)))
            action = draw(st.sampled_from(["set", "drop", "dup", "rekey"]))
            if action == "set":
                parent[key] = draw(st.sampled_from(list(bad_values)))
            elif action == "drop":
                del parent[key]
            elif action == "rekey" and isinstance(parent, dict):
                parent[draw(st.sampled_from(list(new_keys)))] = parent.pop(key)
            elif isinstance(parent, list):
                parent.append(copy.deepcopy(parent[key]))
            else:
                parent[key] = copy.deepcopy(parent[key])
        return doc

    return mutated()


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


def _resolve(doc: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    node = doc
    for part in path[:-1]:
        node = node[part]
    return node, path[-1]
