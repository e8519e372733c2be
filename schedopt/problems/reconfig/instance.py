"""The reconfiguration instance: the typed, validated form of an instance file.

Field ranges come from :mod:`schedopt.core.limits`; cross-field checks (GPU ids of failures,
slow GPUs and the current plan, the batch, one GPU type) raise
:class:`~schedopt.core.errors.FieldProblems` with paths such as ``slow_gpus[1].gpu``.
See ``formulations/reconfig.md``.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Annotated, Final, Literal

from pydantic import Field, model_validator

from schedopt.core.errors import FieldProblems
from schedopt.core.limits import MAX_SECONDS, NonNegMemoryGib, Seconds
from schedopt.core.model import FrozenModel
from schedopt.topology import Cluster

PROBLEM: Final = "reconfig"

#: Largest dimension of a model config (hidden size, MLP width, vocabulary, sequence).
MAX_DIM = 2**20
MAX_LAYERS = 1024
#: Most micro-batches per iteration (B/b): bounds q_k, w_kj and the C9 row.
MAX_MICRO_BATCHES = 65_536

Dim = Annotated[int, Field(ge=1, le=MAX_DIM)]
TpSize = Annotated[int, Field(ge=1, le=64)]


class ModelConfig(FrozenModel):
    """A decoder-only transformer: uniform layers, embedding and (untied) output layer."""

    name: str = "model"
    layers: int = Field(ge=1, le=MAX_LAYERS)
    hidden: Dim
    heads: Dim
    kv_heads: Dim | None = Field(default=None, description="GQA key/value heads (default heads)")
    ffn_hidden: Dim | None = Field(default=None, description="MLP width (default 4·hidden)")
    gated_mlp: bool = Field(default=False, description="SwiGLU: three MLP matrices")
    vocab: Dim
    seq_len: Dim

    @model_validator(mode="after")
    def _check(self) -> ModelConfig:
        problems = []
        if self.hidden % self.heads:
            problems.append(("heads", f"must divide hidden ({self.hidden})"))
        if self.kv_heads is not None and self.heads % self.kv_heads:
            problems.append(("kv_heads", f"must divide heads ({self.heads})"))
        if problems:
            raise FieldProblems(problems)
        return self


class SlowGpu(FrozenModel):
    gpu: str = Field(min_length=1)
    speed_factor: float = Field(
        gt=0, lt=1, allow_inf_nan=False, description="κ: the fraction of its speed it runs at"
    )


class Stage(FrozenModel):
    """Layers ``layer_start .. layer_end − 1`` on a TP group (``gpus``, TP rank order)."""

    layer_start: int = Field(ge=0, le=MAX_LAYERS)
    layer_end: int = Field(ge=1, le=MAX_LAYERS)
    gpus: tuple[str, ...] = Field(min_length=1, max_length=64)


class Pipeline(FrozenModel):
    stages: tuple[Stage, ...] = Field(min_length=1, max_length=MAX_LAYERS)
    micro_batches: int = Field(ge=0, le=MAX_MICRO_BATCHES)


class ReconfigInstance(FrozenModel):
    problem: Literal["reconfig"] = PROBLEM
    schema_version: Literal[1] = 1
    name: str = "reconfig"
    cluster: Cluster
    failed_gpus: tuple[str, ...] = ()
    slow_gpus: tuple[SlowGpu, ...] = ()
    model: ModelConfig
    global_batch: int = Field(ge=1, le=MAX_MICRO_BATCHES * 64, description="sequences")
    micro_batch: int = Field(default=1, ge=1, le=64, description="sequences")
    gpu_peak_tflops: float = Field(
        default=989.0,
        ge=1e-3,
        le=1e6,
        allow_inf_nan=False,
        description="peak dense bf16 TFLOP/s of a GPU of speed 1 (H100 SXM: 989)",
    )
    compute_efficiency: float = Field(
        default=0.5, gt=0, le=1, allow_inf_nan=False, description="achieved share of peak"
    )
    sequence_parallel: bool = True
    recompute: bool = Field(default=False, description="full activation recomputation")
    tp_sizes: tuple[TpSize, ...] = Field(default=(1, 2, 4, 8), min_length=1)
    max_stages: int = Field(default=16, ge=1, le=MAX_LAYERS)
    memory_reserve_gib: NonNegMemoryGib = Field(default=4.0, description="per GPU, framework")
    current_plan: tuple[Pipeline, ...] | None = Field(
        default=None, description="the healthy plan on the whole cluster"
    )
    checkpoint_interval_s: Seconds = 3600.0
    restart_s: Seconds = 600.0
    failure_rate_per_hour: float | None = Field(default=None, gt=0, le=1e3, allow_inf_nan=False)

    @model_validator(mode="after")
    def _cross_checks(self) -> ReconfigInstance:
        problems: list[tuple[str, str]] = []
        spec = self.cluster.to_spec()
        known = {g.id for g in spec.gpus}
        if len({(g.gpu_type, g.memory_gib, g.speed) for g in spec.gpus}) > 1:
            problems.append(("cluster.gpus", "all GPUs must have one type, memory and speed"))
        failed: set[str] = set()
        for i, g in enumerate(self.failed_gpus):
            if g not in known:
                problems.append((f"failed_gpus[{i}]", f"unknown GPU {g!r}"))
            elif g in failed:
                problems.append((f"failed_gpus[{i}]", f"duplicate GPU {g!r}"))
            failed.add(g)
        if known and failed >= known:
            problems.append(("failed_gpus", "no GPU survives"))
        slow: set[str] = set()
        for i, s in enumerate(self.slow_gpus):
            if s.gpu not in known:
                problems.append((f"slow_gpus[{i}].gpu", f"unknown GPU {s.gpu!r}"))
            elif s.gpu in failed:
                problems.append((f"slow_gpus[{i}].gpu", f"GPU {s.gpu!r} failed"))
            elif s.gpu in slow:
                problems.append((f"slow_gpus[{i}].gpu", f"duplicate GPU {s.gpu!r}"))
            slow.add(s.gpu)
        if self.global_batch % self.micro_batch:
            problems.append(
                ("global_batch", f"must be a multiple of micro_batch ({self.micro_batch})")
            )
        elif self.global_batch // self.micro_batch > MAX_MICRO_BATCHES:
            problems.append(("global_batch", f"at most {MAX_MICRO_BATCHES} micro-batches"))
        if len(set(self.tp_sizes)) != len(self.tp_sizes):
            problems.append(("tp_sizes", "duplicate TP degree"))
        if self.failure_rate_per_hour is not None and self.current_plan is None:
            problems.append(("current_plan", "required with failure_rate_per_hour (T_ref)"))
        if self.current_plan is not None:
            problems.extend(self._plan_problems(known))
        if not problems:
            problems.extend(self._magnitude_problems())
        if problems:
            raise FieldProblems(problems)
        return self

    def _magnitude_problems(self) -> list[tuple[str, str]]:
        """The models hold times in whole µs (CP-SAT int64, HiGHS coefficients below 1e15,
        doubles exact below 2**53): bound the first level of every plan, (M + L) micro-batch
        slots of the whole model on one GPU at the slowest factor plus the all-reduce and the
        amortised recovery, by MAX_SECONDS (1e15 µs). The links are bounded by the narrowest
        one (over a host's GPUs for IB), so no path search is needed; see ``cost.py`` for the
        formulas this over-estimates."""
        spec, m = self.cluster.to_spec(), self.model
        h, a, s, b, v, L = m.hidden, m.heads, m.seq_len, self.micro_batch, m.vocab, m.layers
        kv, f = m.kv_heads or a, m.ffn_hidden or 4 * h
        layer = 2.0 * h * h + 2.0 * h * h * kv / a + (3 if m.gated_mlp else 2) * h * f + 2.0 * h
        params = L * layer + 2.0 * v * h
        flops = (
            L * (4 if self.recompute else 3) * (2.0 * b * s * (layer - 2 * h) + 4.0 * b * s * s * h)
            + 6.0 * b * s * v * h
        )
        narrow = min(ln.bandwidth_gbps for ln in spec.links) * 1e9 / 8  # bytes/s
        per_host: dict[str, int] = {}
        for g in spec.gpus:
            per_host[g.host] = per_host.get(g.host, 0) + 1
        ib = narrow / max(per_host.values())
        sbh = float(s * b * h)
        speed = self.gpu_peak_tflops * 1e12 * self.compute_efficiency * spec.gpus[0].speed
        kappas = [x.speed_factor for x in self.slow_gpus]

        def first_level_s(kappa: float) -> tuple[float, float]:
            """(iteration time, amortised recovery) bounds in seconds (inf on overflow)."""
            try:
                tau = flops / (speed * kappa) + L * 16 * sbh / narrow + 4 * sbh / ib
                t = (self.micro_batches + L) * tau + 4 * params / ib
                rate = self.failure_rate_per_hour or 0.0
                recovery = max(self.restart_s + self.checkpoint_interval_s / 2, 16 * params / ib)
                return t, (recovery * t * rate / 3600 if rate else 0.0)
            except (ZeroDivisionError, OverflowError):
                return math.inf, math.inf

        slowest = min(kappas, default=1.0)
        t, rec = first_level_s(slowest)
        if t + rec <= MAX_SECONDS:  # false for inf and NaN too
            return []
        why = (
            f"the models' times reach {t + rec:.3g} s (iteration {t:.3g} s + amortised "
            f"recovery {rec:.3g} s, bounded from layers, hidden, seq_len, vocab, micro_batch, "
            f"global_batch, gpu_peak_tflops, compute_efficiency, the GPUs' speed, the "
            f"narrowest link, the slowest speed_factor, restart_s, checkpoint_interval_s and "
            f"failure_rate_per_hour); they must stay below {MAX_SECONDS:.0e} s (whole µs in "
            f"the solvers)"
        )
        if slowest < 1.0 and sum(first_level_s(1.0)) <= MAX_SECONDS:
            return [(f"slow_gpus[{kappas.index(slowest)}].speed_factor", why)]
        if rec > 0 and t <= MAX_SECONDS:
            return [("failure_rate_per_hour", why)]
        return [("model", why)]

    def _plan_problems(self, known: set[str]) -> list[tuple[str, str]]:
        """The current plan: known GPUs, each once, inside one host, every layer in order."""
        problems: list[tuple[str, str]] = []
        seen: set[str] = set()
        plan = self.current_plan or ()
        if not plan:
            problems.append(("current_plan", "empty; omit it when there is none"))
        total = 0
        for pi, pipe in enumerate(plan):
            total += pipe.micro_batches
            at = 0
            for si, stage in enumerate(pipe.stages):
                where = f"current_plan[{pi}].stages[{si}]"
                if stage.layer_start != at or stage.layer_end <= stage.layer_start:
                    problems.append((where, f"layers must continue at {at}"))
                at = stage.layer_end
                hosts = set()
                for gi, g in enumerate(stage.gpus):
                    if g not in known:
                        problems.append((f"{where}.gpus[{gi}]", f"unknown GPU {g!r}"))
                        continue
                    if g in seen:
                        problems.append((f"{where}.gpus[{gi}]", f"GPU {g!r} used twice"))
                    seen.add(g)
                    hosts.add(self.cluster.host_of(g))
                if len(hosts) > 1:
                    problems.append((f"{where}.gpus", "a TP group spans hosts"))
            if at != self.model.layers:
                problems.append(
                    (f"current_plan[{pi}]", f"covers {at} of {self.model.layers} layers")
                )
        if plan and total != self.micro_batches:
            problems.append(
                ("current_plan", f"{total} micro-batches, the batch has {self.micro_batches}")
            )
        return problems

    # --- derived views ---------------------------------------------------------------------
    @property
    def micro_batches(self) -> int:
        """M = B / b."""
        return self.global_batch // self.micro_batch

    @cached_property
    def slow_factor(self) -> dict[str, float]:
        return {s.gpu: s.speed_factor for s in self.slow_gpus}
