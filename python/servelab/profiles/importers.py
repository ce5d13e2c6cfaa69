"""Importers for the latency-profile layouts of published artifacts (Kairos, RAMSIS, Ribbon).

Each returns a :class:`Profile` with the raw samples (seconds), so every statistic stays available.
A malformed file raises ValueError naming the file and line (``path:line: ...``); docs/profiles.md
describes each layout and what is taken from it.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from .. import textio
from .._core import Profile
from .format import MAX_TIME_S

_BATCH_FILE = re.compile(r"^(?P<model>.+)_(?P<batch>\d+)_1\.json$")  # Kairos and Ribbon
_RAMSIS_FILE = re.compile(r"^(?P<model>.+)_bsize-(?P<batch>\d+)_profile\.json(?:\.gz)?$")

PathLike = str | os.PathLike[str]


def _line_of(text: str, index: int) -> int:
    """The line on which element `index` of the JSON list in `text` starts."""
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    for i in range(index + 1):
        while text[pos] in " \t\r\n,":
            pos += 1
        if i == index:
            return text.count("\n", 0, pos) + 1
        _, pos = decoder.raw_decode(text, pos)
    raise AssertionError("unreachable")


def read_latency_list(path: PathLike, *, unit: str = "ms") -> np.ndarray:
    """A JSON list of latencies (``unit`` 'ms' or 's'; ``.gz`` files are decompressed) as seconds.

    Every element must be a finite number > 0 (and within the simulator's int64-nanosecond range);
    the first that is not is reported with its line.
    """
    path = Path(path)
    raw = textio.read_bytes(path, what="JSON list of latencies")
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise ValueError(f"{path}:1: not a valid gzip file ({e})") from None
    text = textio.decode_text(raw, where=str(path))
    data = textio.load_json(text, where=str(path))
    if not isinstance(data, list) or not data:
        shown = json.dumps(data)[:40]
        raise ValueError(
            f"{path}:1: expected a non-empty JSON list of latencies in {unit}, got {shown}"
        )
    longest = MAX_TIME_S * 1e3 if unit == "ms" else MAX_TIME_S
    for i, x in enumerate(data):
        if (
            not isinstance(x, (int, float))
            or isinstance(x, bool)
            or not (math.isfinite(x) and 0 < x < longest)
        ):
            raise ValueError(
                f"{path}:{_line_of(text, i)}: element [{i}]={json.dumps(x)} must be a finite "
                f"latency > 0 {unit} (and < {longest:g} {unit}, the simulator's time range)"
            )
    values = np.asarray(data, dtype=np.float64)
    return values / 1e3 if unit == "ms" else values


def read_price_csv(path: PathLike) -> dict[str, float]:
    """An ``instance,price`` CSV ($/h, header line first; blanks around fields are ignored)."""
    path = Path(path)
    prices: dict[str, float] = {}
    with textio.open_text(path, what="price CSV file") as f:
        rows = csv.reader(f)
        header = [c.strip() for c in next(rows, [])]
        if header[:2] != ["instance", "price"]:
            raise ValueError(
                f"{path}:1: expected the header 'instance,price', got {','.join(header)!r}"
            )
        for row in rows:
            line = rows.line_num
            if not row or not "".join(row).strip():
                continue
            if len(row) != 2:
                raise ValueError(
                    f"{path}:{line}: expected 2 fields 'instance,price', got {len(row)}"
                )
            name, text = row[0].strip(), row[1].strip()
            try:
                price = float(text)
            except ValueError:
                price = math.nan
            if not name or not (math.isfinite(price) and price >= 0):
                raise ValueError(
                    f"{path}:{line}: price={text!r} of instance {name!r} must be >= 0 $/h"
                )
            if name in prices:
                raise ValueError(f"{path}:{line}: instance {name!r} is listed twice")
            prices[name] = price
    return prices


def _read_accuracy_csv(path: Path) -> dict[str, float]:
    """RAMSIS's accuracy table (``task,model,top1_accuracy_pct,note``) as fractions."""
    out: dict[str, float] = {}
    with textio.open_text(path, what="accuracy CSV file") as f:
        rows = csv.DictReader(f)
        for field in ("model", "top1_accuracy_pct"):
            if field not in (rows.fieldnames or []):
                raise ValueError(f"{path}:1: the header has no column {field!r}")
        for row in rows:
            line = rows.line_num
            text = (row["top1_accuracy_pct"] or "").strip()
            try:
                pct = float(text)
            except ValueError:
                pct = math.nan
            if not (0 <= pct <= 100):
                raise ValueError(
                    f"{path}:{line}: top1_accuracy_pct={text!r} of model {row['model']!r} "
                    "must be in [0, 100]"
                )
            out[row["model"].strip()] = pct / 100
    return out


def _batch_files(folder: Path, pattern: re.Pattern[str]) -> list[tuple[str, int, Path]]:
    """(model, batch, file) for every data file of one instance folder, sorted. A folder without
    any is an error: it would otherwise vanish from the profile without a word."""
    found = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        match = pattern.match(path.name)
        if match is None:
            if path.is_file() and path.name.endswith((".json", ".json.gz")):
                raise ValueError(f"{path}: the file name does not match {pattern.pattern}")
            continue
        if path.is_dir():
            raise IsADirectoryError(f"{path}: is a directory, expected a JSON list of latencies")
        batch = int(match["batch"])
        if batch < 1:
            raise ValueError(f"{path}: batch={batch} (from the file name) must be >= 1")
        found.append((match["model"], batch, path))
    if not found:
        raise ValueError(f"{folder}: holds no data files named like {pattern.pattern}")
    return sorted(found, key=lambda t: (t[0], t[1]))


def _instance_dirs(folder: Path, skip: Iterable[str] = ()) -> list[Path]:
    dirs = [p for p in sorted(folder.iterdir()) if p.is_dir() and p.name not in set(skip)]
    if not dirs:
        raise ValueError(f"{folder}: holds no per-instance folders")
    return dirs


def _set_prices(profile: Profile, prices: Mapping[str, float] | None) -> None:
    if prices is None:
        return
    for name in profile.hardware:
        if name in prices:
            profile.set_price(name, prices[name])


def _load_prices(prices: PathLike | Mapping[str, float] | None, default: Path) -> dict | None:
    if prices is None:
        return read_price_csv(default) if default.is_file() else None
    if isinstance(prices, Mapping):
        return dict(prices)
    return read_price_csv(prices)


def _require_dir(folder: PathLike, what: str) -> Path:
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{what} folder {folder} does not exist")
    return folder


def _selection(name: str, wanted: Iterable[str] | None) -> list[str] | None:
    """A models= / instances= / tasks= argument checked: None (everything) or a non-empty list of
    distinct names."""
    if wanted is None:
        return None
    if isinstance(wanted, str | bytes):
        raise TypeError(f"{name}={wanted!r} must be a list of names, e.g. [{wanted!r}]")
    try:
        names = list(wanted)
    except TypeError:
        raise TypeError(f"{name}={wanted!r} must be a list of names") from None
    if not names:
        raise ValueError(f"{name}=[] is empty; omit it (None) to import every one")
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"{name}: {n!r} is not a name (a string)")
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise ValueError(f"{name}={names!r} names {n!r} twice")
        seen.add(n)
    return names


