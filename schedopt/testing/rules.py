"""The validator rules of every formulation: problem → V-id → (rule, constraint ids cited).

Copied from the "Validator checks" lists of ``formulations/<problem>.md`` (not part of the
installed package) so that :func:`schedopt.testing.assert_valid` can name the rule a decision
breaks; tests/oracle/test_rules.py checks the copy against the formulations
(``python -m tests.oracle.formulation_rules`` prints it).
"""

from __future__ import annotations

RULES: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {
    "admission": {
        "V1": (
            "one plan per job, covering exactly `T` slots; a count is 0 iff its type is empty.",
            (),
        ),
        "V2": ("every (type, count) used is in the job's throughput table.", ()),
        "V3": ("nothing runs in a slot that starts before the job arrives (C2).", ("C2",)),
        "V4": (
            "per slot and GPU type, the GPUs used do not exceed the free GPUs (C3 at "
            "level 1), and the slot's gangs fit on the hosts' free GPUs (best fit, "
            "largest first; a gang wider than a host on whole free hosts) — in every "
            "slot, not only slot 0 (C3 at every level).",
            ("C3",),
        ),
        "V5": (
            "an admitted job's iterations done in the slots that end by its "
            "guaranteed tier's deadline, `Σ ⌊r·Δ⌋`, reach its remaining work (C6).",
            ("C6",),
        ),
        "V6": (
            "admission bookkeeping: SLO jobs have a decision, earlier admissions are "
            "kept (C5), an admitted job names a valid tier (C4), a rejected one has "
            "no GPUs (C7) and a reason; best-effort jobs carry neither.",
            ("C5", "C4", "C7"),
        ),
        "V7": (
            "the slot-0 placement: exactly the running jobs are placed, on existing, "
            "available, distinct GPUs of the planned type and count; a job that fits "
            "a host sits on one host, a wider job uses whole hosts.",
            (),
        ),
    },
    "cosched": {
        "V1": (
            "every job has one plan naming an existing group; every group lists its "
            "members and each member's plan names it; no unknown jobs, no job twice.",
            (),
        ),
        "V2": (
            "hosts: every host exists (`pool/i`, `i < H_p`) and is in at most one group (C4).",
            ("C4",),
        ),
        "V3": (
            "one option per phase, an existing index; its devices are within the "
            "group's devices of that pool (C2, C5).",
            ("C2", "C5"),
        ),
        "V4": ("the option's TP group fits one host: `tp ≤ u_p` (C5b).", ("C5b",)),
        "V5": ("residency per group and pool (C6).", ("C6",)),
        "V6": (
            "no overlap on a pool: on the unrolled timeline of each group pool, "
            "consecutive occurrences leave the incoming job's switch time between "
            "different jobs, and none overlap (C11, C12).",
            ("C11", "C12"),
        ),
        "V7": (
            "precedence inside a step and the staleness bound, on the unrolled "
            "timeline (C8, C9, with the sync time when the first and last phase are on "
            "different pools).",
            ("C8", "C9"),
        ),
        "V8": (
            "the cycle meets every member's SLO (`cycle_ms ≤ S_j`), and a group's "
            "cycle is positive.",
            (),
        ),
        "V9": (
            "with `chance`: V6 and V7 re-run with each scenario's durations; every job "
            "must be involved in no broken rule in at least `⌈(1−ε)S⌉` scenarios "
            "(C13).",
            ("C13",),
        ),
    },
    "fairshare": {
        "V1": (
            "one allocation per job, no unknown job; host counts ≥ 1; a type iff some hosts.",
            (),
        ),
        "V2": ("the (type, count) used is in the job's throughput table (C1).", ("C1",)),
        "V3": (
            "hosts exist and are of the allocation's type; per host, the GPUs used "
            "do not exceed its free GPUs (C2, C3).",
            ("C2", "C3"),
        ),
        "V4": ("with `allow_multi_host` false, a job uses one host.", ()),
        "V5": ("hard guarantees: every tenant with demand gets at least `γ_u` GPUs (C5).", ("C5",)),
        "V6": ("at most `max_preemptions` running jobs change allocation (C6).", ("C6",)),
    },
    "moe_placement": {
        "V1": ("shape: one plan per layer and per expert, in the instance's order.", ()),
        "V2": (
            "every expert has at least one replica (C2), on known GPUs, at most one per GPU.",
            ("C2",),
        ),
        "V3": (
            "shares in [0, 1] summing to one within 10⁻⁶ (C3, C4: shares are carried by replicas).",
            ("C3", "C4"),
        ),
        "V4": ("expert memory per GPU within `memory_gib − dense_memory_gib` (C1).", ("C1",)),
        "V5": (
            "replicas per expert at most `max_replicas_per_expert` (C5); extra "
            "replica memory at most `max_extra_memory_gib` (C6).",
            ("C5", "C6"),
        ),
        "V6": (
            "with `layer_within`, every layer's replicas inside one host / NVLink domain (C7).",
            ("C7",),
        ),
    },
    "reconfig": {
        "V1": ("every GPU exists, none failed, none used twice (C1).", ("C1",)),
        "V2": (
            "every stage's GPUs are inside one host, `t` is an allowed TP degree "
            "dividing the heads (C2); for every pipeline, kept ones too (no "
            "exception: a current pipeline that breaks V2 is not keepable).",
            ("C2",),
        ),
        "V3": (
            "every pipeline's stages cover layers `0..L−1` once, contiguously, in order (C3).",
            ("C3",),
        ),
        "V4": ("memory per GPU (C4), recomputed from the cost model above.", ("C4",)),
        "V5": (
            "a pipeline has at least one micro-batch; the micro-batches sum to `M` (C9).",
            ("C9",),
        ),
        "V6": (
            "at most `max_stages` stages per new pipeline (kept pipelines excepted). "
            "The template space's own limits (one TP degree per pipeline, one slow "
            "GPU per group and one slow group per pipeline) are the models', not the "
            "validator's: a plan outside them is a valid physical plan (#17).",
            (),
        ),
        "V7": ("at least one pipeline.", ()),
        "V8": (
            "the solution's `iteration_time_s`, if it states one, equals the "
            "recomputed iteration time `T` exactly (whole µs; C5, C7, C8). "
            "`iteration_time_s` means `T`, without the amortised recovery, wherever "
            "it appears (the solution, `metrics`); L1 is `T` plus the amortised "
            "recovery (`amortised_recovery_s` in `metrics`). Every method states it "
            "(#16).",
            ("C5", "C7", "C8"),
        ),
    },
    "timeshare": {
        "V1": (
            "every fraction is in [0, 1] and names a known job (or declared pair, or "
            "two jobs whose types have a `colocation` entry) and type, each "
            "combination once",
            (),
        ),
        "V2": ("C1 per job", ("C1",)),
        "V3": ("C2 per type", ("C2",)),
        "V4": (
            "no fraction on a type where a member's throughput is 0 or the gang does not fit (C4).",
            ("C4",),
        ),
    },
}
