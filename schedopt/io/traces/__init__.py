"""Loaders for public GPU-cluster job traces, returning :class:`TraceJob` records.

- :func:`load_philly_chronus`: the Philly traces with deadlines of the Chronus artifact;
- :func:`load_elasticflow`: the Microsoft ITP traces of the ElasticFlow artifact (deadlines
  attached by a slack rule).

The records do not depend on any problem package; ``schedopt.problems.admission.driver``
replays them lease round by lease round.
"""

from .elasticflow import load_elasticflow
from .philly_chronus import load_philly_chronus
from .record import KINDS, TraceJob, TraceLoad

__all__ = ["KINDS", "TraceJob", "TraceLoad", "load_elasticflow", "load_philly_chronus"]
