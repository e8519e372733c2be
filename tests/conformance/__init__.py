"""Conformance: what every registered problem and every method promises, generic over
``schedopt.problem_names()`` and over each method's declared :class:`MethodKind`.

A problem registered later gets every test here without an edit: golden optima × every exact
method (``test_golden``), validity and honesty on hypothesis-generated instances
(``test_properties``), the time-limit promise (``test_time_limit``) and bad input
(``test_bad_input``), and model equivalence (``test_model_equivalence``: the same fixed decisions
give the formulation's verdict and level values in every emitted model).

Per-problem folders keep only what is specific to one problem (brute force, validator tamper
tests, heuristic behaviour, extras).
"""