def _check_known(name: str, wanted: list[str] | None, known: Iterable[str], where: Path) -> None:
    """KeyError naming the first of `wanted` that `where` does not hold, and those it holds."""
    known = sorted(set(known))
    for n in wanted or ():
        if n not in known:
            raise KeyError(f"{name}: {n!r} is not in {where} (known: {', '.join(known)})")


def _select_batch_files(
    folder: Path,
    instances: list[str] | None,
    models: list[str] | None,
    skip: Iterable[str] = (),
) -> list[tuple[str, str, int, Path]]:
    """(instance, model, batch, file) of the chosen instance folders and models of a Kairos or
    Ribbon layout; an unknown instance or model is a KeyError listing the known ones."""
    dirs = {d.name: d for d in _instance_dirs(folder, skip)}
    _check_known("instances", instances, dirs, folder)
    chosen = [dirs[n] for n in sorted(instances)] if instances else list(dirs.values())
    files = [(d.name, *entry) for d in chosen for entry in _batch_files(d, _BATCH_FILE)]
    _check_known("models", models, (model for _, model, _, _ in files), folder)
    return [f for f in files if models is None or f[1] in models]


def _kairos_declared_types(root: Path) -> list[str]:
    """The instance types of the artifact's instance.json next to data/, if there is one."""
    path = root / "instance.json"
    if not path.is_file():
        return []
    top = textio.read_json(path, what="Kairos instance.json")
    declared = top.get("ins_types") if isinstance(top, dict) else None
    # A malformed instance.json is reported by the bound's reader; here it only adds checks.
    return [t for t in declared if isinstance(t, str)] if isinstance(declared, list) else []


