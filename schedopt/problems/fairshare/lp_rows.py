"""The LP relaxation of the fair-share model (C1–C7 with integrality dropped, L1–L3 as
objectives), built straight into arrays, for a decomposition part's LP guide
(formulations/fairshare.md, "Decomposition").

The same rows as ``relax(build_model(data).model, …)``, in the same columns (``x`` job by job
and option by option, then ``k`` of the keepable jobs, ``t``, then the chunks ``c``), without
building the whole model first: ``build_model`` also writes the CP-SAT rows and looks every
column up by key, 0.72 s of a 3.2 s run at 16,384 GPUs × 20,000 jobs (issue #17). The two are
checked equal row for row in ``tests/fairshare/test_lp_rows.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedopt.model.lp_bound import Relaxation

from .data import ModelData
from .model import t_upper


@dataclass(frozen=True)
class Linear:
    """``Σ coefs·x[cols] + constant``."""

    cols: np.ndarray
    coefs: np.ndarray
    constant: float = 0.0

    def value(self, x: np.ndarray) -> float:
        return float(self.coefs @ x[self.cols]) + self.constant

    def objective(self, n: int, maximise: bool) -> np.ndarray:
        """The cost vector of ``max`` this (``maximise``) or of ``max −this``."""
        c = np.zeros(n)
        np.add.at(c, self.cols, self.coefs)
        return c if maximise else -c


@dataclass(frozen=True)
class PartLp:
    """The relaxation with L1 as its objective, the three levels, and where the columns are."""

    relaxation: Relaxation
    l1: Linear  # max t
    l2: Linear  # max Σ e·x
    l3: Linear  # min Σ_{J^P} c_j − Σ c_j k_j + φ Σ ν_o x
    #: Each job's first x column (x is columns 0 … num_x − 1, job by job).
    x_start: np.ndarray
    #: Each job's k column, or −1 (not keepable).
    k_col: np.ndarray


class _Rows:
    """Rows gathered as entries (row, column, coefficient) with each row's bounds."""

    def __init__(self) -> None:
        self.row: list[np.ndarray] = []
        self.col: list[np.ndarray] = []
        self.coef: list[np.ndarray] = []
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.count = 0

    def add(
        self,
        row: np.ndarray,
        col: np.ndarray,
        coef: np.ndarray,
        lo: np.ndarray | float,
        hi: np.ndarray | float,
        rows: int,
    ) -> None:
        """``rows`` rows, numbered 0 … rows − 1 in ``row`` (every one has an entry)."""
        if not rows:
            return
        self.row.append(np.asarray(row, dtype=np.int64) + self.count)
        self.col.append(np.asarray(col, dtype=np.int64))
        self.coef.append(np.asarray(coef, dtype=np.float64))
        self.lo.append(np.broadcast_to(np.asarray(lo, dtype=np.float64), (rows,)))
        self.hi.append(np.broadcast_to(np.asarray(hi, dtype=np.float64), (rows,)))
        self.count += rows

    def csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if not self.row:
            empty = np.zeros(0)
            return np.zeros(1, dtype=np.int64), empty.astype(np.int64), empty, empty, empty
        row = np.concatenate(self.row)
        order = np.argsort(row, kind="stable")
        starts = np.zeros(self.count + 1, dtype=np.int64)
        np.cumsum(np.bincount(row, minlength=self.count), out=starts[1:])
        return (
            starts,
            np.concatenate(self.col)[order],
            np.concatenate(self.coef)[order],
            np.concatenate(self.lo),
            np.concatenate(self.hi),
        )


