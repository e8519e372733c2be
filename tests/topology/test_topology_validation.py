"""Validation of the JSON form: every bad input becomes an InvalidInstanceError naming the field."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedopt.core.errors import InvalidInstanceError
from schedopt.topology import Cluster, ClusterSpec, dgx, heterogeneous

HYPOTHESIS = settings(derandomize=True, deadline=None, max_examples=50)


def base() -> dict[str, Any]:
    return dgx(nodes=2, gpus_per_node=2, leaf_size=1).to_dict()


def error_of(data: Any) -> InvalidInstanceError:
    with pytest.raises(InvalidInstanceError) as info:
        Cluster.from_dict(data)
    return info.value


def test_bandwidth_zero_names_the_field() -> None:
    d = base()
    d["links"][3]["bandwidth_gbps"] = 0
    err = error_of(d)
    assert err.path == "links[3].bandwidth_gbps"
    assert "greater than or equal to 0.001" in err.reason
    assert str(err).startswith("links[3].bandwidth_gbps: ")


def test_unknown_link_kind() -> None:
    d = base()
    d["links"][0]["kind"] = "wifi"
    err = error_of(d)
    assert err.path == "links[0].kind"
    assert "'wifi'" in err.reason


def test_duplicate_id() -> None:
    d = base()
    d["gpus"][1]["id"] = d["gpus"][0]["id"]
    err = error_of(d)
    assert err.path == "gpus[1].id"
    assert err.reason == "duplicate id 'h0/g0' (also used by gpus[0].id)"


def test_duplicate_id_across_kinds() -> None:
    d = base()
    d["switches"].append({"id": "h1", "tier": "core"})
    err = error_of(d)
    assert err.path == "switches[5].id"
    assert err.reason == "duplicate id 'h1' (also used by hosts[1].id)"


def test_unknown_link_endpoint() -> None:
    d = base()
    d["links"][2]["b"] = "x"
    err = error_of(d)
    assert (err.path, err.reason) == ("links[2].b", "unknown node 'x'")


def test_unknown_host_and_leaf() -> None:
    d = base()
    d["gpus"][3]["host"] = "h9"
    d["hosts"][0]["leaf"] = "h1/g0"  # a GPU, not a switch
    err = error_of(d)
    assert err.problems == (
        ("gpus[3].host", "unknown host 'h9'"),
        ("hosts[0].leaf", "unknown switch 'h1/g0'"),
    )
    assert "2 problems" in str(err)


def test_self_loop_and_parallel_links() -> None:
    d = base()
    d["links"][4]["b"] = d["links"][4]["a"]
    err = error_of(d)
    assert err.path == "links[4]"
    assert err.reason.startswith("self-loop on ")
    d = base()
    d["links"].append({**d["links"][0], "a": d["links"][0]["b"], "b": d["links"][0]["a"]})
    err = error_of(d)
    assert err.path == f"links[{len(d['links']) - 1}]"
    assert "parallel link" in err.reason


def test_disconnected_topology() -> None:
    d = base()
    d["links"] = [ln for ln in d["links"] if "spine0" not in (ln["a"], ln["b"])]
    err = error_of(d)
    assert err.path == "links"
    prefix = "the topology is not connected: ['h1', 'h1/g0', 'h1/g1', 'h1/nvs', 'leaf1', ..."
    assert err.reason.startswith(prefix)
    assert err.reason.endswith("cannot reach 'h0'")
    assert "... (6 nodes)" in err.reason  # h1, h1/g0, h1/g1, h1/nvs, leaf0, spine0... capped


def test_unlinked_gpu_is_not_connected() -> None:
    d = base()
    d["gpus"].append({"id": "lonely", "host": "h0", "gpu_type": "H100", "memory_gib": 80})
    err = error_of(d)
    assert err.path == "links"
    assert "['lonely'] cannot reach 'h0'" in err.reason


def test_no_gpu() -> None:
    err = error_of({"hosts": [{"id": "h0"}], "gpus": [], "links": []})
    assert (err.path, err.reason) == ("gpus", "at least one GPU is required")


def test_field_errors_are_all_collected() -> None:
    d = base()
    d["gpus"][0]["memory_gib"] = -1
    del d["gpus"][1]["gpu_type"]
    d["extra"] = 1
    err = error_of(d)
    paths = [p for p, _ in err.problems]
    assert paths == ["gpus[0].memory_gib", "gpus[1].gpu_type", "extra"]
    assert err.path == "gpus[0].memory_gib"


def test_not_a_mapping() -> None:
    assert error_of([1, 2]).path == ""
    assert error_of(None).path == ""


def test_spec_raises_value_error_with_sub_path() -> None:
    d = base()
    d["links"][2]["a"] = "x"
    with pytest.raises(ValueError, match=r"links\[2\]\.a: unknown node 'x'") as info:
        ClusterSpec.model_validate(d)
    assert isinstance(info.value, InvalidInstanceError)  # a ValueError, as hosts catch it
    assert info.value.problems == (("links[2].a", "unknown node 'x'"),)


# --------------------------------------------------------------------------- random mutations

SHAPES = [
    base(),
    heterogeneous([("H100", 1, 2), ("A100", 2, 1)]).to_dict(),
    dgx(nodes=1, gpus_per_node=1).to_dict(),
]
BAD_VALUES = [-1, 0, "x", None, "", [], {}, 1e400, True, {"id": "h0"}]


def bad_value(draw: st.DrawFn) -> Any:
    return copy.deepcopy(draw(st.sampled_from(BAD_VALUES)))  # never share a mutable value


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    data: Any = copy.deepcopy(draw(st.sampled_from(SHAPES)))
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["delete", "set", "drop_link", "replace_root"]))
        if action == "drop_link":
            if isinstance(data, dict) and isinstance(data.get("links"), list) and data["links"]:
                data["links"].pop(draw(st.integers(0, len(data["links"]) - 1)))
            continue
        if action == "replace_root":
            if draw(st.integers(0, 9)) == 0:
                data = bad_value(draw)
            continue
        # Walk down from the root to some container, then mutate one of its entries.
        node = data
        while isinstance(node, dict | list) and node:
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            key = draw(st.sampled_from(keys))
            child = node[key]
            if not isinstance(child, dict | list) or not child or draw(st.booleans()):
                if action == "delete":
                    del node[key]
                else:
                    node[key] = bad_value(draw)
                break
            node = child
    return data


@HYPOTHESIS
@given(data=mutated())
def test_random_mutations_fail_cleanly(data: Any) -> None:
    try:
        cluster = Cluster.from_dict(data)
    except InvalidInstanceError as err:
        assert err.problems
        assert all(isinstance(p, str) and isinstance(r, str) and r for p, r in err.problems)
    else:
        assert Cluster.from_dict(cluster.to_dict()) == cluster
        assert cluster.num_gpus >= 1
