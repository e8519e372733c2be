"""Thin, honest adapters over the solvers: PuLP (HiGHS, CBC) and OR-Tools CP-SAT.

Problem models build their own PuLP / CP-SAT objects and hand them here to be solved; these
adapters own the mapping of each solver's status to :class:`~schedopt.core.status.Status`, the
best bound, warm starts, time limits and seeds, so that no model repeats (or gets wrong) that.
"""
