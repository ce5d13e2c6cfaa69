"""Hera's LLC ways applied through resctrl while serving (``servelab.serve(llc="resctrl")``):
against a temporary folder laid out like /sys/fs/resctrl, each worker thread joins a group whose
schemata give it the ways hera_rmu set; on this machine's real path it says why it cannot."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

import servelab
from servelab import hera

RESCTRL = Path("/sys/fs/resctrl")


@pytest.fixture(scope="module")
def off():
    return hera.build(["dlrm_d", "ncf"])


@pytest.fixture
def scenario(off):
    return hera.node_scenario(off, "dlrm_d", "ncf", 0.05, 0.02, duration_s=1.0, monitor_s=0.5)


def mock_resctrl(root: Path, cbm_mask: str = "ffff") -> Path:
    """A resctrl-shaped tree: one L3 of len(bits of cbm_mask) ways on two cache domains."""
    (root / "info" / "L3").mkdir(parents=True)
    (root / "info" / "L3" / "cbm_mask").write_text(cbm_mask + "\n")
    (root / "info" / "L3" / "num_closids").write_text("16\n")
    (root / "schemata").write_text(f"L3:0={cbm_mask};1={cbm_mask}\n")
    (root / "tasks").write_text("")
    return root


def groups(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir() and p.name != "info")


class GroupProbe:
    """Per batch, the worker's llc_ways setting and the resctrl group its thread is in (the group
    named for those ways, or for its model's partition on its machine, whose tasks list the
    thread), read on the worker's own thread."""

    root: Path = Path()
    seen: list[dict] = []
    lock = threading.Lock()
    knobs = ["llc_ways", "llc_first_way", "llc_share_ways"]

    def __init__(self):
        self.config = {}

    def set_config(self, key, value):
        self.config[key] = value

    def run(self, batch):
        tid = str(threading.get_native_id())
        ways, first = self.config.get("llc_ways"), self.config.get("llc_first_way")
        share = self.config.get("llc_share_ways")
        end = f"-{ways}" if first is None else f"-at{first}-{share}"
        mine = [
            g
            for g in groups(self.root)
            if g.endswith(end) and tid in (self.root / g / "tasks").read_text().split()
        ]
        schemata = [(self.root / g / "schemata").read_text() for g in mine]
        # Every group whose tasks list the thread, whatever its name (root: none of them).
        anywhere = [
            g for g in groups(self.root) if tid in (self.root / g / "tasks").read_text().split()
        ]
        with self.lock:
            self.seen.append(
                {
                    "worker": batch.worker,
                    "ways": ways,
                    "first": first,
                    "share": share,
                    "groups": mine,
                    "anywhere": anywhere,
                    "schemata": schemata,
                }
            )


@pytest.fixture
def probe(tmp_path):
    GroupProbe.root = mock_resctrl(tmp_path / "resctrl")
    GroupProbe.seen = []
    servelab.register_executor("llc_group_probe", GroupProbe, doc="Reads its resctrl group.")
    yield GroupProbe
    servelab.unregister_executor("llc_group_probe")


def _mask(schemata: str) -> int:
    """The one mask a group's schemata line gives every L3 domain."""
    line = schemata.strip()
    assert line.startswith("L3:")
    domains = dict(item.split("=") for item in line[3:].split(";"))
    assert sorted(domains) == ["0", "1"]
    assert len(set(domains.values())) == 1
    return int(next(iter(domains.values())), 16)


