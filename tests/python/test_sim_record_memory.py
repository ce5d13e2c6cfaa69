"""Record columns of runs large enough to get their own memory mapping (over 4 MB of records),
which a later run reuses once every column of the earlier one is freed: columns kept alive never
change, and reused memory gives the same records as fresh memory."""

import gc

import numpy as np

import servelab

QUERIES = 120_000  # 8.4 MB of records


def scenario(seed: int, scheduler: str = "fcfs") -> dict:
    profile = servelab.Profile("two sizes")
    profile.set_price("cpu", 0.1)
    profile.set_latency("cpu", "m", 1, samples_s=[0.009, 0.010, 0.012])
    profile.set_latency("cpu", "m", 4, samples_s=[0.020, 0.022])
    return {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": 20}],
        "workload": {
            "arrivals": "poisson(rate=1500)",
            "count": QUERIES,
            "apps": [{"name": "a", "slo_ms": 30}, {"name": "b", "slo_ms": 80, "share": 0.3}],
        },
        "scheduler": scheduler,
        "service": "sample",
        "seed": seed,
    }


def columns_of(result) -> dict[str, np.ndarray]:
    return {name: np.array(values) for name, values in result.columns.items()}


def test_a_kept_column_is_unchanged_by_later_runs():
    first = servelab.simulate(scenario(1))
    kept = first.columns["finish_ns"]
    expected = np.array(kept)
    del first
    gc.collect()
    for seed in (2, 3, 4):  # each frees its records before the next run maps new ones
        servelab.simulate(scenario(seed))
    np.testing.assert_array_equal(kept, expected)


def test_records_in_reused_memory_equal_records_in_fresh_memory():
    for scheduler in ("fcfs", "jsq", "batching"):
        fresh = columns_of(servelab.simulate(scenario(5, scheduler)))
        gc.collect()
        servelab.simulate(scenario(6, scheduler))  # the next run reuses its freed mapping
        gc.collect()
        again = columns_of(servelab.simulate(scenario(5, scheduler)))
        assert fresh.keys() == again.keys()
        for name in fresh:
            np.testing.assert_array_equal(again[name], fresh[name], err_msg=f"{scheduler}: {name}")
