"""The native profile file format: versioned JSON (see docs/profiles.md).

``to_dict``/``from_dict`` convert between a :class:`Profile` and the format as a plain dict;
``load``/``save`` read and write files. Every error is a ValueError naming the file (or
"profile dict") and the JSON path of the bad entry, e.g.
``profile.json: latency[12].batch=-3 must be an integer >= 1``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import textio
from .._core import Profile

FORMAT = "servelab.profile"
VERSION = 1

#: The longest time a profile may hold, in seconds: the simulator counts int64 nanoseconds, which
#: hold about 292 years (9.2e18 ns); a longer latency could never be simulated.
MAX_TIME_S = 9.2e9
_MAX_MS = MAX_TIME_S * 1e3
_TOO_LONG = f"must be < {_MAX_MS:g} ms, the int64-nanosecond range of the simulator (292 years)"

_TOP_KEYS = {
    "format",
    "version",
    "source",
    "description",
    "hardware",
    "models",
    "latency",
    "memory_mb",
    "load_time_s",
}
_HARDWARE_KEYS = {"price_per_hour"}
_MODEL_KEYS = {"accuracy"}
_LATENCY_KEYS = {"hardware", "model", "batch", "samples_ms", "percentiles_ms"}


def _show(value: Any) -> str:
    """A value as it appears in JSON, shortened."""
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _key(name: str) -> str:
    return json.dumps(name)


class _Checker:
    """Raises ValueErrors that start with the file name and name the JSON path."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, message: str) -> None:
        raise ValueError(f"{self.where}: {path} {message}")

    def bad(self, path: str, value: Any, must: str) -> None:
        self.fail(f"{path}={_show(value)}", must)

    def obj(self, value: Any, path: str, allowed: set[str] | None = None) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.bad(path, value, "must be a JSON object")
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    self.fail(
                        f"{path}[{_key(key)}]" if path else _key(key),
                        f"is not a known key (allowed: {', '.join(sorted(allowed))})",
                    )
        return value

    def number(
        self,
        value: Any,
        path: str,
        *,
        minimum: float = 0.0,
        strict: bool = False,
        maximum: float | None = None,
        unit: str = "",
    ) -> float:
        ok = (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        )
        ok = ok and (value > minimum if strict else value >= minimum)
        ok = ok and (maximum is None or value <= maximum)
        if not ok:
            bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
            if maximum is not None:
                bound = f"in [{minimum:g}, {maximum:g}]"
            self.bad(path, value, f"must be a finite number {bound}{unit}")
        return float(value)

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value:
            self.bad(path, value, "must be a non-empty string")
        return value


def _check_samples(check: _Checker, value: Any, path: str) -> np.ndarray:
    if not isinstance(value, list) or not value:
        check.bad(path, value, "must be a non-empty list of latencies in ms")
    for i, x in enumerate(value):
        if not isinstance(x, (int, float)) or isinstance(x, bool):
            check.bad(f"{path}[{i}]", x, "must be a number (ms)")
    samples = np.asarray(value, dtype=np.float64)
    bad = np.flatnonzero(~(np.isfinite(samples) & (samples > 0)))
    if bad.size:
        i = int(bad[0])
        check.bad(f"{path}[{i}]", value[i], "must be a finite latency > 0 ms")
    too_long = np.flatnonzero(samples >= _MAX_MS)
    if too_long.size:
        i = int(too_long[0])
        check.bad(f"{path}[{i}]", value[i], _TOO_LONG)
    return samples / 1e3


def _check_percentiles(check: _Checker, value: Any, path: str) -> dict[float, float]:
    if not isinstance(value, Mapping) or not value:
        check.bad(path, value, 'must be a non-empty object {"percentile": ms}, e.g. {"50": 12.5}')
    points: list[tuple[float, str, float]] = []
    for key, ms in value.items():
        try:
            pct = float(key)
        except ValueError:
            pct = math.nan
        if not (0 < pct <= 100):
            check.fail(
                f"{path}[{_key(key)}]", "is not a percentile: keys must be numbers in (0, 100]"
            )
        check.number(ms, f"{path}[{_key(key)}]", strict=True, unit=" ms")
        if ms >= _MAX_MS:
            check.bad(f"{path}[{_key(key)}]", ms, _TOO_LONG)
        points.append((pct, key, float(ms)))
    points.sort()
    for (p0, k0, v0), (p1, k1, v1) in zip(points[:-1], points[1:], strict=True):
        if p0 == p1:
            check.fail(f"{path}[{_key(k1)}]", f"repeats percentile {p1:g} (also {_key(k0)})")
        if v1 < v0:
            check.bad(
                f"{path}[{_key(k1)}]",
                v1,
                f"must be >= {path}[{_key(k0)}]={_show(v0)}: latency cannot decrease as the "
                "percentile grows",
            )
    return {p: v / 1e3 for p, _, v in points}


