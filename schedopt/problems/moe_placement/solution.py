"""The placement decision: replicas of every expert of every layer, and their token shares."""

from __future__ import annotations

from typing import Literal

from schedopt.core.limits import Fraction
from schedopt.core.model import FrozenModel

_Frozen = FrozenModel


class Replica(_Frozen):
    """A copy of the expert on ``gpu``, receiving ``share`` of the expert's tokens."""

    gpu: str
    share: Fraction


class ExpertPlan(_Frozen):
    replicas: tuple[Replica, ...]

    @property
    def gpus(self) -> tuple[str, ...]:
        return tuple(r.gpu for r in self.replicas)


class LayerPlan(_Frozen):
    experts: tuple[ExpertPlan, ...]


class MoePlacementSolution(_Frozen):
    """``layers[l].experts[e].replicas``: in the order of the instance's layers and experts."""

    problem: Literal["moe_placement"] = "moe_placement"
    layers: tuple[LayerPlan, ...]

    def replicas(self) -> int:
        return sum(len(e.replicas) for layer in self.layers for e in layer.experts)
