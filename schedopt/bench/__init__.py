"""The benchmark library: named suites of reproducible instance recipes, and the runner behind
``schedopt bench``.

A suite is a named list of :class:`~schedopt.bench.suite.Recipe` objects (a generator and its
arguments, or a slice of a public trace), each with the checksum of the instance it builds, so
a row in a results file names exactly what was solved. Suites live in
``schedopt/bench/suites/<problem>.py``, one module per problem, each exporting ``SUITES``.
"""
