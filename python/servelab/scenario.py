"""Scenarios: everything one run needs, as a dict, a YAML/JSON file or keyword arguments.

A scenario names a profile, the cluster's worker groups, the workload and the scheduler::

    profile: example:hetero_cpu_gpu        # an embedded example, or a path to a profile JSON
    workers:
      - {hardware: g4dn.xlarge, count: 1}
      - {hardware: c5n.2xlarge, count: 3, models: [rm2]}
      # co-located instances: `count` of them on each machine of a machine group (below)
      # - {hardware: g4dn.xlarge, count: 3, models: [rm2], machine: gpus}
      # serve only: what runs the group's batches (default: emulated), e.g.
      # - {hardware: cpu, count: 2, executor: "torchscript(path='m.pt', intra_op=1)"}
      # serve only: pin the group's workers, cores: [0, 1] or pin: compact|spread (servelab.pinning)
    workload:
      arrivals: poisson(rate=200)          # any registered arrival process (a spec or a dict)
      # or a trace file, its path relative to this file's folder (meta keeps the path):
      # arrivals: {name: replay, path: arrivals.csv, unit: ms}     # one timestamp per line
      # arrivals: {name: piecewise_rate, path: twitter.txt}        # 't rate' lines
      count: 20000                         # and/or horizon_s
      apps:
        - {name: rm2, slo_ms: 350, sizes: kairos_mix, share: 1.0, accuracy_floor: 0}
      # or each application its own arrivals (and no workload-level arrivals, no shares):
      # apps:
      #   - {name: a, slo_ms: 100, arrivals: "poisson(rate=50)"}
      #   - {name: b, slo_ms: 200, arrivals: "piecewise_rate(interval_s=60, rates=[10, 80])"}
    scheduler: fcfs(prefer='g4dn.xlarge')  # any registered scheduler (a spec or a dict)
    seed: 0
    decision_statistic: mean               # what policies see (mean, p50, p95, p99, ...)
    service: sample                        # service times: sampled, or fixed to a statistic
    drain_s: 3600                          # how long after the last arrival the run may go on
    records: all                           # simulate: all, none or sample(p) (streamed summaries)
    # machines that worker groups place co-located instances on (0 or absent: not modelled)
    # machines:
    #   - {name: gpus, count: 2, cores: 8, memory_mb: 0, accel_memory_mb: 16000, llc_ways: 0}
    #   serve only: the machines' host cores, core_ids: [[0, 1, ...], ...] or pin: compact|spread
    # interference: per_corunner(slowdown=0.2)  # simulate: how co-located instances slow each other

Errors name the key path and value, e.g. ``workers[1].count=0 must be >= 1``.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from . import _core, profiles, textio
from .pinning import MACHINE_PIN_KEYS, check_machine
from .pinning import check_group as check_pinning
from .schedulers import make_scheduler

_TOP_KEYS = {
    "name", "description", "profile", "workers", "workload", "scheduler", "seed",
    "decision_statistic", "service", "drain_s", "records", "machines", "interference",
}  # fmt: skip
_MACHINE_KEYS = {
    "name", "count", "hardware", "cores", "memory_mb", "accel_memory_mb", "llc_ways",
    "memory_bw_gbps", "core_ids", "pin",
}  # fmt: skip
_WORKLOAD_KEYS = {"arrivals", "count", "horizon_s", "apps"}
_APP_KEYS = {"name", "slo_ms", "share", "sizes", "accuracy_floor", "arrivals"}
_WORKER_KEYS = {"hardware", "count", "models", "config", "executor", "cores", "pin", "machine"}
_MAX_WORKERS_PER_GROUP = 1_000_000  # as a run accepts
_LONGEST_TIME_MS = profiles.format.MAX_TIME_S * 1e3  # int64 nanoseconds hold about 292 years


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# Values in messages are shortened: a value built from shared references (YAML aliases, or a dict
# made in Python) can be tiny in memory yet enormous when written out in full.
_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring, _SHORT.maxother = 3, 8, 8, 80, 80


def _fail(path: str, value: Any, why: str) -> ValueError:
    return ValueError(f"{path}={_SHORT.repr(value)} {why}")


def _first_repeat(items: list[Any]) -> Any:
    """The first item that appears a second time in `items`, or None."""
    seen = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    return None


def _check_worker_models(path: str, models: Any) -> None:
    """A worker group's models: a non-empty list of distinct names (absent means all models)."""
    if not isinstance(models, list) or not all(isinstance(m, str) and m for m in models):
        raise _fail(path, models, "must be a list of model names")
    if not models:
        raise _fail(path, models, "is empty; omit it for all the profile's models")
    repeated = _first_repeat(models)
    if repeated is not None:
        raise _fail(path, models, f"names {repeated!r} twice")


