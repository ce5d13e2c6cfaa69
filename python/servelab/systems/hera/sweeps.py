"""Running Hera's experiment loops (levels x policies x seeds, managers x partners x loads) as
points of ``servelab.sweep``, on this process, a local process pool or Ray.

A point cannot carry a ``HeraOffline`` (it holds C++ tables): it carries the offline's source as
plain data (``offline_source``: the node's and models' fields and the threshold) and rebuilds it
once per worker process (``offline_from``, a small cache), so every backend computes from the same
tables and the same points give the same rows.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...sweeps import SweepError, sweep
from . import specs
from .offline import HeraOffline, build


def offline_source(off: HeraOffline) -> dict[str, Any]:
    """The node, models and threshold ``off`` was built from, as plain (picklable) data."""
    node = {f: getattr(off.node, f) for f in specs.NODE_FIELDS} | {"name": off.node.name}
    models = [{f: getattr(m, f) for f in specs.MODEL_FIELDS} | {"name": m.name} for m in off.models]
    return {"node": node, "models": models, "threshold": off.threshold}


@functools.lru_cache(maxsize=4)
def _offline_from_text(text: str) -> HeraOffline:
    source = json.loads(text)
    return build(source["models"], source["node"], threshold=source["threshold"])


def offline_from(source: Mapping[str, Any]) -> HeraOffline:
    """``build`` of an ``offline_source`` (the last few are kept: one per sweep, per process)."""
    return _offline_from_text(json.dumps(source, sort_keys=True))


def run_points(
    fn: Callable[..., dict[str, Any]],
    points: Sequence[Mapping[str, Any]],
    shared: Mapping[str, Any],
    *,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> list[dict[str, Any]]:
    """``fn(**point, **shared)`` for every point through ``servelab.sweep``: one dict per point
    (the point's keys and fn's), in order. A point that raises raises what it raised, as the
    serial loop would."""
    if not points:
        return []
    try:
        frame = sweep(
            fn, list(points), processes=processes, backend=backend, ray_address=ray_address,
            shared=dict(shared), retries=0, progress=False,
        )  # fmt: skip
    except SweepError as error:
        raise error.__cause__ from None
    return frame.to_dict("records")