def _check_kairos_instances(data: Path, root: Path, include_load: bool) -> None:
    """Every instance the artifact declares (instance.json) or measured the load of
    (data/logs_load/) has its data/ folder: a missing one must not vanish from the profile."""
    present = {d.name for d in data.iterdir() if d.is_dir() and d.name != "logs_load"}
    expected = {t: root / "instance.json" for t in _kairos_declared_types(root)}
    if include_load and (data / "logs_load").is_dir():
        for d in (data / "logs_load").iterdir():
            if d.is_dir():
                expected.setdefault(d.name, d)
    for name, source in sorted(expected.items()):
        if name not in present:
            raise FileNotFoundError(
                f"{data / name}: the instance folder is missing ({source} names {name!r}; "
                f"present: {', '.join(sorted(present)) or 'none'})"
            )


def import_kairos(
    folder: PathLike,
    *,
    include_load: bool = True,
    drop_max: bool = False,
    models: Iterable[str] | None = None,
    instances: Iterable[str] | None = None,
    prices: PathLike | Mapping[str, float] | None = None,
) -> Profile:
    """The Kairos artifact (HPDC'23): ``data/<instance>/<model>_<batch>_1.json`` (ms).

    folder: the artifact root (holding ``data/`` and ``price.csv``) or its ``data/`` folder.
    include_load: add ``data/logs_load/<instance>/<same name>`` element-wise, as the Kairos code
    does (``total = data + logs_load``). drop_max: drop each list's single largest sample, as the
    artifact's emulated service times do (then "mean" equals its distributor_mean_ms; otherwise use
    the statistic "mean_without_max" for that). models / instances: import only these. prices: a
    price CSV or {instance: $/h}; default ``price.csv`` next to ``data/`` when present.
    """
    instances, models = _selection("instances", instances), _selection("models", models)
    folder = _require_dir(folder, "Kairos")
    data = folder / "data" if (folder / "data").is_dir() else folder
    root = data.parent if data.name == "data" else data
    profile = Profile(
        "Kairos (HPDC'23) artifact boringlee24/hpdc23-kairos, data/"
        + (" + data/logs_load" if include_load else "")
        + (", largest sample dropped" if drop_max else "")
        + "; ms converted to s"
    )
    if instances is None:
        _check_kairos_instances(data, root, include_load)
    for instance, model, batch, path in _select_batch_files(
        data, instances, models, skip=["logs_load"]
    ):
        samples = read_latency_list(path)
        if include_load:
            samples = samples + _kairos_load_component(data, instance, path, samples.size)
        if drop_max and samples.size > 1:
            samples = np.delete(samples, int(np.argmax(samples)))
        profile.set_latency(instance, model, batch, samples_s=samples)
    _set_prices(profile, _load_prices(prices, root / "price.csv"))
    return profile


def _kairos_load_component(data: Path, instance: str, path: Path, size: int) -> np.ndarray:
    """data/logs_load/<instance>/<same name>: what the Kairos code adds to each latency."""
    load_path = data / "logs_load" / instance / path.name
    if not load_path.exists():
        raise ValueError(
            f"{path}: its load component {load_path} is missing "
            "(pass include_load=False to import data/ alone)"
        )
    load = read_latency_list(load_path)
    if load.size != size:
        raise ValueError(
            f"{load_path}: holds {load.size} samples but {path} holds {size}; they are added "
            "element-wise"
        )
    return load


