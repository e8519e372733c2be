"""Write a PuLP model for an external solver, with a header saying what it is.

The MPS file carries its objective sense in an ``OBJSENSE`` section (PuLP's default writes it
only as a comment, and solvers then minimise a maximisation). The header, comment lines at the
top, names the level exported, the sense and every scaling between the file's objective and
schedopt's, so that any solver's optimum can be compared with ``schedopt solve``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulp


def write_model(
    prob: pulp.LpProblem,
    path: str,
    fmt: str,
    *,
    level: str = "",
    notes: Sequence[str] = (),
) -> None:
    """Write ``prob`` as ``mps`` or ``lp`` to ``path`` (and nothing else anywhere).

    ``level`` names the objective level the file holds; ``notes`` state the scaling (how to
    turn the file's optimum into schedopt's objective) and anything else a reader needs.
    """
    if fmt not in ("mps", "lp"):
        raise ValueError(f"unknown model format {fmt!r}; use 'mps' or 'lp'")
    sense = "MAXIMIZE" if prob.sense == pulp.LpMaximize else "MINIMIZE"
    constant = float(prob.objective.constant) if prob.objective is not None else 0.0
    lines = [
        f"schedopt model {prob.name!r}",
        f"objective level: {level or 'the model objective'}",
        f"objective sense: {sense}" + (" (OBJSENSE section below)" if fmt == "mps" else ""),
        *notes,
    ]
    if constant:
        lines.append(f"objective constant {constant!r} is not in this file: add it to the optimum")
    if fmt == "mps":
        prob.writeMPS(path, with_objsense=True)
        comment = "* "
    else:
        prob.writeLP(path)
        comment = "\\ "
    # PuLP writes the file itself; the header goes in front of what it wrote.
    with open(path) as f:
        body = f.read()
    with open(path, "w") as f:
        f.write("".join(f"{comment}{line}\n" for line in lines))
        f.write(body)
