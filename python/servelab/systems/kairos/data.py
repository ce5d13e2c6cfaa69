"""Where Kairos's data comes from: the artifact folder (boringlee24/hpdc23-kairos) and its readers,
native profile files, and the profiles the simulations run on.

``allocator_profile.json`` holds, per model and instance type, the inputs of the throughput upper
bound (``qps``; for auxiliary types also ``vio_batch``, ``small_ratio``, ``time_ratio`` and
``all_batch``); ``instance.json`` holds the search space (``ins_types`` with the base type first,
``max_num``, ``price`` in $/h and the budget ``cost``); ``data/`` the latency samples. Every error
names the file and line::

    profile = read_allocator_profile("kairos/allocator_profile.json", "rm2")
    space = read_instance_json("kairos/instance.json")
    latencies = load_profile("kairos", "rm2")   # what the evaluations simulate (cached)
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ... import profiles, textio
from ..._core import Profile
from ..._core import kairos as _k
from ...scenario import resolve_profile

PathLike = str | os.PathLike[str]

ALLOCATOR_PROFILE = "allocator_profile.json"
INSTANCE_JSON = "instance.json"


class _File:
    """A parsed JSON file that reports errors as ``path:line: message``."""

    def __init__(self, path: PathLike) -> None:
        self.path = Path(path)
        self.text = textio.read_text(self.path, what=f"Kairos artifact file ({self.path.name})")
        self.data = textio.load_json(self.text, where=str(self.path))

    def line(self, keys: Sequence[str]) -> int:
        """The line of the entry at the JSON path `keys` (found key by key, in order)."""
        pos = 0
        for key in keys:
            found = self.text.find(json.dumps(key), pos)
            if found < 0:
                break
            pos = found
        return self.text.count("\n", 0, pos) + 1

    def fail(self, keys: Sequence[str], message: str) -> None:
        where = ".".join(keys) if keys else "(top level)"
        sep = "" if message.startswith("=") else " "
        raise ValueError(f"{self.path}:{self.line(keys)}: {where}{sep}{message}")

    def obj(self, value: Any, keys: Sequence[str]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(keys, f"must be a JSON object, got {json.dumps(value)[:40]}")
        return value

    def number(
        self, value: Any, keys: Sequence[str], *, low: float = 0.0, high: float = math.inf
    ) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not (low <= value <= high)
        ):
            bound = f"in [{low:g}, {high:g}]" if math.isfinite(high) else f">= {low:g}"
            self.fail(keys, f"={json.dumps(value)[:40]} must be a finite number {bound}")
        return float(value)

    def integer(self, value: Any, keys: Sequence[str], *, low: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            self.fail(keys, f"={json.dumps(value)[:40]} must be an integer >= {low}")
        return int(value)


def read_instance_json(path: PathLike, *, budget: float | None = None) -> _k.InstanceSpace:
    """The search space of ``instance.json``: types (base first), max counts, prices, budget.

    budget: replaces the file's ``cost`` ($/h); the maximum counts stay those of the file.
    """
    f = _File(path)
    top = f.obj(f.data, [])
    for key in ("ins_types", "max_num", "price", "cost"):
        if key not in top:
            f.fail([], f"has no {key!r} (needs ins_types, max_num, price, cost)")
    types, max_num, prices = top["ins_types"], top["max_num"], top["price"]
    for key, value in (("ins_types", types), ("max_num", max_num), ("price", prices)):
        if not isinstance(value, list) or not value:
            f.fail([key], "must be a non-empty JSON list")
    if not (len(types) == len(max_num) == len(prices)):
        f.fail(
            ["max_num"],
            f"has {len(max_num)} entries, price {len(prices)} and ins_types {len(types)}: "
            "they must have one entry per type",
        )
    for i, t in enumerate(types):
        if not isinstance(t, str) or not t:
            f.fail(["ins_types"], f"[{i}]={json.dumps(t)} must be a non-empty string")
    counts = [f.integer(v, ["max_num"]) for v in max_num]
    price = [f.number(v, ["price"]) for v in prices]
    cost = f.number(top["cost"], ["cost"]) if budget is None else float(budget)
    try:
        return _k.InstanceSpace(list(types), price, counts, cost)
    except ValueError as e:
        raise ValueError(f"{f.path}:{f.line(['cost'])}: {e}") from None


def _aux_profile(f: _File, model: str, name: str, entry: Mapping[str, Any]) -> _k.AuxiliaryProfile:
    keys = [model, name]
    for field in ("qps", "vio_batch", "small_ratio", "time_ratio", "all_batch"):
        if field not in entry:
            f.fail(
                keys,
                f"has no {field!r} (an auxiliary type needs qps, vio_batch, small_ratio, "
                "time_ratio and all_batch)",
            )
    all_batch = f.obj(entry["all_batch"], [*keys, "all_batch"])
    table: dict[int, float] = {}
    for threshold, qps in all_batch.items():
        where = [*keys, "all_batch", threshold]
        try:
            batch = int(threshold)
        except ValueError:
            f.fail(where, "is not an integer batch size")
        if batch < 1:
            f.fail(where, "must be a batch size >= 1")
        table[batch] = f.number(qps, where)
    values = (
        f.number(entry["qps"], [*keys, "qps"]),
        f.integer(entry["vio_batch"], [*keys, "vio_batch"], low=1),
        f.number(entry["small_ratio"], [*keys, "small_ratio"], high=1.0),
        f.number(entry["time_ratio"], [*keys, "time_ratio"], high=1.0),
    )
    try:
        return _k.AuxiliaryProfile(name, *values, table)
    except ValueError as e:
        raise ValueError(f"{f.path}:{f.line(keys)}: {e}") from None


def _bound_profile(f: _File, model: str, base: str | None) -> _k.BoundProfile:
    top = f.obj(f.data, [])
    if model not in top:
        raise KeyError(f"{f.path}: no model {model!r} (models: {', '.join(sorted(top))})")
    entries = f.obj(top[model], [model])
    for name, entry in entries.items():
        f.obj(entry, [model, name])
    bases = [n for n, e in entries.items() if "vio_batch" not in e]
    if base is None:
        if len(bases) != 1:
            f.fail(
                [model],
                f"has {len(bases)} types without vio_batch ({', '.join(bases) or 'none'}): "
                "exactly one (the base type) is expected; pass base=",
            )
        base = bases[0]
    if base not in entries:
        raise KeyError(
            f"{f.path}: model {model!r} has no type {base!r} (types: {', '.join(entries)})"
        )
    base_entry = entries[base]
    if "qps" not in base_entry:
        f.fail([model, base], "has no 'qps'")
    base_qps = f.number(base_entry["qps"], [model, base, "qps"])
    if base_qps <= 0:
        f.fail([model, base, "qps"], f"={base_qps} must be > 0")
    aux = [_aux_profile(f, model, n, e) for n, e in entries.items() if n != base]
    try:
        return _k.BoundProfile(base, base_qps, aux)
    except ValueError as e:
        raise ValueError(f"{f.path}:{f.line([model])}: {e}") from None


def read_allocator_profile(
    path: PathLike, model: str, *, base: str | None = None
) -> _k.BoundProfile:
    """One model's bound inputs from ``allocator_profile.json``.

    base: the base type; by default the one type without ``vio_batch``. KeyError for an unknown
    model; ValueError (``path:line: ...``) for a malformed entry.
    """
    return _bound_profile(_File(path), model, base)


def read_allocator_profiles(path: PathLike) -> dict[str, _k.BoundProfile]:
    """Every model's bound inputs from ``allocator_profile.json``."""
    f = _File(path)
    return {model: _bound_profile(f, model, None) for model in f.obj(f.data, [])}


