"""The cost model of ``formulations/reconfig.md`` as the model's data use it.

Stage times, memory and the all-reduce of a stage with ``n`` uniform layers, computed once per
instance (:class:`CostModel`). Every time is a whole µs, rounded up (the formulation's integer
scaling). The validator has its own implementation of the same formulas (``validate.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .instance import ReconfigInstance

GIB = 2**30
#: Bytes of model state per parameter: bf16 weights and gradients, fp32 master copy and moments.
STATE_BYTES = 16
#: A time within this many µs below an integer counts as that integer (float noise).
ROUND_EPS_US = 1e-6


def ceil_us(x: float) -> int:
    return max(0, math.ceil(x - ROUND_EPS_US))


#: The last cluster's bandwidths: ``auto`` builds the data four times (three heuristics and
#: the exact method), and the walk over the links took 0.45 s each on 16,384 GPUs.
_LAST: tuple[object, tuple[float, float]] | None = None


def link_bandwidths(inst: ReconfigInstance) -> tuple[float, float]:
    """(B_nv, B_ib) in bytes/s: the smallest NVLink (else PCIe) link of a GPU, and the smallest
    host uplink (IB, else Ethernet) divided by the host's GPUs (the last cluster's, memoised)."""
    global _LAST
    last = _LAST
    if last is not None and last[0] is inst.cluster:
        return last[1]
    found = _link_bandwidths(inst)
    _LAST = (inst.cluster, found)
    return found


def _link_bandwidths(inst: ReconfigInstance) -> tuple[float, float]:
    spec = inst.cluster.to_spec()
    hosts = {h.id for h in spec.hosts}
    per_host: dict[str, int] = {}
    for g in spec.gpus:
        per_host[g.host] = per_host.get(g.host, 0) + 1
    gpu_links: dict[str, dict[str, float]] = {}
    uplink: dict[str, float] = {}
    for ln in spec.links:
        for end, other in ((ln.a, ln.b), (ln.b, ln.a)):
            if end in per_host and other not in hosts and ln.kind in ("ib", "ethernet"):
                uplink[end] = uplink.get(end, 0.0) + ln.bandwidth_gbps
        for end in (ln.a, ln.b):
            if ln.kind in ("nvlink", "pcie"):
                kinds = gpu_links.setdefault(end, {})
                kinds[ln.kind] = max(kinds.get(ln.kind, 0.0), ln.bandwidth_gbps)
    gpus = set(inst.cluster.gpus())
    nv = [
        links.get("nvlink", links.get("pcie", 0.0)) for g, links in gpu_links.items() if g in gpus
    ]
    b_nv = min((x for x in nv if x > 0), default=min(ln.bandwidth_gbps for ln in spec.links))
    ib = [uplink[h] / n for h, n in per_host.items() if h in uplink]
    b_ib = min(ib) if ib else min(ln.bandwidth_gbps for ln in spec.links)
    return b_nv * 1e9 / 8, b_ib * 1e9 / 8


@dataclass(frozen=True)
class CostModel:
    layers: int
    layer_params: float
    edge_params: float  # V·h: the embedding (stage 0) and the output layer (last stage)
    total_params: float
    layer_flops: float  # forward + backward (+ recomputation) per micro-batch
    out_flops: float
    flops_per_us: float  # one GPU of speed 1·σ at the achieved efficiency
    sbh: float  # s·b·h
    heads: int
    seq: int
    hidden: int
    vocab: int
    micro_batch: int
    sequence_parallel: bool
    recompute: bool
    b_nv: float
    b_ib: float
    memory_cap: float  # bytes per GPU for state and activations
    #: the per-stage linear forms, computed once per key (time_line, memory_line)
    _lines: dict[tuple, tuple[float, float]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def of(cls, inst: ReconfigInstance) -> CostModel:
        m = inst.model
        h, a, s, b, v = m.hidden, m.heads, m.seq_len, inst.micro_batch, m.vocab
        kv = m.kv_heads or a
        f = m.ffn_hidden or 4 * h
        mlp = (3 if m.gated_mlp else 2) * h * f
        layer_params = 2.0 * h * h + 2.0 * h * (h * kv / a) + mlp + 2.0 * h
        fwd = 2.0 * b * s * (layer_params - 2.0 * h) + 4.0 * b * s * s * h
        gpu = inst.cluster.to_spec().gpus[0]
        b_nv, b_ib = link_bandwidths(inst)
        return cls(
            layers=m.layers,
            layer_params=layer_params,
            edge_params=float(v * h),
            total_params=m.layers * layer_params + 2.0 * v * h,
            layer_flops=(4.0 if inst.recompute else 3.0) * fwd,
            out_flops=3.0 * 2.0 * b * s * v * h,
            flops_per_us=inst.gpu_peak_tflops * 1e6 * inst.compute_efficiency * gpu.speed,
            sbh=float(s * b * h),
            heads=a,
            seq=s,
            hidden=h,
            vocab=v,
            micro_batch=b,
            sequence_parallel=inst.sequence_parallel,
            recompute=inst.recompute,
            b_nv=b_nv,
            b_ib=b_ib,
            memory_cap=(gpu.memory_gib - inst.memory_reserve_gib) * GIB,
        )

    # --- per layer ---------------------------------------------------------------------------
    def activation_bytes(self, t: int) -> float:
        """Korthikanti et al. 2022: activations of one layer and micro-batch on one GPU."""
        sbh, att = self.sbh, 5.0 * self.heads * self.seq / self.hidden
        if self.recompute:
            return 2.0 * sbh / (t if self.sequence_parallel else 1)
        if t == 1:
            return sbh * (34.0 + att)
        if self.sequence_parallel:
            return sbh * (34.0 / t + att / t)
        return sbh * (10.0 + 24.0 / t + att / t)

    def tp_us(self, t: int) -> float:
        """Four ring all-reduces of 2·s·b·h bytes per layer and micro-batch over NVLink."""
        if t == 1:
            return 0.0
        return 4.0 * 2.0 * (t - 1) / t * 2.0 * self.sbh / self.b_nv * 1e6

    def p2p_us(self, t: int) -> float:
        return 2.0 * 2.0 * self.sbh / t / self.b_ib * 1e6

    # --- per stage: linear in the number of layers n ----------------------------------------
    def time_line(self, last: bool, t: int, p: int, kappa: float) -> tuple[float, float]:
        """(µs per layer, fixed µs) of a stage: compute at κ, TP all-reduces, point-to-point."""
        key = ("t", last, t, p, kappa)
        found = self._lines.get(key)
        if found is None:
            speed = t * self.flops_per_us * kappa
            per = self.layer_flops / speed + self.tp_us(t)
            fixed = (self.out_flops / speed if last else 0.0) + (self.p2p_us(t) if p > 1 else 0.0)
            found = self._lines[key] = (per, fixed)
        return found

    def memory_line(self, first: bool, last: bool, t: int, inflight: int) -> tuple[float, float]:
        """(bytes per layer, fixed bytes) of a stage's GPU: state, in-flight activations, logits."""
        key = ("m", first, last, t, inflight)
        found = self._lines.get(key)
        if found is None:
            per = STATE_BYTES * self.layer_params / t + inflight * self.activation_bytes(t)
            fixed = STATE_BYTES * self.edge_params * (int(first) + int(last)) / t + (
                4.0 * self.seq * self.micro_batch * self.vocab / t if last else 0.0
            )
            found = self._lines[key] = (per, fixed)
        return found

    def stage_us(self, n: int, first: bool, last: bool, t: int, p: int, kappa: float) -> int:
        per, fixed = self.time_line(last, t, p, kappa)
        return ceil_us(n * per + fixed)

    def stage_bytes(self, n: int, first: bool, last: bool, t: int, inflight: int) -> float:
        per, fixed = self.memory_line(first, last, t, inflight)
        return n * per + fixed

    def fits(self, n: int, first: bool, last: bool, t: int, inflight: int) -> bool:
        return self.stage_bytes(n, first, last, t, inflight) <= self.memory_cap

    def max_layers(
        self, first: bool, last: bool, t: int, p: int, kappa: float, tau: int, inflight: int
    ) -> int:
        """The most layers (≤ L) a stage can hold within ``tau`` µs and its memory: the two
        linear bounds solved for n, then checked with the same expressions (float rounding)."""
        per, fixed = self.time_line(last, t, p, kappa)
        mper, mfixed = self.memory_line(first, last, t, inflight)
        limit = tau + ROUND_EPS_US

        def ok(k: int) -> bool:  # the very expressions of stage_us and fits
            return ceil_us(k * per + fixed) <= tau and k * mper + mfixed <= self.memory_cap

        n = self.layers
        if per > 0:
            n = min(n, math.floor((limit - fixed) / per))
        if mper > 0:
            n = min(n, math.floor((self.memory_cap - mfixed) / mper))
        n = max(n, -1)
        while n + 1 <= self.layers and ok(n + 1):
            n += 1
        while n >= 0 and not ok(n):
            n -= 1
        return max(n, 0)

    def sync_us(self, gpus: int) -> int:
        """DP gradient all-reduce of a GPU's shard (2 bytes · P / the pipeline's GPUs) at the
        ring bound."""
        return ceil_us(2.0 * 2.0 * self.total_params / gpus / self.b_ib * 1e6)

    def copy_s(self, gpus: int) -> float:
        """Seconds to copy a rebuilt pipeline's state to its GPUs, in parallel, over IB."""
        return STATE_BYTES * self.total_params / gpus / self.b_ib

    @property
    def state_gb(self) -> float:
        """GB of model state a rebuilt pipeline moves."""
        return STATE_BYTES * self.total_params / 1e9
