"""The model registry of the real-serving API: ``register_model`` generates a model's variants
(framework x batch-optimised size x thread count), profiles each with ``servelab.profile`` on the
real executor, and keeps them as a native profile plus variant metadata. Look-ups go through the
C++ metadata store (``variants_from_profile`` is the bridge), so getVariant is the one the
simulator's ``infaas`` policy uses.

::

    from servelab import infaas

    reg = infaas.ModelRegistry()
    reg.register_model("mlp", "mlp.pt", app="ranking", accuracy=0.8, batches=(1, 4), threads=(1,))
    reg.get_variant(app="ranking", latency_ms=5)
    reg.save("registry.json"); same = infaas.ModelRegistry.load("registry.json")
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ... import _core, profiles, recsys, textio
from ...profiling import profile as profile_executor
from . import catalogue, loading

FORMAT = "servelab.infaas.registry"
VERSION = 1

#: $/h of one CPU thread (an m5.2xlarge's price over its 8 vCPUs) and of one GPU (a
#: p3.2xlarge's, one V100): Sec. 6's instances. A CPU variant costs its thread count times this.
DEFAULT_PRICES = {
    "cpu": catalogue.HARDWARE["cpu"]["price_per_hour"] / 8,
    "gpu": catalogue.HARDWARE["gpu"]["price_per_hour"],
}
# Variant metadata kept beside the profile (the rest comes back through variants_from_profile).
_VARIANT_KEYS = ("name", "model", "framework", "hardware", "batch_opt", "threads", "executor")
_MODEL_KEYS = ("app", "task", "accuracy", "source")


def _positive_ints(field: str, values: Any) -> list[int]:
    if isinstance(values, int) and not isinstance(values, bool):
        values = [values]
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ValueError(f"{field}={values!r} must be a non-empty list of positive integers")
    out = list(values)
    if not out or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in out):
        raise ValueError(f"{field}={values!r} must be a non-empty list of positive integers")
    return sorted(set(out))


def _name(field: str, value: Any) -> str:
    if not isinstance(value, str) or not value or any(c in value for c in "@()'\"\n"):
        raise ValueError(f"{field}={value!r} must be a non-empty name without @ ( ) or quotes")
    return value


def _model_name(value: Any) -> str:
    """A model's name, which also names files (``<name>.frozen.pt``): a plain name, no path."""
    value = _name("name", value)
    if any(c in value for c in "/\\\0") or ".." in value or value.startswith("."):
        raise ValueError(
            f"name={value!r} must be a plain name, not a path: no '/', '\\', '..', NUL or "
            "leading '.'; letters, digits, '_', '-' and inner '.' are fine (e.g. 'rank-v2.int8')"
        )
    return value


def _prices(prices: Any) -> dict[str, float]:
    out = dict(DEFAULT_PRICES)
    if prices is None:
        return out
    if not isinstance(prices, dict):
        raise ValueError(f"prices={prices!r} must be a dict {{'cpu': $/h, 'gpu': $/h}}")
    for hw, price in prices.items():
        if hw not in DEFAULT_PRICES:
            raise ValueError(f"prices: hardware {hw!r} must be one of {sorted(DEFAULT_PRICES)}")
        ok = isinstance(price, int | float) and not isinstance(price, bool)
        if not ok or not (math.isfinite(price) and price >= 0):
            raise ValueError(f"prices[{hw!r}]={price!r} must be a finite number >= 0 ($/h)")
        out[hw] = float(price)
    return out