def _check_pair_table(
    check: _Checker,
    value: Any,
    path: str,
    hardware: Mapping,
    models: Mapping,
    unit: str,
    below: float = math.inf,
) -> list[tuple[str, str, float]]:
    out = []
    for hw, per_model in check.obj(value, path).items():
        hw_path = f"{path}[{_key(hw)}]"
        if hw not in hardware:
            check.fail(hw_path, f'names hardware {_key(hw)} that "hardware" does not declare')
        for model, x in check.obj(per_model, hw_path).items():
            m_path = f"{hw_path}[{_key(model)}]"
            if model not in models:
                check.fail(m_path, f'names model {_key(model)} that "models" does not declare')
            number = check.number(x, m_path, unit=f" {unit}")
            if number >= below:
                check.bad(m_path, x, f"must be < {below:g} {unit}")
            out.append((hw, model, number))
    return out


def from_dict(data: Any, *, where: str = "profile dict") -> Profile:
    """Builds a Profile from the native format as a dict, validating every field.

    ``where`` starts each error message (load() passes the file name).
    """
    check = _Checker(where)
    top = check.obj(data, "", _TOP_KEYS)
    if top.get("format") != FORMAT:
        check.bad("format", top.get("format"), f'must be "{FORMAT}"')
    version = top.get("version")
    if version != VERSION or isinstance(version, bool):
        check.bad("version", version, f"is not supported (this servelab reads version {VERSION})")
    for required in ("hardware", "models", "latency"):
        if required not in top:
            check.fail(required, "is missing (required)")
    source = top.get("source", "")
    if not isinstance(source, str):
        check.bad("source", source, "must be a string")
    if not isinstance(top.get("description", ""), str):
        check.bad("description", top["description"], "must be a string")

    profile = Profile(source)
    hardware = check.obj(top["hardware"], "hardware")
    for name, entry in hardware.items():
        path = f"hardware[{_key(name)}]"
        check.string(name, path)
        entry = check.obj(entry, path, _HARDWARE_KEYS)
        profile.add_hardware(name)
        if "price_per_hour" in entry:
            price = check.number(entry["price_per_hour"], f"{path}.price_per_hour", unit=" $/h")
            profile.set_price(name, price)
    models = check.obj(top["models"], "models")
    for name, entry in models.items():
        path = f"models[{_key(name)}]"
        check.string(name, path)
        entry = check.obj(entry, path, _MODEL_KEYS)
        profile.add_model(name)
        if "accuracy" in entry:
            accuracy = check.number(entry["accuracy"], f"{path}.accuracy", maximum=1.0)
            profile.set_accuracy(name, accuracy)

    latency = top["latency"]
    if not isinstance(latency, list):
        check.bad("latency", latency, "must be a list of entries")
    seen: dict[tuple[str, str, int], int] = {}
    for i, entry in enumerate(latency):
        path = f"latency[{i}]"
        entry = check.obj(entry, path, _LATENCY_KEYS)
        for required in ("hardware", "model", "batch"):
            if required not in entry:
                check.fail(f"{path}.{required}", "is missing (required)")
        hw = check.string(entry["hardware"], f"{path}.hardware")
        if hw not in hardware:
            check.bad(
                f"{path}.hardware",
                hw,
                f'is not declared in "hardware" (known: {", ".join(hardware)})',
            )
        model = check.string(entry["model"], f"{path}.model")
        if model not in models:
            check.bad(
                f"{path}.model", model, f'is not declared in "models" (known: {", ".join(models)})'
            )
        batch = entry["batch"]
        if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
            check.bad(f"{path}.batch", batch, "must be an integer >= 1")
        key = (hw, model, batch)
        if key in seen:
            check.fail(
                path,
                f"repeats hardware {_key(hw)} model {_key(model)} batch {batch} of "
                f"latency[{seen[key]}]",
            )
        seen[key] = i
        has_samples, has_percentiles = "samples_ms" in entry, "percentiles_ms" in entry
        if has_samples == has_percentiles:
            check.fail(path, "must have exactly one of samples_ms and percentiles_ms")
        if has_samples:
            profile.set_latency(
                hw,
                model,
                batch,
                samples_s=_check_samples(check, entry["samples_ms"], f"{path}.samples_ms"),
            )
        else:
            points = _check_percentiles(check, entry["percentiles_ms"], f"{path}.percentiles_ms")
            profile.set_latency(hw, model, batch, percentiles=points)

    for hw, model, mb in _check_pair_table(
        check, top.get("memory_mb", {}), "memory_mb", hardware, models, "MB"
    ):
        profile.set_memory_mb(hw, model, mb)
    for hw, model, s in _check_pair_table(
        check, top.get("load_time_s", {}), "load_time_s", hardware, models, "s", MAX_TIME_S
    ):
        profile.set_load_time(hw, model, s)
    return profile