def test_hera_rmu_workers_run_in_groups_with_their_ways(scenario, probe):
    r = servelab.serve(
        scenario, executor="llc_group_probe", spin_us=0, llc="resctrl", llc_root=probe.root
    )
    assert probe.seen, "no batch ran"
    pid = os.getpid()
    masks_by_model = {}
    for batch in probe.seen:
        # hera_rmu splits the node's 11 ways between the two models (0: an instance it gave none)
        assert batch["ways"] in range(0, 11)
        if batch["first"] is not None:
            # node_scenario's instances on a machine: each model's instances share one partition
            # of their ways summed, the models one after the other within the machine's 11 ways.
            first, share = batch["first"], batch["share"]
            assert first + share <= 11 and batch["ways"] <= share
            if share == 0:  # the model holds no ways: back in the root group
                assert batch["anywhere"] == [], batch
                continue
            assert len(batch["groups"]) == 1, batch
            assert _mask(batch["schemata"][0]) == ((1 << share) - 1) << first, batch
            masks_by_model.setdefault("machine", set()).add(first)
            continue
        if batch["ways"] == 0:  # back in the root group: in none of the run's groups
            assert batch["anywhere"] == [], batch
            continue
        assert len(batch["groups"]) == 1, batch
        group = batch["groups"][0]
        assert group.startswith(f"servelab-{pid}-")
        mask = _mask(batch["schemata"][0])
        ways = batch["ways"]
        assert bin(mask).count("1") == ways
        shifted = mask >> (mask & -mask).bit_length() - 1
        assert shifted == (1 << ways) - 1, f"{mask:x} is not contiguous"
        low = "-low-" in group
        assert mask & 1 if low else mask & 0x8000, f"{group}: {mask:x} at the wrong end"
        masks_by_model.setdefault(low, set()).add(mask)
    if "machine" in masks_by_model:  # the first model starts at way 0, the second after it
        assert 0 in masks_by_model["machine"] and len(masks_by_model["machine"]) >= 2
    else:
        # The two models (two ends) never share a way: their ways sum to at most the cache's.
        assert set(masks_by_model) == {True, False}
        for a in masks_by_model[True]:
            for b in masks_by_model[False]:
                assert a & b == 0

    llc = r.meta["llc"]
    assert llc["root"] == str(probe.root)
    assert llc["cbm_mask"] == "ffff" and llc["ways"] == 16 and llc["domains"] == ["0", "1"]
    assert llc["removal_errors"] == []
    ran = {b["worker"]: b for b in probe.seen}
    assert {w["worker"] for w in llc["workers"]} >= set(ran)
    for w in llc["workers"]:
        assert w["error"] == "" and w["failed"] == 0
        assert w["applied"] >= 1 and w["thread_id"] > 0
        if w["ways"] == 0:  # given no ways last: back in the root group
            assert w["group"] == "" and w["mask"] == ""
            continue
        assert bin(int(w["mask"], 16)).count("1") == w["ways"]
        assert w["group"] in llc["groups"]
        last = ran.get(w["worker"], {})
        if last and (last["share"] if last["first"] is not None else last["ways"]) == w["ways"]:
            assert last["groups"] == [w["group"]]
    # The run removed every group it created; the root is as it was.
    assert groups(probe.root) == []
    assert (probe.root / "schemata").read_text() == "L3:0=ffff;1=ffff\n"


def test_ways_the_cache_cannot_give_are_recorded_and_serving_goes_on(scenario, tmp_path):
    root = mock_resctrl(tmp_path / "resctrl", cbm_mask="f")  # 4 ways: hera_rmu asks 5 or 6
    r = servelab.serve(scenario, spin_us=0, llc="resctrl", llc_root=root)
    summary = r.summary()
    assert summary["queries"] > 0 and summary["dropped"] == 0
    workers = r.meta["llc"]["workers"]
    failed = [w for w in workers if w["failed"]]
    assert failed, workers
    for w in failed:  # the first failure's reason, once per worker
        assert w["error"].startswith("llc_ways=") and "does not fit this L3" in w["error"], w
    for w in workers:  # what was applied fits the 4 ways
        assert w["group"] == "" or 1 <= w["ways"] <= 4
    assert groups(root) == []


def test_a_python_executor_without_knobs_is_not_handed_llc_ways(scenario, tmp_path):
    class Plain:
        def run(self, batch):
            assert "llc_ways" not in batch.config

    servelab.register_executor("llc_plain", Plain, doc="Reads no knob.")
    try:
        root = mock_resctrl(tmp_path / "resctrl")
        r = servelab.serve(scenario, executor="llc_plain", spin_us=0, llc="resctrl", llc_root=root)
    finally:
        servelab.unregister_executor("llc_plain")
    assert r.summary()["dropped"] == 0
    assert r.meta["llc"]["workers"]


def test_this_machines_resctrl_says_why_it_is_unsupported(scenario):
    r = servelab.serve(scenario, spin_us=0, llc="resctrl")
    status = servelab.resctrl_status()
    if status["supported"]:
        pytest.skip(f"resctrl is usable here: {status['cbm_mask']}")
    assert isinstance(r.meta["llc"], str)
    assert r.meta["llc"].startswith("unsupported: ")
    if not RESCTRL.exists():
        assert r.meta["llc"] == (
            "unsupported: /sys/fs/resctrl does not exist (no resctrl: kernel or CPU without CAT)"
        )
    assert r.summary()["queries"] > 0


def test_an_unmounted_root_is_unsupported(scenario, tmp_path):
    root = tmp_path / "resctrl"
    root.mkdir()
    r = servelab.serve(scenario, spin_us=0, llc="resctrl", llc_root=root)
    assert r.meta["llc"] == f"unsupported: {root} is not mounted (mount -t resctrl resctrl {root})"


def test_the_default_serve_applies_nothing(scenario, tmp_path):
    root = mock_resctrl(tmp_path / "resctrl")
    r = servelab.serve(scenario, spin_us=0)
    assert "llc" not in r.meta
    assert groups(root) == []
    assert r.summary()["dropped"] == 0


def test_bad_options_name_the_option(scenario, tmp_path):
    with pytest.raises(ValueError, match="llc='cat' must be 'resctrl'"):
        servelab.serve(scenario, llc="cat")
    with pytest.raises(ValueError, match="llc_root=.* needs llc='resctrl'"):
        servelab.serve(scenario, llc_root=tmp_path)
    with pytest.raises(ValueError, match="llc_root='' must be a folder path"):
        servelab.serve(scenario, llc="resctrl", llc_root="")
    with pytest.raises(ValueError, match="llc= is for servelab.serve"):
        servelab.simulate(scenario, llc="resctrl")
