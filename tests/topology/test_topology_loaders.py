"""Loaders: NCCL topology XML dumps and the Alibaba GPU-trace node inventory."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from schedopt.core.errors import InvalidInstanceError
from schedopt.topology import Cluster, from_alibaba_nodes, from_nccl_xml, id_sort_key

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
TOPOLOGY = SHARED / "topology"
ALIBABA_NODES = SHARED / "alibaba-openb" / "openb_node_list_gpu_node.csv"


def shared_file(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"{path} is not available")
    return path


# --------------------------------------------------------------------------- NCCL, shared files


@pytest.mark.parametrize(
    ("filename", "gpu_type", "nvlink", "pcie", "host_link"),
    [
        ("azhpc_ndv4-topo.xml", "A100", 4800.0, 256.0, 8 * 200.0),
        ("azhpc_ndv5-topo.xml", "H100", 7200.0, 512.0, 8 * 400.0),
    ],
)
def test_shared_nccl_files(
    filename: str, gpu_type: str, nvlink: float, pcie: float, host_link: float
) -> None:
    path = shared_file(TOPOLOGY / filename)
    c = Cluster.from_nccl_xml(path, hosts=2)
    assert c.num_gpus == 16
    assert [len(c.gpus_on(h)) for h in c.hosts()] == [8, 8]
    assert c.nvlink_domains() == tuple(frozenset(c.gpus_on(h)) for h in c.hosts())
    assert c.gpu_types() == (gpu_type,)  # inferred from the PCIe generation: no sm attribute
    assert c.bandwidth("h0/g0", "h0/g7") == nvlink
    assert c.graph.edges["h0/g0", "h0"]["bandwidth_gbps"] == pcie
    assert c.graph.edges["h0", "leaf0"]["bandwidth_gbps"] == host_link
    assert c.bandwidth("h0/g0", "h1/g0") == min(pcie, host_link)
    assert Cluster.from_dict(c.to_dict()) == c


def test_shared_nccl_file_options() -> None:
    path = shared_file(TOPOLOGY / "azhpc_ndv4-topo.xml")
    c = from_nccl_xml(path, hosts=4, gpu_type="A100", memory_gib=40, leaf_size=2, name="ndv4")
    assert c.name == "ndv4"
    assert c.gpu("h3/g7").memory_gib == 40.0
    assert [c.leaf_of(h) for h in c.hosts()] == ["leaf0", "leaf0", "leaf1", "leaf1"]
    pcie_only = from_nccl_xml(path, assume_nvswitch=False)
    assert len(pcie_only.nvlink_domains()) == 8
    assert pcie_only.bandwidth("h0/g0", "h0/g1") == 256.0


# --------------------------------------------------------------------------- NCCL, synthetic

NVSWITCH_XML = """<system version="1">
  <cpu numaid="0" arch="x86_64">
    <pci busid="0000:07:00.0" class="0x030200" link_speed="16 GT/s" link_width="16">
      <gpu dev="1" sm="80" rank="1" gdr="1">
        <nvlink target="fffffff:ff:ff.0" count="12" tclass="0x068000"/>
      </gpu>
    </pci>
    <pci busid="0000:0f:00.0" class="0x030200" link_speed="16 GT/s" link_width="16">
      <gpu dev="0" sm="80" rank="0" gdr="1">
        <nvlink target="fffffff:ff:ff.0" count="12" tclass="0x068000"/>
      </gpu>
    </pci>
    <pci busid="0000:0c:00.0" class="0x020000" link_speed="16 GT/s" link_width="16">
      <nic><net name="eth0" dev="0" speed="100000" port="1"/></nic>
    </pci>
    <pci busid="0000:0d:00.0" class="0x020000" link_speed="16 GT/s" link_width="16">
      <nic><net name="eth1" dev="1" speed="100000" port="1"/></nic>
    </pci>
  </cpu>
</system>
"""

MESH_XML = """<system version="1">
  <cpu numaid="0">
    <pci busid="0000:1a:00.0" class="0x030200" link_speed="8 GT/s" link_width="16">
      <gpu dev="0" sm="70"><nvlink target="0000:1b:00.0" count="2" tclass="0x030200"/></gpu>
    </pci>
    <pci busid="0000:1b:00.0" class="0x030200" link_speed="8 GT/s" link_width="16">
      <gpu dev="1" sm="70">
        <nvlink target="0000:1a:00.0" count="2" tclass="0x030200"/>
        <nvlink target="0000:1c:00.0" count="1" tclass="0x030200"/>
      </gpu>
    </pci>
    <pci busid="0000:1c:00.0" class="0x030200" link_speed="8 GT/s" link_width="16">
      <gpu dev="2" sm="70"><nvlink target="0000:1b:00.0" count="1" tclass="0x030200"/></gpu>
    </pci>
    <pci busid="0000:1d:00.0" class="0x030200" link_speed="8 GT/s" link_width="16">
      <gpu dev="3" sm="70"/>
    </pci>
  </cpu>
