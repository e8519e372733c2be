"""What the command line shows of an expert-placement instance (``schedopt info``)."""

from __future__ import annotations

from .instance import MoePlacementInstance


def info(inst: MoePlacementInstance) -> list[tuple[str, str]]:
    """The layers and experts, the memory they take, where attention runs, the objective."""
    experts = [len(layer.experts) for layer in inst.layers]
    memory = sum(e.memory_gib for layer in inst.layers for e in layer.experts)
    spread = f"{min(experts)}" if min(experts) == max(experts) else f"{min(experts)}–{max(experts)}"
    rows = [
        ("layers", f"{len(inst.layers)}, {spread} experts each ({sum(experts)} in all)"),
        ("expert memory", f"{memory:,.4g} GiB, plus {inst.dense_memory_gib:g} GiB dense per GPU"),
        (
            "attention",
            "every GPU" if inst.attention_gpus is None else f"{len(inst.attention_gpus)} GPUs",
        ),
        ("objective", f"{inst.objective.mode}, layers kept within: {inst.layer_within.value}"),
    ]
    if inst.max_replicas_per_expert is not None:
        rows.append(("replicas", f"at most {inst.max_replicas_per_expert} per expert"))
    if inst.current_placement is not None:
        rows.append(("current placement", "given (moved experts are counted)"))
    return rows