def part_lp(data: ModelData) -> PartLp:
    """The LP relaxation of ``build_model(data)``'s MILP rows (module docstring)."""
    jobs = data.jobs
    counts = np.array([len(j.options) for j in jobs], dtype=np.int64)
    x_start = np.zeros(len(jobs) + 1, dtype=np.int64)
    np.cumsum(counts, out=x_start[1:])
    nx = int(x_start[-1])
    types = {g: i for i, g in enumerate(sorted(data.type_capacity))}
    for j in jobs:
        for o in j.options:
            types.setdefault(o.gpu_type, len(types))
    flat = [(o.n, types[o.gpu_type], o.eff, o.extra_hosts) for j in jobs for o in j.options]
    opt = np.array(flat, dtype=np.float64).reshape(-1, 4)
    n, gtype, eff, extra = opt[:, 0], opt[:, 1].astype(np.int64), opt[:, 2], opt[:, 3]
    job_of = np.repeat(np.arange(len(jobs)), counts)
    keepable = np.array([j.keepable for j in jobs], dtype=bool)
    k_col = np.full(len(jobs), -1, dtype=np.int64)
    k_col[keepable] = nx + np.arange(int(keepable.sum()))
    nk = int(keepable.sum())
    t = nx + nk
    # the column of each keepable job's previous option, and which x columns they are
    prev = np.array([j.prev_option if j.keepable else -1 for j in jobs], dtype=np.int64)
    prev_x = np.where(keepable, x_start[:-1] + prev, -1)
    is_prev = np.zeros(nx, dtype=bool)
    is_prev[prev_x[keepable]] = True
    x_cols = np.arange(nx, dtype=np.int64)
    rows = _Rows()

    # C1 gang, one type: one option per job (jobs with more than one).
    many = np.repeat(counts > 1, counts)
    _, c1_row = np.unique(job_of[many], return_inverse=True)
    rows.add(c1_row, x_cols[many], np.ones(int(many.sum())), -np.inf, 1.0, int((counts > 1).sum()))
    # C2 capacity per type.
    present = np.unique(gtype)
    by_name = {i: g for g, i in types.items()}
    rows.add(
        np.searchsorted(present, gtype),
        x_cols,
        n,
        -np.inf,
        np.array([data.type_capacity[by_name[int(i)]] for i in present], dtype=np.float64),
        len(present),
    )
    # C3 capacity per host, placeable (one host per job): per type and size level s.
    chunks: list[tuple[str, int]] = []
    if not data.multi_host:
        chunks = _c3(data, rows, types, n, gtype, is_prev, job_of, k_col, t + 1)
    # C4a keeping means running on the previous option: k − x_prev ≤ 0.
    kept = np.flatnonzero(keepable)
    rows.add(
        np.repeat(np.arange(nk), 2),
        np.column_stack([k_col[kept], prev_x[kept]]).ravel(),
        np.tile([1.0, -1.0], nk),
        -np.inf,
        0.0,
        nk,
    )
    # C4b what is kept on a host fits there.
    over = [(h, e) for h, e in data.keep_hosts.items() if sum(m for _, m in e) > data.free[h]]
    for h, entries in over:
        rows.add(
            np.zeros(len(entries)),
            k_col[[j for j, _ in entries]],
            np.array([m for _, m in entries], dtype=np.float64),
            -np.inf,
            float(data.free[h]),
            1,
        )
    # C5 hard guarantees, per tenant.
    tenant_of = np.array([j.tenant for j in jobs], dtype=np.int64)[job_of]
    for u in data.tenants:
        if u.guarantee:
            mine = tenant_of == u.index
            rows.add(np.zeros(int(mine.sum())), x_cols[mine], n[mine], u.guarantee, np.inf, 1)
    # C6 preemption cap.
    running = sum(1 for j in jobs if j.was_running)
    cap = data.instance.max_preemptions
    if cap is not None and running > cap:
        rows.add(np.zeros(nk), k_col[kept], np.ones(nk), running - cap, np.inf, 1)
    # C7 minimum share (the MILP's real rows): t − Σ (L n / D'_v) x ≤ U_v / D'_v.
    included = data.included
    if included:
        unit_row = np.full(len(data.units), -1, dtype=np.int64)
        unit_row[[v.index for v in included]] = np.arange(len(included))
        after = np.array([v.deserved_after_s for v in included])
        used = np.array([v.used_s for v in included])
        unit_of = np.array([j.unit for j in jobs], dtype=np.int64)[job_of]
        row_of = unit_row[unit_of]
        mine = row_of >= 0
        rows.add(
            np.concatenate([np.arange(len(included)), row_of[mine]]),
            np.concatenate([np.full(len(included), t), x_cols[mine]]),
            np.concatenate([np.ones(len(included)), -data.round_s * n[mine] / after[row_of[mine]]]),
            -np.inf,
            used / after,
            len(included),
        )

    starts, cols, coefs, lo, hi = rows.csr()
    nc = len(chunks)
    lb = np.zeros(t + 1 + nc)
    ub = np.ones(t + 1 + nc)
    ub[t] = t_upper(data)
    ub[t + 1 :] = [data.free[h] // s for h, s in chunks]
    l1 = Linear(np.array([t]), np.array([1.0]))
    l2 = Linear(x_cols, eff)
    restart = np.array([j.restart_cost for j in jobs])
    frag = data.frag_cost * extra
    has_frag = frag != 0
    l3 = Linear(
        np.concatenate([k_col[kept], x_cols[has_frag]]),
        np.concatenate([-restart[kept], frag[has_frag]]),
        data.restart_constant,
    )
    relaxation = Relaxation(l1.objective(len(lb), True), starts, cols, coefs, lo, hi, lb, ub)
    return PartLp(relaxation, l1, l2, l3, x_start[:-1], k_col)


def _c3(
    data: ModelData,
    rows: _Rows,
    types: dict[str, int],
    n: np.ndarray,
    gtype: np.ndarray,
    is_prev: np.ndarray,
    job_of: np.ndarray,
    k_col: np.ndarray,
    first_chunk: int,
) -> list[tuple[str, int]]:
    """C3 per type g and level s: Σ_{n ≥ s} n (x − [o = o^P] k) − Σ_{kept hosts} s c_hs ≤
    Σ_{other hosts} s ⌊f_h/s⌋, and C3c ``s c_hs + K_h ≤ f_h`` on hosts with kept jobs. The
    chunk columns (host, s) in the order they are made, from ``first_chunk`` on."""
    chunks: list[tuple[str, int]] = []
    hosts_of: dict[str, list[str]] = {}
    for h, g in data.host_type.items():
        if g is not None:
            hosts_of.setdefault(g, []).append(h)
    x_cols = np.arange(len(n), dtype=np.int64)
    for g, levels in data.levels.items():
        if g not in types:
            continue
        of_type = gtype == types[g]
        hosts = hosts_of.get(g, [])
        for s in levels:
            on = of_type & (n >= s)
            if not on.any():
                continue
            back = on & is_prev  # the kept option's GPUs come off what the row counts
            row_cols = [x_cols[on], k_col[job_of[back]]]
            row_coefs = [n[on], -n[back]]
            const = 0
            for h in hosts:
                if h in data.keep_hosts:
                    c = first_chunk + len(chunks)
                    chunks.append((h, s))
                    kept = data.keep_hosts[h]
                    rows.add(
                        np.zeros(len(kept) + 1),
                        np.array([c, *(k_col[j] for j, _ in kept)], dtype=np.int64),
                        np.array([float(s), *(float(m) for _, m in kept)]),
                        -np.inf,
                        float(data.free[h]),
                        1,
                    )
                    row_cols.append(np.array([c]))
                    row_coefs.append(np.array([-float(s)]))
                else:
                    const += s * (data.free[h] // s)
            cols = np.concatenate(row_cols)
            rows.add(np.zeros(len(cols)), cols, np.concatenate(row_coefs), -np.inf, float(const), 1)
    return chunks


__all__ = ["Linear", "PartLp", "part_lp"]