def _ms(seconds: float) -> float:
    # 12 significant digits: a file's values survive load -> save unchanged (ms -> s -> ms would
    # otherwise pick up one-ulp noise such as 12.345000000000001).
    return float(f"{seconds * 1e3:.12g}")


def to_dict(profile: Profile) -> dict[str, Any]:
    """The profile in the native format (version 1) as a JSON-ready dict; samples sorted."""
    hardware = {}
    for name in profile.hardware:
        hardware[name] = {"price_per_hour": profile.price(name)} if profile.has_price(name) else {}
    models = {}
    for name in profile.models:
        accuracy = profile.accuracy(name)
        models[name] = {} if accuracy is None else {"accuracy": accuracy}
    latency: list[dict[str, Any]] = []
    memory: dict[str, dict[str, float]] = {}
    load_time: dict[str, dict[str, float]] = {}
    for hw, model in profile.pairs():
        for batch in profile.batches(hw, model):
            entry: dict[str, Any] = {"hardware": hw, "model": model, "batch": batch}
            dist = profile.distribution(hw, model, batch)
            if "samples_s" in dist:
                entry["samples_ms"] = [_ms(s) for s in dist["samples_s"].tolist()]
            else:
                entry["percentiles_ms"] = {f"{p:g}": _ms(s) for p, s in dist["percentiles"].items()}
            latency.append(entry)
        if (mb := profile.memory_mb(hw, model)) is not None:
            memory.setdefault(hw, {})[model] = mb
        if (s := profile.load_time_s(hw, model)) is not None:
            load_time.setdefault(hw, {})[model] = s
    out: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "source": profile.source,
        "hardware": hardware,
        "models": models,
        "latency": latency,
    }
    if memory:
        out["memory_mb"] = memory
    if load_time:
        out["load_time_s"] = load_time
    return out


def loads(text: str | bytes, *, where: str = "<string>") -> Profile:
    """A Profile from the JSON text of a profile file; errors start with ``where``."""
    if isinstance(text, bytes):
        text = textio.decode_text(text, where=where)
    return from_dict(textio.load_json(text, where=where), where=where)


def load(path: str | os.PathLike[str]) -> Profile:
    """Reads a profile file (native JSON format, version 1)."""
    return loads(textio.read_text(path, what="profile JSON file"), where=str(path))


def dumps(profile: Profile, *, indent: int | None = 1) -> str:
    """The JSON text of a profile file. Each latency entry is kept on one line."""
    data = to_dict(profile)
    if indent is None:
        return json.dumps(data, allow_nan=False)
    latency = data.pop("latency")
    head = json.dumps(data, indent=indent, allow_nan=False)
    lines = ",\n".join("  " + json.dumps(entry, allow_nan=False) for entry in latency)
    body = f'"latency": [\n{lines}\n ]' if latency else '"latency": []'
    # The latency list goes last, one entry per line (diff-friendly): head ends with "\n}".
    return head[:-2] + f",\n {body}\n}}\n"


def save(profile: Profile, path: str | os.PathLike[str], *, indent: int | None = 1) -> None:
    """Writes a profile file (native JSON format, version 1)."""
    Path(path).write_text(dumps(profile, indent=indent), encoding="utf-8")


def profile_eq(a: Profile, b: Any) -> bool:
    """Profiles are equal when their native dicts are."""
    if not isinstance(b, Profile):
        return NotImplemented
    return to_dict(a) == to_dict(b)
