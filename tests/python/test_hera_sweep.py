"""Hera's experiment loops as servelab.sweep points: the same frames serially and on 2 local
processes, and the offline tables rebuilt from their plain-data source."""

import numpy as np
import pandas as pd
import pytest

from servelab import hera


@pytest.fixture(scope="module")
def off():
    return hera.build(["dlrm_b", "dlrm_d", "ncf", "din"])


def test_the_offline_source_rebuilds_the_same_tables(off):
    again = hera.offline_from(hera.offline_source(off))
    assert again.names == off.names
    np.testing.assert_array_equal(again.affinity, off.affinity)
    assert again.pair("dlrm_b", "ncf") == off.pair("dlrm_b", "ncf")


def test_servers_table_is_the_same_serially_and_on_two_processes(off):
    kw = {"levels": [500.0, 4000.0], "seeds": (0, 1, 2)}
    serial = hera.servers_table(off, **kw)
    parallel = hera.servers_table(off, processes=2, **kw)
    pd.testing.assert_frame_equal(serial, parallel)
    # 2 levels x (2 deterministic policies + 2 random ones x 3 seeds)
    assert len(serial) == 2 * (2 + 2 * 3) and serial["feasible"].all()
    needed = hera.servers_needed(off, [500.0, 4000.0], seeds=(0, 1, 2), processes=2)
    rows = serial[(serial["selection"] == "random") & (serial["level"] == 4000.0)]
    assert needed["random"][1] == pytest.approx(rows["servers"].mean())


def test_partner_loads_are_the_same_serially_and_on_two_processes(off):
    kw = {"partners": ["ncf"], "loads": (0.4, 0.6)}
    serial = hera.partner_loads_table(off, **kw)
    parallel = hera.partner_loads_table(off, processes=2, **kw)
    pd.testing.assert_frame_equal(serial, parallel)
    assert list(serial["controller"]) == ["hera", "hera", "parties", "parties"]
    curves = hera.max_partner_loads(off, **kw)
    assert curves["hera"]["ncf"] == list(serial["partner_load"][:2])


def test_bad_sweep_inputs_fail_before_any_point_runs(off):
    with pytest.raises(KeyError, match="selection 'best'"):
        hera.servers_table(off, [100.0], selections=("best",))
    with pytest.raises(ValueError, match="backend='nope'"):
        hera.servers_table(off, [100.0], backend="nope")
    with pytest.raises(KeyError, match="model 'bogus' is not profiled"):
        hera.partner_loads_table(off, partners=["bogus"])
    with pytest.raises(ValueError, match="level=1000000.0"):
        hera.servers_needed(off, [1e6], max_servers=5, selections=("hera",))