def artifact_models(folder: PathLike) -> list[str]:
    """The models of an artifact folder's ``allocator_profile.json``, in file order."""
    f = _File(Path(folder) / ALLOCATOR_PROFILE)
    return list(f.obj(f.data, []))


def is_artifact_folder(path: PathLike) -> bool:
    """True for a folder holding the artifact's allocator_profile.json and instance.json; False
    for one holding neither. A folder holding only one of them is a damaged artifact: a
    FileNotFoundError names the file that is missing (read as a latency folder instead, it would
    fail later with a message about something else, such as the budget)."""
    p = Path(path)
    if not p.is_dir():
        return False
    present = [name for name in (ALLOCATOR_PROFILE, INSTANCE_JSON) if (p / name).exists()]
    if len(present) == 1:
        missing = INSTANCE_JSON if present == [ALLOCATOR_PROFILE] else ALLOCATOR_PROFILE
        raise FileNotFoundError(
            f"{p / missing} does not exist: the Kairos artifact folder {p} has {present[0]} "
            f"but not {missing} (the bounds need both)"
        )
    return len(present) == 2


def allocator_profile_dict(profile: _k.BoundProfile) -> dict[str, Any]:
    """A bound profile in the layout of one model of ``allocator_profile.json``."""
    out: dict[str, Any] = {profile.base: {"qps": profile.base_qps}}
    for a in profile.auxiliaries:
        out[a.type] = {
            "qps": a.qps,
            "small_ratio": a.small_ratio,
            "vio_batch": a.vio_batch,
            "time_ratio": a.time_ratio,
            "all_batch": {("none" if k is None else str(k)): v for k, v in a.all_batch.items()},
        }
    return out


def artifact_folder(source: Any) -> Path:
    """``source`` as the path of a Kairos artifact folder; ValueError for anything else."""
    path = Path(source) if isinstance(source, (str, os.PathLike)) else None
    if path is None or not is_artifact_folder(path):
        raise ValueError(
            f"source={source!r} must be the Kairos artifact folder (data/, instance.json, ...)"
        )
    return path


def read_profile(source: Any) -> Profile | None:
    """The latency profile of a bound source: a Profile as is, an artifact folder's latency data
    (every model, every sample) or a native profile file; None for any other kind of source."""
    if isinstance(source, Profile):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(
                f"{path} does not exist (give a Kairos artifact folder or a profile file)"
            )
        if path.is_dir():
            if (path / "data").is_dir() or path.name == "data":
                return profiles.import_kairos(path)
            raise FileNotFoundError(
                f"{path} is neither a Kairos artifact folder (allocator_profile.json, "
                "instance.json, data/) nor a profile file"
            )
        return profiles.load(path)
    return None


@functools.lru_cache(maxsize=16)
def _artifact_profile(folder: str, model: str) -> Profile:
    return profiles.import_kairos(folder, drop_max=True, models=[model])


def load_profile(source: Any, model: str) -> Profile:
    """The profile the evaluations simulate: a Profile as is; a Kairos artifact folder imported
    for ``model`` with the largest sample of each list dropped (so that the decision statistic
    "mean" is the artifact's estimate), cached by folder and model (the 16 most recent); or
    anything a scenario accepts (a profile JSON path, 'example:<name>', a dict)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            if not ((path / "data").is_dir() or path.name == "data"):
                raise FileNotFoundError(f"{path} is a folder but not a Kairos artifact (no data/)")
            return _artifact_profile(str(path.resolve()), model)
    return resolve_profile(source)
