"""Hera's node and model profiles: the CPU server node (Table II) and the recommendation models of
Table I, as the C++ contention model reads them.

A node is cores (one worker each), LLC ways (Intel CAT partitions), a shared memory bandwidth
(GB/s) and a memory capacity (GB) that bounds how many workers fit. A model profile is what one
worker costs: compute time per query, its cache sensitivity, DRAM traffic per query, memory
footprint and SLA. ``docs/hera.md`` explains every field and which values come from the paper.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ... import _core

NodeSpec = _core.hera.NodeSpec
ModelProfile = _core.hera.ModelProfile

#: Table I's names as the paper prints them, by our model name
LABELS = {
    "dlrm_a": "DLRM(A)",
    "dlrm_b": "DLRM(B)",
    "dlrm_c": "DLRM(C)",
    "dlrm_d": "DLRM(D)",
    "ncf": "NCF",
    "dien": "DIEN",
    "din": "DIN",
    "wnd": "WnD",
}

NODE_FIELDS = (
    "cores",
    "llc_ways",
    "llc_mb",
    "mem_bandwidth_gbs",
    "mem_capacity_gb",
    "core_bandwidth_gbs",
    "bandwidth_knee",
)
MODEL_FIELDS = (
    "sla_ms",
    "memory_gb",
    "compute_ms",
    "cache_stall",
    "shared_ws_mb",
    "private_ws_mb",
    "sparse_mb",
    "dense_mb",
    "query_items",
)
_INT_FIELDS = {"cores", "llc_ways"}
#: the fields a model given as a mapping must set: their defaults are placeholders, not a model
#: (the others default to no cache sensitivity, no traffic, and Sec. IV's 220 items per query)
REQUIRED_MODEL_FIELDS = ("sla_ms", "memory_gb", "compute_ms")


def baseline_node() -> NodeSpec:
    """Table II's node: one Xeon Gold 6242 socket (16 cores, 22 MB / 11-way LLC, 128 GB/s,
    192 GiB)."""
    return _core.hera.baseline_node()


#: node presets by name: Table II's, and the smaller machines a test or a notebook can use
NODE_PRESETS: dict[str, dict[str, Any]] = {
    "xeon-gold-6242": {},
    # Fig. 17(b)-style variations of the baseline (the paper's exact values are not in its text).
    "xeon-8-cores": {"cores": 8},
    "xeon-20-ways": {"llc_ways": 20, "llc_mb": 40.0},
    "xeon-low-bandwidth": {"mem_bandwidth_gbs": 64.0},
}


def node(
    preset: str | NodeSpec | Mapping[str, Any] = "xeon-gold-6242", /, **fields: Any
) -> NodeSpec:
    """A validated node: a preset name (``NODE_PRESETS``), a NodeSpec or a mapping of fields,
    with ``fields`` overriding. ValueError names the field and the value."""
    if isinstance(preset, NodeSpec):
        base = {f: getattr(preset, f) for f in NODE_FIELDS} | {"name": preset.name}
    elif isinstance(preset, str):
        if preset not in NODE_PRESETS:
            raise KeyError(f"node preset {preset!r} is unknown; known: {', '.join(NODE_PRESETS)}")
        base = {"name": preset, **NODE_PRESETS[preset]}
    elif isinstance(preset, Mapping):
        base = dict(preset)
    else:
        raise TypeError(f"node preset must be a name, a NodeSpec or a mapping, not {preset!r}")
    spec = baseline_node()
    for key, value in {**base, **fields}.items():
        _set(spec, key, value, NODE_FIELDS + ("name",), "node")
    spec.validate()
    return spec


def table1_models() -> list[ModelProfile]:
    """The eight models of Table I (dlrm_a .. dlrm_d, ncf, dien, din, wnd)."""
    return list(_core.hera.table1_models())


def model(source: str | ModelProfile | Mapping[str, Any], /, **fields: Any) -> ModelProfile:
    """A validated model profile: a Table I name, a ModelProfile or a mapping of fields (with
    ``name`` and every field of ``REQUIRED_MODEL_FIELDS``, in the mapping or in ``fields``),
    ``fields`` overriding (``name=`` renames). Unknown names: KeyError; bad values and missing
    fields: ValueError naming the model, the field and the value."""
    if isinstance(source, ModelProfile):
        base = {f: getattr(source, f) for f in MODEL_FIELDS} | {"name": source.name}
    elif isinstance(source, str):
        base = {f: getattr(_core.hera.table1_model(source), f) for f in MODEL_FIELDS} | {
            "name": source
        }
    elif isinstance(source, Mapping):
        if "name" not in source:
            raise ValueError("a model profile mapping needs a 'name'")
        base = dict(source)
        missing = [f for f in REQUIRED_MODEL_FIELDS if f not in base and f not in fields]
        if missing:
            raise ValueError(
                f"model {fields.get('name', base['name'])!r}: missing {', '.join(missing)} "
                f"(a model given as a mapping sets {', '.join(REQUIRED_MODEL_FIELDS)}; "
                f"the others have defaults, see docs/hera.md)"
            )
    else:
        raise TypeError(
            f"a model must be a Table I name, a ModelProfile or a mapping, not {source!r}"
        )
    profile = ModelProfile()
    for key, value in {**base, **fields}.items():
        _set(
            profile,
            key,
            value,
            MODEL_FIELDS + ("name",),
            f"model {fields.get('name', base.get('name'))!r}",
        )
    profile.validate()
    return profile


def models(
    items: Iterable[str | ModelProfile | Mapping[str, Any]] | None = None,
) -> list[ModelProfile]:
    """Table I's models (None) or each item through ``model()``; ValueError for repeated names."""
    out = table1_models() if items is None else [model(x) for x in items]
    names = [m.name for m in out]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"model names repeat: {', '.join(repeated)}")
    if not out:
        raise ValueError("no models given")
    return out


def label(name: str) -> str:
    """The paper's name of a Table I model, else the name itself."""
    return LABELS.get(name, name)


def _set(obj: Any, key: str, value: Any, allowed: tuple[str, ...], what: str) -> None:
    if key not in allowed:
        raise KeyError(f"{what}: unknown field {key!r}; known: {', '.join(allowed)}")
    if key == "name":
        if not isinstance(value, str) or not value:
            raise ValueError(f"{what}: name={value!r} must be a non-empty string")
        obj.name = value
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what}: {key}={value!r} must be a number")
    if key in _INT_FIELDS:
        if not float(value).is_integer():
            raise ValueError(f"{what}: {key}={value!r} must be an integer")
        if not -(2**31) <= value < 2**31:
            raise ValueError(f"{what}: {key}={value!r} is out of range")
        value = int(value)
    elif not math.isfinite(value):
        raise ValueError(f"{what}: {key}={value!r} must be finite")
    setattr(obj, key, value)