def _source(model: Any, scale: Any, seed: Any) -> dict[str, Any]:
    """What ``model`` names: a TorchScript file or a built-in recsys model."""
    if isinstance(model, str | os.PathLike) and Path(model).is_file():
        return {"kind": "torchscript", "path": str(Path(model).resolve())}
    if isinstance(model, str) and model in recsys.list_models():
        ok = isinstance(scale, int | float) and not isinstance(scale, bool)
        if not ok or not (0 < scale <= 1):
            raise ValueError(f"scale={scale!r} must be a number in (0, 1]")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed={seed!r} must be an integer >= 0")
        return {"kind": "recsys", "model": model, "scale": float(scale), "seed": int(seed)}
    raise ValueError(
        f"model={model!r} is neither a TorchScript file (torch.jit.save) nor a built-in recsys "
        f"model ({', '.join(recsys.list_models())})"
    )


def _frameworks(source: dict[str, Any], wanted: Sequence[str] | None) -> list[str]:
    own = [f for f, (kind, _, _) in loading.FRAMEWORKS.items() if kind == source["kind"]]
    if wanted is None:
        return [f for f in own if f != "torchscript-frozen"]  # opt-in: it writes a file
    if isinstance(wanted, str):
        wanted = [wanted]
    for f in wanted:
        if f not in own:
            raise ValueError(f"frameworks: {f!r} cannot run a {source['kind']} model ({own})")
    return list(wanted)


