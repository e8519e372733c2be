"""C3's packing argument, checked against exhaustive bin packing on random hosts and jobs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schedopt.problems.admission import AdmissionInstance
from schedopt.problems.admission.data import Option, build_data
from schedopt.problems.admission.placement import place_first_slot
from schedopt.topology import Cluster

from .bruteforce import packable


@st.composite
def hosts_and_items(draw):
    nodes = draw(st.integers(1, 4))
    per = draw(st.sampled_from([2, 4, 8]))
    cluster = Cluster.dgx(nodes=nodes, gpus_per_node=per, leaf_size=2)
    gpus = list(cluster.gpus())
    out = draw(st.lists(st.sampled_from(gpus), unique=True, max_size=len(gpus) - 1))
    sizes = [s for s in (1, 2, 4, 8, 16) if s <= nodes * per and (s <= per or s % per == 0)]
    items = draw(st.lists(st.sampled_from(sizes), min_size=1, max_size=6))
    inst = AdmissionInstance.model_validate(
        {
            "cluster": cluster.to_dict(),
            "unavailable_gpus": out,
            "slots": 1,
            "slot_s": 60.0,
            "jobs": [
                {
                    "id": f"j{i}",
                    "kind": "best_effort",
                    "remaining_iterations": 1,
                    "throughput": {n: 1.0},
                }
                for i, n in enumerate(items)
            ],
        }
    )
    return inst, items


def c3_holds(inst, items) -> bool:
    data = build_data(inst)
    return all(
        sum(data.usage(Option("H100", n, 1), s) for n in items) <= data.chunk_capacity["H100", s]
        for s in data.levels["H100"]
    )


@settings(derandomize=True, deadline=None, max_examples=400)
@given(case=hosts_and_items())
def test_c3_is_exactly_packability(case) -> None:
    inst, items = case
    exact = packable(inst, [("H100", n) for n in items])
    assert c3_holds(inst, items) == exact
    if exact:
        placement = place_first_slot(inst, {f"j{i}": ("H100", n) for i, n in enumerate(items)})
        used = [g for gs in placement.values() for g in gs]
        assert len(used) == len(set(used)) == sum(items)
        assert not set(used) & set(inst.unavailable_gpus)
