"""Golden decision traces: every registered scheduler's decisions on the conformance suite's
simulated cases, pinned. A change to a policy's tie-breaking, batching or model choice changes
which worker and model serve which query, and fails here with the first queries that moved, with
no artifact data needed.

The traces are digests of each run's (worker, model, batch size, start, finish, status) per query
in tests/python/golden/decisions.json, kept with the first rows for a readable diff. After a
deliberate change, regenerate them and review the diff of that file:

    SERVELAB_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/python/test_golden_decisions.py
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .test_conformance import CASES, SCHEDULERS, run

GOLDEN = Path(__file__).parent / "golden" / "decisions.json"
UPDATE = os.environ.get("SERVELAB_UPDATE_GOLDEN") == "1"
COLUMNS = ("worker", "model", "batch_queries", "start_ns", "finish_ns", "status")
SHOWN = 8  # rows kept beside each digest

SIM_CASES = sorted(case for world, case in CASES if world == "sim")
KEYS = [f"{s}/{c}" for s in SCHEDULERS for c in SIM_CASES]


def _trace(name: str, case: str) -> dict[str, Any]:
    c = run(name, "sim", case).columns
    table = np.stack([np.asarray(c[k], dtype=np.int64) for k in COLUMNS], axis=1)
    return {
        "queries": int(table.shape[0]),
        "digest": hashlib.sha256(np.ascontiguousarray(table).tobytes()).hexdigest(),
        "first": table[:SHOWN].tolist(),
    }


def _stored() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}


@pytest.fixture(scope="module")
def stored() -> dict[str, Any]:
    data = _stored()
    yield data
    if UPDATE:
        GOLDEN.write_text(json.dumps(dict(sorted(data.items())), indent=1) + "\n")


@pytest.mark.parametrize("key", KEYS)
def test_decisions_match_the_golden_trace(key, stored):
    name, case = key.split("/")
    got = _trace(name, case)
    if UPDATE:
        stored[key] = got
        return
    assert key in stored, (
        f"no golden trace for {key}: a new scheduler or case; regenerate with "
        "SERVELAB_UPDATE_GOLDEN=1 (see this module's docstring) and review the new entry"
    )
    want = stored[key]
    if got["digest"] == want["digest"]:
        return
    c = run(name, "sim", case).columns
    table = np.stack([np.asarray(c[k], dtype=np.int64) for k in COLUMNS], axis=1)
    first = np.asarray(want["first"], dtype=np.int64)
    n = min(len(first), len(table))
    moved = next((i for i in range(n) if not np.array_equal(first[i], table[i])), None)
    where = (
        f"query {moved}: was {dict(zip(COLUMNS, first[moved].tolist(), strict=True))}, "
        f"now {dict(zip(COLUMNS, table[moved].tolist(), strict=True))}"
        if moved is not None
        else f"after the first {n} queries (or in the count: {want['queries']} -> {got['queries']})"
    )
    pytest.fail(f"{key}: the decisions changed at {where}")


def test_every_golden_trace_belongs_to_a_scheduler_and_case():
    if UPDATE:
        return
    stale = sorted(set(_stored()) - set(KEYS))
    assert not stale, f"golden traces of schedulers or cases that no longer exist: {stale}"
