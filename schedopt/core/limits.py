"""The documented finite range of every kind of number an instance or solution holds.

Every solver must represent every number the models form from these: CP-SAT takes int64
coefficients and rejects a model whose sums could overflow, HiGHS treats |x| >= 1e20 as
infinite, and doubles hold integers exactly only up to 2**53. The ranges below are wide enough
for any real cluster and narrow enough that the per-field products the models form
(rate × slot length × slots, value × VALUE_SCALE × jobs, ...) stay far inside those limits;
where a product of several fields can still grow too large, the instance's model validator
checks it and names the field. The ranges appear in the JSON Schema
(``python -m schedopt schema <problem>``) as ``minimum``/``maximum``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

#: Largest magnitude any integer the models build may reach (a quarter of int64, so that CP-SAT
#: can add two of them; far below where HiGHS's 1e20 means infinity).
MAX_MODEL_INT = 2**61
#: Largest integer a double holds exactly; sums compared in floating point stay below it.
MAX_EXACT_INT = 2**53

#: The smallest positive value of a quantity that must be > 0: no denormals (5e-324), whose
#: quotients overflow to inf and then make NaN (inf * 0) inside the models.
MIN_POSITIVE = 1e-6
MAX_SECONDS = 1e9  # ≈ 31.7 years: times, deadlines, horizons, costs in seconds
MIN_STEP_S = 1e-3  # a slot or round of at least a millisecond
MAX_RATE = 1e9  # iterations per second
#: Iterations (and iterations in one slot): model coefficients stay below HiGHS's
#: ``large_matrix_value`` (1e15, beyond which it refuses the model) with room for scaling.
MAX_ITERATIONS = 10**12
MAX_GPUS = 2**20  # GPUs in one job, host or allocation
MAX_COUNT = 10**9  # other counts (preemptions, replicas)
MIN_WEIGHT, MAX_WEIGHT = 1e-6, 1e6  # relative weights (jobs, tenants)
MIN_VALUE, MAX_VALUE = 1e-3, 1e9  # a deadline tier's value (resolved to 1/1000)
MAX_GPU_SECONDS = 1e15  # fair-share accounts
MIN_MEMORY_GIB, MAX_MEMORY_GIB = 1e-3, 1e6  # 1 MiB .. 1 PiB (the MoE models round memory to
# about 1e-6 GiB, so smaller sizes would be lost in their rounding)
MIN_SPEED, MAX_SPEED = 1e-3, 1e3  # relative to an H100
MIN_BANDWIDTH, MAX_BANDWIDTH = 1e-3, 1e7  # Gbps
MAX_TOKENS = 1e15  # tokens and token counts
MIN_US, MAX_US = 1e-6, 1e9  # µs per token
MAX_OBJECTIVE_WEIGHT = 1e6
#: Largest time one item may contribute to a model in µs (an expert's load or transfer time per
#: batch, times its objective weight): 100 s, where real ones are µs to ms. Measured: one expert
#: of 1e9 µs among µs-sized ones made HiGHS answer a false INFEASIBLE and CP-SAT's weighted
#: objective overflow at 1e11 µs.
MAX_MODEL_US = 1e8

Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
PositiveSeconds = Annotated[float, Field(ge=MIN_POSITIVE, le=MAX_SECONDS, allow_inf_nan=False)]
StepSeconds = Annotated[float, Field(ge=MIN_STEP_S, le=MAX_SECONDS, allow_inf_nan=False)]
Rate = Annotated[float, Field(ge=MIN_POSITIVE, le=MAX_RATE, allow_inf_nan=False)]
Iterations = Annotated[int, Field(gt=0, le=MAX_ITERATIONS)]
PositiveIterations = Annotated[
    float, Field(ge=MIN_POSITIVE, le=MAX_ITERATIONS, allow_inf_nan=False)
]
GpuCount = Annotated[int, Field(ge=0, le=MAX_GPUS)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Weight = Annotated[float, Field(ge=MIN_WEIGHT, le=MAX_WEIGHT, allow_inf_nan=False)]
Value = Annotated[float, Field(ge=MIN_VALUE, le=MAX_VALUE, allow_inf_nan=False)]
GpuSeconds = Annotated[float, Field(ge=0, le=MAX_GPU_SECONDS, allow_inf_nan=False)]
MemoryGib = Annotated[float, Field(ge=MIN_MEMORY_GIB, le=MAX_MEMORY_GIB, allow_inf_nan=False)]
NonNegMemoryGib = Annotated[float, Field(ge=0, le=MAX_MEMORY_GIB, allow_inf_nan=False)]
Speed = Annotated[float, Field(ge=MIN_SPEED, le=MAX_SPEED, allow_inf_nan=False)]
Bandwidth = Annotated[float, Field(ge=MIN_BANDWIDTH, le=MAX_BANDWIDTH, allow_inf_nan=False)]
Tokens = Annotated[float, Field(ge=0, le=MAX_TOKENS, allow_inf_nan=False)]
PositiveTokens = Annotated[float, Field(ge=MIN_POSITIVE, le=MAX_TOKENS, allow_inf_nan=False)]
TokenCount = Annotated[int, Field(ge=0, le=int(MAX_TOKENS))]
MicrosPerToken = Annotated[float, Field(ge=MIN_US, le=MAX_US, allow_inf_nan=False)]
ObjectiveWeight = Annotated[float, Field(ge=0, le=MAX_OBJECTIVE_WEIGHT, allow_inf_nan=False)]
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
