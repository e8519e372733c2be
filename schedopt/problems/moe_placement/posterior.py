"""Popularity under uncertainty: a Dirichlet–multinomial posterior per layer from routing counts.

For a layer with observed routing counts ``n_e`` and prior concentration ``α`` per expert, the
posterior of the layer's routing shares is ``π ~ Dirichlet(α + n)``; a future batch of ``T``
routed tokens (``tokens_per_batch``) gives popularity ``p ~ Multinomial(T, π)`` (the posterior
predictive, Dirichlet–multinomial). Layers without counts keep their point popularity in every
scenario. With ``effective_tokens`` the counts are first scaled to sum to that many tokens
(a tempered, "power" posterior: real routing is overdispersed across batches and text domains,
so the raw multinomial likelihood of millions of tokens is overconfident). Sampling uses only
the ``numpy.random.Generator`` passed in (seeded by the caller).
"""

from __future__ import annotations

import numpy as np

from .instance import MoePlacementInstance


def alpha(inst: MoePlacementInstance, layer: int) -> np.ndarray | None:
    """Posterior Dirichlet parameters ``α + n`` of ``layer``; None without routing counts."""
    experts = inst.layers[layer].experts
    if not all(e.routing_count is not None for e in experts):
        return None
    counts = np.array(inst.tempered_counts(inst.layers[layer]))
    return inst.prior_concentration + counts


def posterior_mean(inst: MoePlacementInstance, layer: int) -> np.ndarray | None:
    """E[π] = (α + n) / Σ(α + n); None without routing counts."""
    a = alpha(inst, layer)
    return None if a is None else a / a.sum()


def batch_tokens(inst: MoePlacementInstance, layer: int) -> int:
    """T: routed tokens of one batch in ``layer`` (tokens_per_batch, else Σ popularity)."""
    spec = inst.layers[layer]
    if spec.tokens_per_batch is not None:
        return max(1, round(spec.tokens_per_batch))
    return max(1, round(sum(e.popularity or 0.0 for e in spec.experts)))


def scenario_popularity(
    inst: MoePlacementInstance, scenarios: int, rng: np.random.Generator
) -> list[list[tuple[float, ...]]]:
    """``scenarios`` draws of every layer's popularity (tokens per batch per expert)."""
    out: list[list[tuple[float, ...]]] = [[] for _ in range(scenarios)]
    for li in range(len(inst.layers)):
        a = alpha(inst, li)
        if a is None:
            point = inst.point_popularity(li)
            for s in range(scenarios):
                out[s].append(point)
            continue
        shares = rng.dirichlet(a, size=scenarios)
        tokens = batch_tokens(inst, li)
        for s in range(scenarios):
            draw = rng.multinomial(tokens, shares[s] / shares[s].sum())
            out[s].append(tuple(float(v) for v in draw))
    return out