def import_ribbon(
    folder: PathLike,
    *,
    models: Iterable[str] | None = None,
    instances: Iterable[str] | None = None,
    prices: PathLike | Mapping[str, float] | None = None,
) -> Profile:
    """The Ribbon artifact (SC'21): ``characterization/logs/<instance>/<model>_<batch>_1.json``.

    Latencies are in ms.

    folder: the artifact root (holding ``characterization/logs`` and ``query/price.csv``), a
    ``history_*`` root with the same layout, or the ``logs`` folder itself. prices: a price CSV or
    {instance: $/h}; default ``query/price.csv`` of the root when present.
    """
    instances, models = _selection("instances", instances), _selection("models", models)
    folder = _require_dir(folder, "Ribbon")
    logs = folder / "characterization" / "logs"
    if not logs.is_dir():
        logs = folder
    root = logs.parent.parent if logs.parent.name == "characterization" else logs
    profile = Profile(
        "Ribbon (SC'21) artifact boringlee24/SC21_Ribbon, characterization/logs; ms converted to s"
    )
    for instance, model, batch, path in _select_batch_files(logs, instances, models):
        profile.set_latency(instance, model, batch, samples_s=read_latency_list(path))
    _set_prices(profile, _load_prices(prices, root / "query" / "price.csv"))
    return profile


def import_ramsis(
    folder: PathLike,
    *,
    tasks: Iterable[str] | None = None,
    models: Iterable[str] | None = None,
    hardware: str = "cloud_cpu",
    accuracy: PathLike | Mapping[str, float] | None = None,
) -> Profile:
    """The RAMSIS artifact (EuroSys'24): ``profiles/<task>/<model>/<model>_bsize-<b>_profile.json``.

    Latencies are in seconds (``.json.gz`` files are read transparently). folder: the artifact root
    or its ``profiles/`` folder. tasks: e.g. ["image_cloud_cpu"] (default: every task folder); all
    run on one CPU worker type named ``hardware``. accuracy: a CSV with ``model`` and
    ``top1_accuracy_pct`` columns or {model: fraction}; default ``derived/accuracy.csv`` of the root
    when present (percent converted to a fraction).
    """
    tasks, models = _selection("tasks", tasks), _selection("models", models)
    folder = _require_dir(folder, "RAMSIS")
    profiles = folder / "profiles" if (folder / "profiles").is_dir() else folder
    root = profiles.parent if profiles.name == "profiles" else profiles
    profile = Profile(
        f"RAMSIS (EuroSys'24) artifact dmmendo/RAMSIS, profiles/ on hardware {hardware}"
    )
    profile.add_hardware(hardware)
    for model_dir in _ramsis_model_dirs(profiles, tasks, models):
        seen: dict[int, Path] = {}
        for model, batch, path in _batch_files(model_dir, _RAMSIS_FILE):
            if model != model_dir.name:
                raise ValueError(
                    f"{path}: model {model!r} in the file name is not its folder's "
                    f"{model_dir.name!r}"
                )
            if batch in seen:
                raise ValueError(f"{path}: batch {batch} is also in {seen[batch].name}")
            seen[batch] = path
            profile.set_latency(hardware, model, batch, samples_s=read_latency_list(path, unit="s"))
    if isinstance(accuracy, Mapping):
        table = dict(accuracy)
        # The CSV covers every task's models; a mapping given here is about this profile only.
        unknown = sorted(set(table) - set(profile.models))
        if unknown:
            raise KeyError(
                f"accuracy: model {unknown[0]!r} is not in the imported profile "
                f"(its models: {', '.join(profile.models)})"
            )
    elif accuracy is not None:
        table = _read_accuracy_csv(Path(accuracy))
    else:
        default = root / "derived" / "accuracy.csv"
        table = _read_accuracy_csv(default) if default.is_file() else {}
    for model in profile.models:
        if model in table:
            profile.set_accuracy(model, table[model])
    return profile


def _ramsis_model_dirs(
    profiles: Path, tasks: list[str] | None, models: list[str] | None
) -> list[Path]:
    """The <task>/<model> folders chosen; an unknown task or model is a KeyError listing the
    known ones (e.g. tasks=["image"] where the folder is image_cloud_cpu)."""
    task_dirs = {d.name: d for d in _instance_dirs(profiles)}
    _check_known("tasks", tasks, task_dirs, profiles)
    chosen = [task_dirs[n] for n in sorted(tasks)] if tasks else list(task_dirs.values())
    model_dirs = [m for t in chosen for m in _instance_dirs(t)]
    where = chosen[0] if len(chosen) == 1 else profiles
    _check_known("models", models, (m.name for m in model_dirs), where)
    return [m for m in model_dirs if models is None or m.name in models]
