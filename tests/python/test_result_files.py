"""Result.save and servelab.load_result: a run written to one file and read back whole, its
columns (dtypes included), workers, meta (the scenario included) and streamed summaries."""

import numpy as np
import pytest

import servelab
from servelab.results import Result

SMALL = {"arrivals": "poisson(rate=45)", "count": 300,
         "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "kairos_mix"}]}  # fmt: skip


def assert_same(a: Result, b: Result) -> None:
    assert a.columns.keys() == b.columns.keys()
    for name, column in a.columns.items():
        assert column.dtype == b.columns[name].dtype, name
        np.testing.assert_array_equal(column, b.columns[name], err_msg=name)
    assert a.workers.keys() == b.workers.keys()
    for name, column in a.workers.items():
        assert column.dtype == b.workers[name].dtype, name
        np.testing.assert_array_equal(column, b.workers[name], err_msg=name)
    assert a.meta == b.meta
    assert a.summary() == b.summary()


def test_a_simulated_run_round_trips_with_its_meta(tmp_path):
    r = servelab.simulate("default", scheduler="jsq", workload=SMALL, seed=4)
    path = r.save(tmp_path / "runs" / "jsq")  # the folder is made, the suffix added
    assert path == tmp_path / "runs" / "jsq.npz" and path.is_file()
    back = servelab.load_result(path)
    assert_same(r, back)
    assert back.meta["scenario"] == r.meta["scenario"]
    assert back.meta["scheduler"] == r.meta["scheduler"]
    assert back.to_pandas().equals(r.to_pandas())
    # the saved scenario replays the run
    assert_same(r, servelab.simulate(back.meta["scenario"]))


def test_a_served_run_keeps_its_world_columns(tmp_path):
    workload = dict(SMALL, arrivals="poisson(rate=400)", count=40)
    r = servelab.serve("default", scheduler="fcfs", workload=workload, progress=False)
    assert "exec_ns" in r.columns
    back = servelab.load_result(r.save(tmp_path / "served.npz"))
    assert_same(r, back)
    assert back.meta["world"] == "serve"
    assert back.compare(r)["throughput_qps"]["diff"] == 0


def test_a_streamed_run_keeps_its_summaries(tmp_path):
    r = servelab.simulate("default", workload=dict(SMALL, count=2000), records="none")
    back = servelab.load_result(r.save(tmp_path / "streamed.npz"))
    assert back.streamed is not None
    assert back.summary() == r.summary()
    assert back.timeseries().equals(r.timeseries())
    with pytest.raises(ValueError, match="records='none'"):
        back.columns  # noqa: B018


def test_meta_comes_back_in_its_own_types(tmp_path):
    r = servelab.simulate("default", workload=SMALL)
    extra = {"rates": np.array([[1.5, 2.0]], dtype=np.float32), "seeds": (0, 1),
             "by_percentile": {50: 1.0, 99: (2.0, 3.0)}, "n": np.int64(3)}  # fmt: skip
    saved = Result(r.columns, r.workers, {**r.meta, **extra}).save(tmp_path / "ok")
    back = servelab.load_result(saved)
    rates = back.meta.pop("rates")
    assert rates.dtype == np.float32 and rates.shape == (1, 2)
    np.testing.assert_array_equal(rates, extra["rates"])
    expected = {**r.meta, "seeds": (0, 1), "by_percentile": {50: 1.0, 99: (2.0, 3.0)}, "n": 3}
    assert back.meta == expected


def test_meta_that_is_not_data_is_named(tmp_path):
    r = servelab.simulate("default", workload=SMALL)
    odd = Result(r.columns, r.workers, {**r.meta, "handle": object()})
    with pytest.raises(TypeError, match=r"meta\['handle'\] holds a value of type object"):
        odd.save(tmp_path / "odd.npz")


def test_files_that_are_not_saved_results_are_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        servelab.load_result(tmp_path / "missing.npz")
    text = tmp_path / "notes.npz"
    text.write_text("not an archive")
    with pytest.raises(ValueError, match="not a file written by Result.save"):
        servelab.load_result(text)
    other = tmp_path / "other.npz"
    np.savez(other, x=np.arange(3))
    with pytest.raises(ValueError, match="not one written by Result.save"):
        servelab.load_result(other)