class ModelRegistry:
    """Registered models and their profiled variants; persisted as one JSON file."""

    def __init__(self) -> None:
        self._models: dict[str, dict[str, Any]] = {}
        self._meta: list[dict[str, Any]] = []
        self._skipped: list[dict[str, str]] = []
        self._profile: dict[str, Any] = {
            "format": profiles.FORMAT,
            "version": profiles.VERSION,
            "source": "servelab.infaas.register_model",
            "hardware": {},
            "models": {},
            "latency": [],
        }
        self._variants: list[dict[str, Any]] | None = None  # the bridge's output, cached

    # --- registration ------------------------------------------------------------------------

    def register_model(
        self,
        name: str,
        model: str | os.PathLike[str],
        *,
        app: str | None = None,
        task: str = "classification",
        accuracy: float,
        batches: Sequence[int] = (1, 4, 8),
        threads: Sequence[int] = (1, 2),
        frameworks: Sequence[str] | None = None,
        repeats: int = 3,
        warmup: int = 1,
        prices: dict[str, float] | None = None,
        scale: float = recsys.DEFAULT_SCALE,
        seed: int = 0,
        frozen_dir: str | os.PathLike[str] | None = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        """Generates, profiles and registers the variants of ``model`` under ``name``.

        ``model``: a TorchScript file or a built-in recsys model name (``scale`` and ``seed``
        build its tables). ``app`` (default: ``task``) is the application whose queries it
        serves; ``accuracy`` its accuracy in [0, 1]. One variant per framework (default: every
        framework of the model's kind; GPU ones skipped with the reason when no GPU is usable),
        batch-optimised size in ``batches`` (the variant serves up to that many rows per batch,
        profiled at the listed sizes up to it) and thread count in ``threads`` (CPU only).
        ``frameworks=[..., "torchscript-frozen"]`` adds the module frozen and optimised for
        inference, written to ``frozen_dir`` (default: the model file's folder) as
        ``<name>.frozen.pt``.
        Returns ``{"model", "variants": [names], "skipped": [{"variant", "reason"}]}``.
        """
        name = _model_name(name)
        if name in self._models:
            raise ValueError(f"name={name!r} is already registered")
        app = _name("app", app if app is not None else task)
        task = _name("task", task)
        if isinstance(accuracy, bool) or not isinstance(accuracy, int | float):
            raise ValueError(f"accuracy={accuracy!r} must be a number in [0, 1]")
        if not (0.0 <= accuracy <= 1.0):
            raise ValueError(f"accuracy={accuracy!r} must be in [0, 1]")
        batch_list = _positive_ints("batches", batches)
        thread_list = _positive_ints("threads", threads)
        prices = _prices(prices)
        source = _source(model, scale, seed)
        kinds = _frameworks(source, frameworks)
        cap = loading.MAX_THREADS[source["kind"]]
        if thread_list[-1] > cap:
            raise ValueError(
                f"threads={threads!r}: {thread_list[-1]} is above {cap}, the most threads a "
                f"{source['kind']} executor takes"
            )
        why_not_frozen = ""
        if source["kind"] == "torchscript":
            # Loading once checks the file and gives the width (ValueError naming the file).
            try:
                probe = loading.load(name, source, "torchscript", 1, 1)
            except loading.VariantLoadError as e:
                raise ValueError(f"model={str(model)!r}: {e}") from e
            source["width"] = int(probe.runner.width)
            if "torchscript-frozen" in kinds:
                frozen = Path(frozen_dir or Path(source["path"]).parent) / f"{name}.frozen.pt"
                why_not_frozen = loading.freeze(source["path"], frozen)
                if not why_not_frozen:
                    source["frozen_path"] = str(frozen.resolve())
        for other in self.apps.get(app, []):
            theirs = loading.input_shape(self._models[other]["source"])
            if theirs != loading.input_shape(source):
                raise ValueError(
                    f"model {name!r} takes inputs of {loading.input_shape(source)} columns but "
                    f"app={app!r} serves {other!r}, which takes {theirs}: an app's models must "
                    "take the same inputs"
                )

        made, skipped, entries, meta = [], [], [], []
        for framework in kinds:
            hardware = loading.FRAMEWORKS[framework][1]
            counts = thread_list if hardware == "cpu" else [1]  # threads: a CPU setting
            for b in batch_list:
                for t in counts:
                    vname = f"{name}_{framework}_{hardware}_b{b}_t{t}"
                    why = loading.unavailable(framework)
                    if framework == "torchscript-frozen" and "frozen_path" not in source:
                        why = why or why_not_frozen
                    if why:
                        skipped.append({"variant": vname, "reason": why})
                        continue
                    spec = loading.executor_spec(source, framework, b, t)
                    measured = _measure(vname, source, framework, b, t)
                    sizes = [x for x in batch_list if x <= b]
                    p = profile_executor(
                        spec, sizes, repeats=repeats, warmup=warmup, hardware=hardware,
                        model=vname, seed=seed, progress=progress,
                    )  # fmt: skip
                    entries.extend(p.to_dict()["latency"])
                    meta.append(
                        {
                            "name": vname, "model": name, "framework": framework,
                            "hardware": hardware, "batch_opt": b, "threads": t,
                            "executor": spec, **measured,
                        }
                    )  # fmt: skip
                    made.append(vname)
        if not made:
            reasons = "; ".join(f"{s['variant']}: {s['reason']}" for s in skipped)
            raise ValueError(f"model {name!r}: no variant can run here ({reasons})")

        prof = self._profile
        for m in meta:
            hw = m["hardware"]
            prof["hardware"].setdefault(hw, {"price_per_hour": float(prices[hw])})
            prof["models"][m["name"]] = {"accuracy": float(accuracy)}
            prof.setdefault("load_time_s", {}).setdefault(hw, {})[m["name"]] = m.pop("load_s")
            prof.setdefault("memory_mb", {}).setdefault(hw, {})[m["name"]] = m.pop("memory_mb")
        prof["latency"].extend(entries)
        self._models[name] = {
            "app": app,
            "task": task,
            "accuracy": float(accuracy),
            "source": source,
        }
        self._meta.extend(meta)
        self._skipped.extend(skipped)
        self._variants = None
        return {"model": name, "variants": made, "skipped": skipped}

    # --- look-ups ----------------------------------------------------------------------------

    @property
    def models(self) -> dict[str, dict[str, Any]]:
        """name -> {app, task, accuracy, source} (a copy)."""
        return copy.deepcopy(self._models)

    @property
    def apps(self) -> dict[str, list[str]]:
        """app -> the models registered under it."""
        out: dict[str, list[str]] = {}
        for name, m in self._models.items():
            out.setdefault(m["app"], []).append(name)
        return out

    @property
    def skipped(self) -> list[dict[str, str]]:
        """Variants not generated here, with the reason (e.g. no GPU)."""
        return [dict(s) for s in self._skipped]

    def profile(self) -> Any:
        """Every variant's measurements as one native servelab Profile (model = variant name)."""
        return profiles.from_dict(self._profile, where="registry profile")

    def variants(self, app: str | None = None, model: str | None = None) -> list[dict[str, Any]]:
        """The variants as metadata-store dicts (``task`` is the app) plus the registry's
        fields (``model``, ``threads``, ``executor``), optionally of one app or model."""
        if self._variants is None:
            self._variants = self._bridge()
        if app is not None:
            self.check_app(app)
        if model is not None:
            self.check_model(model)
        return [
            dict(v, latency_ms=list(v["latency_ms"]))
            for v in self._variants
            if (app is None or v["task"] == app) and (model is None or v["model"] == model)
        ]

    def _bridge(self) -> list[dict[str, Any]]:
        """The profile through C++ variants_from_profile, joined with the variant metadata."""
        bridged = {v["architecture"]: v for v in _core.infaas.variants_from_profile(self.profile())}
        out = []
        for i, m in enumerate(self._meta):
            if m["name"] not in bridged:
                raise ValueError(f"variants[{i}] {m['name']!r} has no latency in the profile")
            v = dict(bridged[m["name"]])
            owner = self._models[m["model"]]
            v.update(
                name=m["name"], architecture=m["model"], task=owner["app"],
                framework=m["framework"], model=m["model"], threads=m["threads"],
                executor=m["executor"],
            )  # fmt: skip
            if m["hardware"] == "cpu":
                v["cost_per_s"] = v["cost_per_s"] * m["threads"]  # the profile prices one thread
            out.append(v)
        return out

    def check_app(self, app: Any) -> str:
        if app not in self.apps:
            known = ", ".join(sorted(self.apps)) or "none registered"
            raise KeyError(f"app={app!r} is not registered (apps: {known})")
        return app

    def check_model(self, model: Any) -> str:
        if model not in self._models:
            known = ", ".join(sorted(self._models)) or "none registered"
            raise KeyError(f"model={model!r} is not registered (models: {known})")
        return model

    def metadata_store(self, hardware: Iterable[str] | None = None) -> Any:
        """A fresh C++ MetadataStore over the variants (of the given hardware types only)."""
        wanted = None if hardware is None else set(hardware)
        keep = set(catalogue.REQUIRED + catalogue.OPTIONAL)
        chosen = [
            {k: v[k] for k in keep if k in v}
            for v in self.variants()
            if wanted is None or v["hardware"] in wanted
        ]
        if not chosen:
            raise ValueError(f"no registered variant runs on hardware {sorted(wanted or [])}")
        return catalogue.metadata_store(chosen)

    def get_variant(
        self,
        *,
        app: str | None = None,
        model: str | None = None,
        accuracy: float = 0.0,
        latency_ms: float = 0.0,
        batch: int = 1,
    ) -> dict[str, Any]:
        """getVariant (C++) over the registry without workers: which variant would serve."""
        if (app is None) == (model is None):
            raise ValueError("give exactly one of app= and model=")
        if app is not None:
            self.check_app(app)
        else:
            self.check_model(model)
        store = self.metadata_store()
        return store.get_variant(
            task=app, model=model, accuracy=accuracy, latency_ms=latency_ms, batch=batch
        )

    def __len__(self) -> int:
        return len(self._meta)

    def __repr__(self) -> str:
        return f"ModelRegistry(models={sorted(self._models)}, variants={len(self._meta)})"

    # --- persistence -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The registry as JSON-ready data: the native profile plus models and variant metadata."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "models": copy.deepcopy(self._models),
            "variants": copy.deepcopy(self._meta),
            "skipped": self.skipped,
            "profile": copy.deepcopy(self._profile),
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "registry") -> ModelRegistry:
        """A registry from ``to_dict()``'s data; ValueError naming the field otherwise."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: must be a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise ValueError(
                f"{where}: format={data.get('format')!r} version={data.get('version')!r}; "
                f"expected {FORMAT!r} version {VERSION}"
            )
        reg = cls()
        models, variants = data.get("models"), data.get("variants")
        if not isinstance(models, dict):
            raise ValueError(f"{where}: models={models!r} must be an object")
        for name, m in models.items():
            if not isinstance(m, dict) or any(k not in m for k in _MODEL_KEYS):
                raise ValueError(f"{where}: models[{name!r}] must have {', '.join(_MODEL_KEYS)}")
            acc = m["accuracy"]
            if isinstance(acc, bool) or not isinstance(acc, int | float) or not 0 <= acc <= 1:
                raise ValueError(f"{where}: models[{name!r}].accuracy={acc!r} must be in [0, 1]")
        if not isinstance(variants, list):
            raise ValueError(f"{where}: variants={variants!r} must be a list")
        for i, v in enumerate(variants):
            if not isinstance(v, dict) or any(k not in v for k in _VARIANT_KEYS):
                raise ValueError(f"{where}: variants[{i}] must have {', '.join(_VARIANT_KEYS)}")
            if v["model"] not in models:
                raise ValueError(f"{where}: variants[{i}].model={v['model']!r} is not in models")
            if v["framework"] not in loading.FRAMEWORKS:
                raise ValueError(f"{where}: variants[{i}].framework={v['framework']!r} is unknown")
            for key in ("batch_opt", "threads"):
                if isinstance(v[key], bool) or not isinstance(v[key], int) or v[key] < 1:
                    raise ValueError(f"{where}: variants[{i}].{key}={v[key]!r} must be >= 1")
            cap = loading.MAX_THREADS[loading.FRAMEWORKS[v["framework"]][0]]
            if v["threads"] > cap:
                raise ValueError(f"{where}: variants[{i}].threads={v['threads']} must be <= {cap}")
        prof = profiles.from_dict(data.get("profile"), where=f"{where}: profile")
        reg._models = copy.deepcopy(models)
        reg._meta = [{k: v[k] for k in _VARIANT_KEYS} for v in variants]
        reg._skipped = [dict(s) for s in data.get("skipped", []) if isinstance(s, dict)]
        reg._profile = profiles.to_dict(prof)
        reg.variants()  # every variant must come back through the bridge
        return reg

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ModelRegistry:
        data = textio.read_json(path, what="INFaaS registry file")
        return cls.from_dict(data, where=str(path))


def _measure(
    name: str, source: dict[str, Any], framework: str, batch_opt: int, threads: int
) -> dict[str, float]:
    """Load time (s) and memory (MB) of a variant: the wall time of loading it as the server
    does, and the process's resident-set growth across that load and one largest batch, at least
    the weights' size (a TorchScript file's bytes, a recsys model's embedding tables)."""
    before = loading.resident_mb()
    loaded = loading.load(name, source, framework, batch_opt, threads)
    if source["kind"] == "torchscript":
        inputs: Any = np.zeros((batch_opt, loading.input_shape(source)[0]), dtype=np.float32)
        weights_mb = Path(source["path"]).stat().st_size / 2**20
    else:
        inputs = recsys.generator(source["model"], source["seed"], scale=source["scale"])
        inputs = inputs.first(batch_opt)
        weights_mb = 4 * recsys.spec(source["model"], source["scale"]).table_parameters / 2**20
    # On a thread of its own: the variant's thread count applies to the calling thread.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(loaded.run, inputs).result()
    grown = max(loading.resident_mb() - before, 0.0)
    return {"load_s": float(loaded.load_s), "memory_mb": float(max(grown, weights_mb))}