</system>
"""


def write(tmp_path: Path, text: str, name: str = "topo.xml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_nccl_nvswitch_links_and_net_speeds(tmp_path: Path) -> None:
    c = from_nccl_xml(write(tmp_path, NVSWITCH_XML), hosts=2)
    assert c.gpu_types() == ("A100",)
    assert c.switches() == ("h0/nvs", "h1/nvs", "leaf0")
    assert c.bandwidth("h0/g0", "h0/g1") == 12 * 400.0  # count x per-link (both directions)
    assert c.graph.edges["h0", "leaf0"] == {"kind": "ethernet", "bandwidth_gbps": 200.0}


def test_nccl_gpu_to_gpu_nvlinks(tmp_path: Path) -> None:
    c = from_nccl_xml(write(tmp_path, MESH_XML))
    assert c.gpu_types() == ("V100",)
    assert "h0/nvs" not in c.switches()
    assert c.nvlink_domains() == (frozenset({"h0/g0", "h0/g1", "h0/g2"}), frozenset({"h0/g3"}))
    assert c.graph.edges["h0/g0", "h0/g1"]["bandwidth_gbps"] == 800.0
    assert c.bandwidth("h0/g0", "h0/g2") == 400.0
    assert c.bandwidth("h0/g0", "h0/g3") == 128.0  # PCIe Gen3 x16
    assert c.graph.edges["h0", "leaf0"]["bandwidth_gbps"] == 100.0  # no NIC: the default


@pytest.mark.parametrize(
    ("text", "path", "match"),
    [
        ("<system><cpu>", "xml", "malformed XML"),
        ("not xml at all", "xml", "malformed XML"),
        ("<topology/>", "xml", "expected <system>"),
        ("<system><cpu><pci busid='a' class='0x020700'/></cpu></system>", "xml", "no GPU"),
        (
            "<system><pci busid='a' class='0x030200'><gpu sm='61'/></pci></system>",
            "gpu_type",
            "cannot infer",
        ),
    ],
)
def test_nccl_bad_files(tmp_path: Path, text: str, path: str, match: str) -> None:
    with pytest.raises(InvalidInstanceError, match=match) as info:
        from_nccl_xml(write(tmp_path, text))
    assert info.value.path == path


def test_nccl_unknown_type_needs_memory(tmp_path: Path) -> None:
    text = "<system><pci busid='a' class='0x030200'><gpu sm='61'/></pci></system>"
    with pytest.raises(InvalidInstanceError, match="memory_gib"):
        from_nccl_xml(write(tmp_path, text), gpu_type="P40")
    c = from_nccl_xml(write(tmp_path, text), gpu_type="P40", memory_gib=24)
    assert c.gpu("h0/g0").memory_gib == 24.0
    with pytest.raises(FileNotFoundError):
        from_nccl_xml(tmp_path / "missing.xml")
    with pytest.raises(InvalidInstanceError, match="hosts"):
        from_nccl_xml(write(tmp_path, NVSWITCH_XML), hosts=0)


# --------------------------------------------------------------------------- Alibaba


def test_alibaba_shared_file() -> None:
    path = shared_file(ALIBABA_NODES)
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))[:50]
    c = Cluster.from_alibaba_nodes(path, limit=50)
    assert c.hosts() == tuple(sorted((r["sn"] for r in rows), key=id_sort_key))
    assert c.num_gpus == sum(int(r["gpu"]) for r in rows)
    assert set(c.gpu_types()) & {r["model"] for r in rows}
    assert set(c.gpu_types()) <= {r["model"] for r in rows}
    assert c.leaf_of(rows[0]["sn"]) == "leaf0"
    assert c.leaf_of(rows[40]["sn"]) == "leaf1"
    assert Cluster.from_dict(c.to_dict()) == c


def write_nodes(tmp_path: Path, rows: list[str], header: str = "sn,cpu_milli,memory_mib,gpu,model"):
    path = tmp_path / "nodes.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_alibaba_synthetic(tmp_path: Path) -> None:
    path = write_nodes(
        tmp_path,
        [
            "n0,64000,262144,4,V100M32",
            "n1,64000,262144,2,T4",
            "n2,64000,262144,0,",
            "n3,64000,262144,8,G2",
        ],
    )
    c = from_alibaba_nodes(path, leaf_size=2)
    assert c.name == "alibaba-nodes"
    assert c.hosts() == ("n0", "n1", "n2", "n3")
    assert c.gpus_on("n2") == ()
    assert c.gpu("n0/g0").memory_gib == 32.0
    assert c.gpu("n1/g0").memory_gib == 16.0
    assert c.gpu("n3/g0").memory_gib == 32.0  # anonymised model: the documented default
    assert frozenset(c.gpus_on("n0")) in c.nvlink_domains()  # V100: NVLink
    assert frozenset({"n1/g0"}) in c.nvlink_domains()  # T4: PCIe only
    assert c.bandwidth("n0/g0", "n0/g1") == 2400.0
    assert c.bandwidth("n1/g0", "n1/g1") == 128.0
    assert c.graph.edges["n0", "leaf0"] == {"kind": "ethernet", "bandwidth_gbps": 100.0}
    assert c.bandwidth("n0", "n3") == 100.0
    assert from_alibaba_nodes(path, limit=1).hosts() == ("n0",)


@pytest.mark.parametrize(
    ("rows", "header", "path"),
    [
        (["n0,1,1,x,T4"], None, "rows[0].gpu"),
        (["n0,1,1,2,T4", "n1,1,1,-2,T4"], None, "rows[1].gpu"),
        (["n0,1,1,2,T4", "n0,1,1,2,T4"], None, "rows[1].sn"),
        (["n0,1,1,2,"], None, "rows[0].model"),
        (["n0,1"], "sn,cpu_milli", "csv"),
        (["n0,1,1,0,T4"], None, "gpus"),
    ],
)
def test_alibaba_bad_rows(tmp_path: Path, rows: list[str], header: str | None, path: str) -> None:
    csv_path = write_nodes(tmp_path, rows, header or "sn,cpu_milli,memory_mib,gpu,model")
    with pytest.raises(InvalidInstanceError) as info:
        from_alibaba_nodes(csv_path)
    assert info.value.path == path
