"""``schedopt export``: a problem's first level, from the same model every back-end gets."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .core import Model


def write_first_level(
    model: Model,
    path: str,
    fmt: str,
    *,
    describe: str,
    notes: Sequence[str] = (),
    unit_scale: float = 1.0,
) -> None:
    """Write the model with its first level as the objective (MPS or LP), the header naming
    the level (``describe``), the scale between the file's objective and schedopt's, and
    ``notes`` (e.g. which later levels are left out). ``unit_scale``: the model's level is in
    units this many times smaller than the objective schedopt reports (reconfig: µs in the
    model, seconds reported)."""
    from schedopt.backends.export import write_model  # PuLP, imported when exporting

    from .emit_pulp import PulpSession

    session = PulpSession(model)
    first = model.levels[0]
    session.set_level(first)
    scale = first.cpsat_scale * unit_scale
    scaled = (
        f"objective scale: {scale} (schedopt's {first.name} = this file's objective / {scale})"
        if scale != 1
        else f"objective scale: 1 (no scaling: the optimum is schedopt's {first.name})"
    )
    write_model(session.prob, path, fmt, level=describe, notes=(scaled, *notes))


def first_level_exporter(
    build: Callable[[Any], Model],
    describe: str,
    notes: Sequence[str] = (),
    unit_scale: float = 1.0,
) -> Callable[[Any, str, str], None]:
    """A problem's ``export_model(instance, path, fmt)``: ``build(instance)`` written by
    :func:`write_first_level` with the problem's description of its first level."""

    def export(instance: Any, path: str, fmt: str) -> None:
        write_first_level(
            build(instance), path, fmt, describe=describe, notes=notes, unit_scale=unit_scale
        )

    return export