def _check_app_name(path: str, name: Any) -> None:
    if not isinstance(name, str):
        raise _fail(path, name, "must be a string (the application's name)")
    if not name:
        raise _fail(path, name, "is empty: give the application a name")


def _check_texts(d: Mapping[str, Any]) -> None:
    """The free-text keys, when present, are strings."""
    for key in ("name", "description"):
        if key in d and not isinstance(d[key], str):
            raise _fail(key, d[key], "must be a string")


def _check_keys(path: str, d: Any, allowed: set[str]) -> Mapping[str, Any]:
    if not isinstance(d, Mapping):
        raise _fail(path, d, "must be a mapping")
    unknown = sorted(set(d) - allowed, key=repr)
    if unknown:
        raise KeyError(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(sorted(allowed))})")
    return d


def _spec(path: str, value: Any) -> str:
    """A registry spec from 'name(a=1)' or {'name': ..., **params}."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("name"), str):
        params = ", ".join(f"{k}={v!r}" for k, v in value.items() if k != "name")
        return f"{value['name']}({params})"
    raise _fail(
        path, value, "must be a spec string like 'poisson(rate=100)' or {name: ..., params}"
    )


def _check_arrivals_rule(wl: Mapping[str, Any], apps: list[Any]) -> None:
    """Arrivals for the workload, or for every application (then without shares), not both.
    A key set to None counts as absent."""
    own = [i for i, app in enumerate(apps) if app.get("arrivals") is not None]
    if not own:
        if wl.get("arrivals") is None:
            raise KeyError(
                "workload: missing key 'arrivals' (or give every application its own 'arrivals')"
            )
        return
    first = own[0]
    if wl.get("arrivals") is not None:
        raise _fail(
            f"workload.apps[{first}].arrivals",
            apps[first]["arrivals"],
            f"is given while workload.arrivals={_SHORT.repr(wl['arrivals'])}: give the arrival "
            "process to the workload or to every application, not both",
        )
    for i, app in enumerate(apps):
        path = f"workload.apps[{i}]"
        if app.get("arrivals") is None:
            raise KeyError(
                f"{path}: missing key 'arrivals' (workload.apps[{first}] has its own: give every "
                "application its own arrivals, or none and workload.arrivals)"
            )
        _spec(f"{path}.arrivals", app["arrivals"])
        if app.get("share") is not None:
            raise _fail(
                f"{path}.share",
                app["share"],
                "is given with the application's own arrivals: its rate is its process's; "
                "drop share",
            )


# Arrival processes that may read their points from a trace file (``path``, relative to the
# scenario file's folder) instead of listing them inline: name -> the other keys each accepts.
# Only the path goes into the scenario (and so into a Result's meta), not the points.
_TRACE_KEYS = {
    "replay": {"unit", "period_s"},  # arrival timestamps, one per line (read_timestamps_csv)
    "piecewise_rate": {"time_scale", "repeat"},  # 't rate' lines (read_rate_trace)
}
_TIME_UNITS = ("s", "ms", "us", "ns")


def _spec_value(node: ast.expr) -> Any:
    """A keyword value of a spec string: a Python literal, or true/false as the spec grammar
    writes them."""
    if isinstance(node, ast.Name) and node.id in ("true", "false"):
        return node.id == "true"
    return ast.literal_eval(node)


def _trace_spec(value: Any) -> dict[str, Any] | None:
    """The dict form of an arrival process that names a trace file
    (``{name: replay, path: ...}`` or ``"replay(path='...')"``), else None."""
    if isinstance(value, Mapping):
        if value.get("name") in _TRACE_KEYS and "path" in value:
            return dict(value)
        return None
    if not isinstance(value, str) or "path" not in value:
        return None
    try:
        call = ast.parse(value.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)) or call.args:
        return None
    if call.func.id not in _TRACE_KEYS:
        return None
    out: dict[str, Any] = {"name": call.func.id}
    for keyword in call.keywords:
        if keyword.arg is None:
            return None
        try:
            out[keyword.arg] = _spec_value(keyword.value)
        except ValueError:
            return None
    return out if "path" in out else None


def _check_trace(key: str, spec: dict[str, Any], folder: Path | None) -> dict[str, Any]:
    """A trace-file arrival process checked, its path made absolute (a relative one is relative
    to ``folder``, the scenario file's, else to the working directory) so that the scenario
    replays from anywhere."""
    name = spec["name"]
    allowed = {"name", "path"} | _TRACE_KEYS[name]
    unknown = sorted(set(spec) - allowed, key=repr)
    if unknown:
        inline = " (a trace file replaces the inline list)" if unknown[0] in (
            "timestamps_s", "rates", "interval_s") else ""  # fmt: skip
        raise KeyError(
            f"{key}: unknown key {unknown[0]!r} for {name} with a path{inline} "
            f"(known: {', '.join(sorted(allowed))})"
        )
    where = spec["path"]
    if not isinstance(where, str | Path) or not str(where):
        raise _fail(f"{key}.path", where, "must be the path of a trace file")
    path = Path(where).expanduser()
    if not path.is_absolute():
        path = (folder if folder is not None else Path.cwd()) / path
    if not path.is_file():
        relative = "the scenario file's folder" if folder is not None else "the working directory"
        raise _fail(
            f"{key}.path",
            where,
            f"is not a file ({path}; a relative path is relative to {relative})",
        )
    if "unit" in spec and spec["unit"] not in _TIME_UNITS:
        raise _fail(f"{key}.unit", spec["unit"], f"must be one of {', '.join(_TIME_UNITS)}")
    for number, lowest in (("period_s", "non-negative"), ("time_scale", "positive")):
        if number in spec:
            v = spec[number]
            if not _is_number(v) or not (v >= 0 if lowest == "non-negative" else v > 0):
                raise _fail(f"{key}.{number}", v, f"must be a {lowest} number")
    if "repeat" in spec and not isinstance(spec["repeat"], bool):
        raise _fail(f"{key}.repeat", spec["repeat"], "must be true or false")
    return {**spec, "path": str(path.resolve())}


def _read_trace(key: str, spec: dict[str, Any]) -> _core.ArrivalProcess:
    """The arrival process of a checked trace-file spec; the readers' errors name the file and
    line, prefixed here with the key path."""
    try:
        if spec["name"] == "replay":
            times = _core.read_timestamps_csv(spec["path"], unit=spec.get("unit", "s"))
            period = float(spec.get("period_s", 0.0))
            return _core.Replay(times, period if period > 0 else None)
        return _core.read_rate_trace(
            spec["path"],
            time_scale=float(spec.get("time_scale", 1.0)),
            repeat=bool(spec.get("repeat", False)),
        )
    except (KeyError, ValueError) as e:
        msg = e.args[0] if e.args else str(e)
        raise type(e)(f"{key}: {msg}") from None


def _build_arrivals(path: str, value: Any) -> _core.ArrivalProcess:
    """An arrival process from a scenario value; errors name the key path and the value."""
    trace = _trace_spec(value)
    if trace is not None:
        return _read_trace(path, trace)
    spec = _spec(path, value)
    try:
        return _core.make_arrival_process(spec)
    except (KeyError, ValueError) as e:
        msg = e.args[0] if e.args else str(e)
        raise type(e)(f"{path}={_SHORT.repr(value)}: {msg}") from None


def _check_machines(machines: Any) -> list[dict[str, Any]]:
    """The machine groups' structure (a list of mappings with known keys and a name); the run
    checks their values."""
    if not isinstance(machines, list):
        raise _fail("machines", machines, "must be a list of machine groups")
    for i, m in enumerate(machines):
        _check_keys(f"machines[{i}]", m, _MACHINE_KEYS)
        if "name" not in m:
            raise KeyError(f"machines[{i}]: missing key 'name'")
        if not isinstance(m["name"], str):
            raise _fail(f"machines[{i}].name", m["name"], "must be a string")
        check_machine(f"machines[{i}]", m)  # core_ids / pin: servelab.serve pins, sim ignores
    return [dict(m) for m in machines]


def _check_records(records: Any) -> None:
    """``records``: "all", "none" or "sample(p)" with 0 <= p <= 1 (the simulator checks the
    same; this names the key before anything is built)."""
    ok = isinstance(records, str) and records in ("all", "none")
    if isinstance(records, str) and records.startswith("sample(") and records.endswith(")"):
        try:
            ok = 0.0 <= float(records[len("sample(") : -1]) <= 1.0
        except ValueError:
            ok = False
    if not ok:
        raise _fail("records", records, "must be 'all', 'none' or 'sample(p)' with 0 <= p <= 1")


def builtin_scenarios() -> list[str]:
    """Names of the scenarios shipped with servelab (``servelab simulate NAME``)."""
    folder = resources.files(__package__) / "scenarios"
    return sorted(f.name[: -len(".yaml")] for f in folder.iterdir() if f.name.endswith(".yaml"))


def load_scenario(source: str | Path | Mapping[str, Any]) -> Scenario:
    """A Scenario from a dict, a YAML/JSON file path, or the name of a built-in scenario."""
    if isinstance(source, Mapping):
        return Scenario.from_dict(source)  # a trace file's relative path: from the working dir
    text_source = str(source)
    if text_source in builtin_scenarios():
        resource = resources.files(__package__) / "scenarios" / f"{text_source}.yaml"
        where = f"scenario {text_source}"
        data = textio.load_yaml(resource.read_text(encoding="utf-8"), where=where)
        return Scenario.from_dict(data, where=where)
    path = Path(text_source)
    if not path.exists():
        raise FileNotFoundError(
            f"scenario {text_source!r} is neither a file nor a built-in scenario "
            f"({', '.join(builtin_scenarios())})"
        )
    text = textio.read_text(path, what="scenario YAML/JSON file")
    # JSON for .json files (its errors then speak JSON); YAML, a superset, for anything else.
    load = textio.load_json if path.suffix == ".json" else textio.load_yaml
    return Scenario.from_dict(load(text, where=str(path)), where=str(path), folder=path.parent)


@dataclass
class Scenario:
    """A validated run description; ``to_dict()`` gives back the plain form (for JSON output)."""

    profile: Any
    workers: list[dict[str, Any]]
    workload: dict[str, Any]
    scheduler: Any = "fcfs"
    seed: int = 0
    decision_statistic: str = "mean"
    service: str = "sample"
    drain_s: float = 3600.0
    records: str = "all"
    name: str = ""
    description: str = ""
    machines: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    interference: Any = None

    @classmethod
    def from_dict(
        cls, data: Any, where: str | None = None, folder: str | Path | None = None
    ) -> Scenario:
        """A Scenario from its plain form; ``where`` prefixes error messages (the file), and a
        trace file's relative ``path`` is relative to ``folder`` (default: the working
        directory)."""
        base = None if folder is None else Path(folder)
        try:
            d = _check_keys("scenario", data, _TOP_KEYS)
            _check_texts(d)
            for key in ("profile", "workers", "workload"):
                if key not in d:
                    raise KeyError(f"scenario: missing key {key!r}")
            workers = d["workers"]
            if not isinstance(workers, list) or not workers:
                raise _fail("workers", workers, "must be a non-empty list of worker groups")
            for i, w in enumerate(workers):
                _check_keys(f"workers[{i}]", w, _WORKER_KEYS)
                if "hardware" not in w:
                    raise KeyError(f"workers[{i}]: missing key 'hardware'")
                count = w.get("count", 1)
                if not _is_int(count) or not 1 <= count <= _MAX_WORKERS_PER_GROUP:
                    raise _fail(
                        f"workers[{i}].count",
                        count,
                        f"must be an integer in 1..{_MAX_WORKERS_PER_GROUP}",
                    )
                if "models" in w:
                    _check_worker_models(f"workers[{i}].models", w["models"])
                config = w.get("config", {})
                if not isinstance(config, Mapping) or not all(
                    isinstance(k, str) and _is_int(v) for k, v in config.items()
                ):
                    raise _fail(f"workers[{i}].config", config, "must map names to integers")
                if (
                    "executor" in w
                ):  # built by servelab.serve (servelab.executors); the simulator ignores it
                    _spec(f"workers[{i}].executor", w["executor"])
                check_pinning(f"workers[{i}]", w)  # cores / pin: servelab.serve pins, sim ignores
            wl = _check_keys("workload", d["workload"], _WORKLOAD_KEYS)
            count = wl.get("count")
            if count is not None and (not _is_int(count) or count < 0):
                raise _fail("workload.count", count, "must be an integer >= 0 (or absent)")
            horizon = wl.get("horizon_s")
            if horizon is not None and not _is_number(horizon):
                raise _fail(
                    "workload.horizon_s", horizon, "must be a number of seconds (or absent)"
                )
            apps = wl.get("apps")
            if not isinstance(apps, list) or not apps:
                raise _fail("workload.apps", apps, "must be a non-empty list of applications")
            for i, app in enumerate(apps):
                _check_keys(f"workload.apps[{i}]", app, _APP_KEYS)
                for key in ("name", "slo_ms"):
                    if key not in app:
                        raise KeyError(f"workload.apps[{i}]: missing key {key!r}")
                _check_app_name(f"workload.apps[{i}].name", app["name"])
                slo = app["slo_ms"]
                if not _is_number(slo) or not slo > 0:
                    raise _fail(
                        f"workload.apps[{i}].slo_ms", slo, "must be a positive number of ms"
                    )
                if _LONGEST_TIME_MS <= slo < float("inf"):
                    raise _fail(
                        f"workload.apps[{i}].slo_ms",
                        slo,
                        f"is finite but beyond the range of int64 nanoseconds: it must be below "
                        f"{_LONGEST_TIME_MS:g} ms (about 292 years)",
                    )
            _check_arrivals_rule(wl, apps)
            wl = _with_trace_paths(wl, base)
            seed = d.get("seed", 0)
            if not _is_int(seed) or seed < 0:
                raise _fail("seed", seed, "must be a non-negative integer")
            for key in ("decision_statistic", "service"):
                if key in d and not isinstance(d[key], str):
                    raise _fail(key, d[key], "must be a string such as 'mean' or 'p99'")
            if "drain_s" in d and (not _is_number(d["drain_s"]) or not d["drain_s"] >= 0):
                raise _fail("drain_s", d["drain_s"], "must be a non-negative number of seconds")
            records = d.get("records", "all")
            _check_records(records)
            machines = _check_machines(d.get("machines", []))
            interference = d.get("interference")
            if interference is not None:
                _spec("interference", interference)
            return cls(
                profile=d["profile"],
                workers=[dict(w) for w in workers],
                workload=dict(wl),
                scheduler=d.get("scheduler", "fcfs"),
                seed=seed,
                decision_statistic=d.get("decision_statistic", "mean"),
                service=d.get("service", "sample"),
                drain_s=d.get("drain_s", 3600.0),
                records=records,
                name=d.get("name", ""),
                description=d.get("description", ""),
                machines=machines,
                interference=interference,
            )
        except (KeyError, ValueError) as e:
            if where is None:
                raise
            msg = e.args[0] if e.args else str(e)
            raise type(e)(f"{where}: {msg}") from None

    def to_dict(self) -> dict[str, Any]:
        """The scenario as plain data: what produced a result. Live objects (a Profile, a Scheduler
        instance) appear as their description."""
        out = {
            "profile": self.profile
            if isinstance(self.profile, str | Mapping)
            else _describe(self.profile),
            "workers": copy.deepcopy(self.workers),
            "workload": copy.deepcopy(self.workload),
            "scheduler": self.scheduler
            if isinstance(self.scheduler, str | Mapping)
            else _describe(self.scheduler),
            "seed": self.seed,
            "decision_statistic": self.decision_statistic,
            "service": self.service,
            "drain_s": self.drain_s,
        }
        if self.records != "all":  # the default stays out, so existing scenarios read the same
            out["records"] = self.records
        if self.machines:
            out["machines"] = copy.deepcopy(self.machines)
        if self.interference is not None:
            out["interference"] = (
                self.interference
                if isinstance(self.interference, str | Mapping)
                else _describe(self.interference)
            )
        if self.name:
            out["name"] = self.name
        if self.description:
            out["description"] = self.description
        return out

    # --- building the parts -------------------------------------------------------------------
    def build_profile(self) -> profiles.Profile:
        return resolve_profile(self.profile)

    def build_workers(self) -> list[_core.WorkerGroup]:
        return [
            _core.WorkerGroup(
                str(w["hardware"]),
                int(w.get("count", 1)),
                list(w.get("models", [])),
                dict(w.get("config", {})),
                str(w.get("machine", "")),
            )
            for w in self.workers
        ]

    def build_machines(self) -> list[_core.MachineGroup]:
        """The machine groups (their values are checked by the run, naming machines[i])."""
        serve_only = MACHINE_PIN_KEYS  # servelab.pinning: host cores, read by servelab.serve
        return [
            _core.MachineGroup(**{k: v for k, v in m.items() if k not in serve_only})
            for m in self.machines
        ]

    def build_interference(self) -> _core.InterferenceModel | None:
        i = self.interference
        if i is None or isinstance(i, _core.InterferenceModel):
            return i
        return _core.make_interference_model(_spec("interference", i))

    def build_workload(self) -> _core.Workload:
        wl = self.workload
        apps = []
        for i, app in enumerate(wl["apps"]):
            slo_ms = app["slo_ms"]
            sizes = app.get("sizes")
            own = app.get("arrivals")
            apps.append(
                _core.Application(
                    str(app["name"]),
                    slo_s=float(slo_ms) / 1e3,
                    share=None if app.get("share") is None else float(app["share"]),
                    sizes=None if sizes is None else _spec(f"workload.apps[{i}].sizes", sizes),
                    accuracy_floor=float(app.get("accuracy_floor", 0.0)),
                    arrivals=None
                    if own is None
                    else _build_arrivals(f"workload.apps[{i}].arrivals", own),
                )
            )
        shared = wl.get("arrivals")  # None: every application has its own
        return _core.Workload(
            None if shared is None else _build_arrivals("workload.arrivals", shared),
            apps,
            count=wl.get("count"),
            horizon_s=wl.get("horizon_s"),
        )

    def build_scheduler(self) -> _core.Scheduler:
        s = self.scheduler
        if isinstance(s, _core.Scheduler):
            return s
        if isinstance(s, type) and issubclass(s, _core.Scheduler):
            return s()
        return make_scheduler(_spec("scheduler", s))


def _with_trace_paths(wl: Mapping[str, Any], folder: Path | None) -> Mapping[str, Any]:
    """The workload with each trace-file arrival process checked and its path made absolute
    (a new dict when one is found; the caller's is left alone)."""
    found = False
    out = dict(wl)
    trace = _trace_spec(wl.get("arrivals"))
    if trace is not None:
        out["arrivals"], found = _check_trace("workload.arrivals", trace, folder), True
    apps = []
    for i, app in enumerate(wl["apps"]):
        trace = _trace_spec(app.get("arrivals"))
        if trace is not None:
            app = {**app, "arrivals": _check_trace(f"workload.apps[{i}].arrivals", trace, folder)}
            found = True
        apps.append(app)
    out["apps"] = apps
    return out if found else wl


def _describe(obj: Any) -> str:
    if isinstance(obj, type):
        return obj.__name__
    describe = getattr(obj, "describe", None)
    if callable(describe):
        return str(describe())
    source = getattr(obj, "source", None)
    return f"<{type(obj).__name__}{': ' + str(source) if source else ''}>"


def resolve_profile(profile: Any) -> profiles.Profile:
    """A Profile from a Profile, 'example:<name>', a path to a profile JSON, or its dict form."""
    if isinstance(profile, profiles.Profile):
        return profile
    if isinstance(profile, Mapping):
        return profiles.from_dict(profile)
    if isinstance(profile, str | Path):
        text = str(profile)
        if text.startswith("example:"):
            return profiles.example(text[len("example:") :])
        return profiles.load(text)
    raise _fail("profile", profile, "must be a Profile, 'example:<name>', a JSON path or a dict")
