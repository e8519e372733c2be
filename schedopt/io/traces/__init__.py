"""Loaders for public GPU-cluster traces, returning plain frozen records.

- :func:`load_philly_chronus`: the Philly traces with deadlines of the Chronus artifact;
- :func:`load_elasticflow`: the Microsoft ITP traces of the ElasticFlow artifact (deadlines
  attached by a slack rule);
- :func:`load_gavel_throughputs`: Gavel's measured per-GPU-type throughputs, alone;
  :func:`load_gavel_throughput_table`: with the co-location (packing) throughputs too;
- :func:`load_gavel_trace`: Gavel's job traces, in its old 7-field and current 10-field formats;
- :func:`load_astraea_shares`: the Astraea artifact's Philly tenant shares;
- :func:`load_infinitehbd_faults`: the InfiniteHBD server fault trace (start/end, class);
- :func:`load_routing_counts`, :func:`load_olmoe_counts`: MoE routing counts per expert.

The records do not depend on any problem package; ``schedopt.problems.admission.driver``
replays job traces lease round by lease round, and the fair-share generator can use the
throughputs and shares.
"""

from .astraea import TenantShare, load_astraea_shares
from .elasticflow import load_elasticflow
from .gavel import (
    GavelJobType,
    GavelThroughputs,
    JobTypeKey,
    load_gavel_throughput_table,
    load_gavel_throughputs,
)
from .gavel_trace import GavelTrace, GavelTraceJob, load_gavel_trace
from .infinitehbd import Fault, load_infinitehbd_faults
from .philly_chronus import load_philly_chronus
from .record import KINDS, TraceJob, TraceLoad
from .routing_counts import RoutingCounts, load_olmoe_counts, load_routing_counts

__all__ = [
    "KINDS",
    "Fault",
    "GavelJobType",
    "GavelThroughputs",
    "GavelTrace",
    "GavelTraceJob",
    "JobTypeKey",
    "RoutingCounts",
    "TenantShare",
    "TraceJob",
    "TraceLoad",
    "load_astraea_shares",
    "load_elasticflow",
    "load_gavel_throughput_table",
    "load_gavel_throughputs",
    "load_gavel_trace",
    "load_infinitehbd_faults",
    "load_olmoe_counts",
    "load_philly_chronus",
    "load_routing_counts",
]
