"""The variant catalogue INFaaS selects from, as data: Table 2's three ResNet50 variants and a
synthetic ResNet50-shaped family (Sec. 6.2), plus families for Table 8's 22 architectures (Sec.
6.1): 21 image classifiers and GNMT, a translation model, with nine variants after the paper's
artifact (``gnmt_variants``).

No profile ships with INFaaS (its measurements lived in a private bucket), so the numbers below
are built from the paper: Table 2 gives three variants' latency, saturation throughput and
normalised cost; the ResNet50 family uses Table 2's latencies as anchors, Table 8's top-1
accuracy and Sec. 6.2's cost model (price per GB of the variant's memory footprint per second:
0.031 on CPU, 0.190 on Inferentia, 0.498 on GPU). Batch curves, load times and memory footprints
are our assumptions, documented in docs/infaas.md. Variants measured by servelab's executors and
profiler arrive the same way, through a Profile (``variants_from_profile``).

A variant is a dict: name, architecture, task, framework, hardware, batch_opt, accuracy
(fraction), latency_ms (one entry per batch 1..batch_opt), load_s, memory_mb, cost_per_s and
optionally peak_qps (measured saturation throughput; else max_b b / latency(b)).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from ... import _core

#: Sec. 6.2's normalised cost of a running instance, per GB of memory footprint per second.
COST_PER_GB_S = {"cpu": 0.031, "inferentia": 0.190, "gpu": 0.498}

#: The workers of Sec. 6's setup and their on-demand EC2 prices ($/h, us-east-1, 2021).
HARDWARE = {
    "cpu": {"instance": "m5.2xlarge", "price_per_hour": 0.384},
    "inferentia": {"instance": "inf1.2xlarge", "price_per_hour": 0.362},
    "gpu": {"instance": "p3.2xlarge", "price_per_hour": 3.06},
}

#: Table 8: top-1 ImageNet accuracy (%) of the 22 architectures (GNMT: BLEU on WMT16).
TABLE8_ACCURACY = {
    "mobilenetv1": 70.4, "mobilenetv2": 71.3, "alexnet": 56.6, "densenet121": 75.0,
    "densenet169": 76.2, "densenet201": 77.3, "resnet50": 74.9, "resnet50v2": 76.0,
    "resnext50": 77.7, "resnet101": 76.4, "resnet101v2": 77.2, "resnext101": 78.7,
    "resnet152": 76.6, "resnet152v2": 78.0, "vgg16": 71.3, "vgg19": 71.3, "inceptionv3": 77.9,
    "xception": 79.0, "inception_resnetv2": 80.3, "nasnetmobile": 74.4, "nasnetlarge": 82.5,
    "gnmt": 24.5,
}  # fmt: skip

REQUIRED = ("name", "architecture", "task", "hardware", "accuracy", "latency_ms", "cost_per_s")
OPTIONAL = ("framework", "batch_opt", "load_s", "memory_mb", "peak_qps")


def table2_variants() -> list[dict[str, Any]]:
    """Table 2's ResNet50 variants A (4 CPUs, TensorFlow), B (1 Inferentia core, Neuron) and
    C (1 V100, TensorRT): batch-1 latency, saturation throughput and normalised cost, as given."""
    rows = [
        ("A", "cpu", "tensorflow", 200.0, 5.0, 1.0),
        ("B", "inferentia", "neuron", 20.0, 100.0, 3.0),
        ("C", "gpu", "tensorrt", 15.0, 800.0, 16.0),
    ]
    return [
        {
            "name": name, "architecture": "resnet50", "task": "classification",
            "framework": framework, "hardware": hardware, "batch_opt": 1,
            "accuracy": TABLE8_ACCURACY["resnet50"] / 100, "latency_ms": [latency],
            "load_s": 0.0, "memory_mb": 0.0, "cost_per_s": cost, "peak_qps": qps,
        }
        for name, hardware, framework, latency, qps, cost in rows
    ]  # fmt: skip


def batch_curve(points: dict[int, float], batch_opt: int) -> list[float]:
    """Latency (ms) for batches 1..batch_opt, linear between the given (batch: ms) points."""
    known = sorted(points.items())
    out = []
    for b in range(1, batch_opt + 1):
        lo = max((p for p in known if p[0] <= b), default=known[0])
        hi = min((p for p in known if p[0] >= b), default=known[-1])
        frac = 0.0 if hi[0] == lo[0] else (b - lo[0]) / (hi[0] - lo[0])
        out.append(round(lo[1] + frac * (hi[1] - lo[1]), 3))
    return out


# (framework, hardware, batch_opt, {batch: latency ms}, load_s, memory_mb). Anchors: Table 2's
# 200 ms (CPU), 20 ms (Inferentia) and 15 ms (V100) at batch 1; larger batches amortise.
# A V100 runs several batch-1 requests at once: Sec. 6.2's SM+_GPU served about 600 QPS with two
# batch-1 TensorRT instances, so that variant's measured saturation (peak_qps) is 300.
_PEAK_QPS = {("tensorrt", "gpu", 1): 300.0}
_RESNET50_FAMILY = [
    ("tensorflow", "cpu", 1, {1: 200.0}, 2.0, 1000.0),
    ("pytorch", "cpu", 1, {1: 180.0}, 2.5, 1100.0),
    ("pytorch", "cpu", 4, {1: 170.0, 4: 560.0}, 2.5, 1300.0),
    ("neuron", "inferentia", 1, {1: 20.0}, 4.0, 600.0),
    ("neuron", "inferentia", 4, {1: 20.0, 4: 34.0}, 4.0, 700.0),
    ("tensorrt", "gpu", 1, {1: 15.0}, 6.0, 1300.0),
    ("tensorrt", "gpu", 8, {1: 6.0, 2: 6.5, 4: 8.0, 8: 10.0}, 6.0, 1400.0),
    ("tensorrt", "gpu", 16, {1: 6.0, 8: 11.0, 16: 20.0}, 6.0, 1700.0),
    ("pytorch", "gpu", 1, {1: 12.0}, 5.0, 1500.0),
]


def resnet50_variants() -> list[dict[str, Any]]:
    """A ResNet50-shaped family (Sec. 6.2): CPU, Inferentia and GPU variants at several
    batch-optimised settings; cost = Sec. 6.2's per-GB/s rate x memory footprint."""
    out = []
    for framework, hardware, batch_opt, points, load_s, memory_mb in _RESNET50_FAMILY:
        out.append(
            {
                "name": f"resnet50_{framework}_{hardware}_b{batch_opt}",
                "architecture": "resnet50",
                "task": "classification",
                "framework": framework,
                "hardware": hardware,
                "batch_opt": batch_opt,
                "accuracy": TABLE8_ACCURACY["resnet50"] / 100,
                "latency_ms": batch_curve(points, batch_opt),
                "load_s": load_s,
                "memory_mb": memory_mb,
                "cost_per_s": round(COST_PER_GB_S[hardware] * memory_mb / 1024, 6),
            }
        )
        if (framework, hardware, batch_opt) in _PEAK_QPS:
            out[-1]["peak_qps"] = _PEAK_QPS[(framework, hardware, batch_opt)]
    return out


def check_variants(variants: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The variants as a list of plain dicts, checked: a ValueError names the entry and field."""
    out = []
    for i, v in enumerate(variants):
        if not isinstance(v, dict):
            raise ValueError(f"variants[{i}] is {type(v).__name__}, not a dict")
        unknown = set(v) - set(REQUIRED) - set(OPTIONAL) - {"saturation_qps"}
        if unknown:
            raise ValueError(f"variants[{i}] has unknown fields {sorted(unknown)}")
        for key in REQUIRED:
            if key not in v:
                raise ValueError(f"variants[{i}].{key} is missing (variant {v.get('name')!r})")
        for key in ("accuracy", "cost_per_s", "load_s", "memory_mb", "peak_qps"):
            if key in v and (isinstance(v[key], bool) or not isinstance(v[key], int | float)):
                raise ValueError(f"variants[{i}].{key}={v[key]!r} is not a number")
            if key in v and not math.isfinite(v[key]):
                raise ValueError(f"variants[{i}].{key}={v[key]!r} is not finite")
        lat = v["latency_ms"]
        if isinstance(lat, str | bytes) or not isinstance(lat, Sequence) or not lat:
            raise ValueError(f"variants[{i}].latency_ms={lat!r} must be a non-empty list of ms")
        entry = {k: v[k] for k in REQUIRED + OPTIONAL if k in v}
        entry["latency_ms"] = [float(x) for x in lat]
        out.append(entry)
    return out


def metadata_store(variants: Iterable[dict[str, Any]]) -> Any:
    """A C++ metadata store over the variants (``servelab._core.infaas.MetadataStore``)."""
    return _core.infaas.MetadataStore(check_variants(variants))


def variants_from_profile(
    profile: Any, statistic: str = "mean", hardware: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Variants from a servelab Profile: each (model, hardware) pair with a latency curve."""
    return list(_core.infaas.variants_from_profile(profile, statistic, list(hardware)))


def to_profile(variants: Iterable[dict[str, Any]], prices: str = "sec6.2") -> Any:
    """A servelab Profile with one model per variant (named after it) on its hardware, so the
    simulator and the real loop can serve the catalogue.

    prices: "sec6.2" (default) prices each hardware type at Sec. 6.2's normalised rate for one GB
    of footprint (CPU 0.031, Inferentia 0.190, GPU 0.498 per second, times 3600 per hour), the
    cost model of the paper's variant-selection experiments; "ec2" uses the on-demand prices of
    Sec. 6's instances (``HARDWARE``), under which an inf1.2xlarge is cheaper than an m5.2xlarge.
    """
    from ...profiles import Profile  # the Profile class, kept out of import servelab's path

    if prices not in ("sec6.2", "ec2"):
        raise ValueError(f"prices={prices!r} must be 'sec6.2' or 'ec2'")
    checked = check_variants(variants)
    if not checked:  # an empty profile would only fail later, far from here
        raise ValueError("variants is empty: to_profile needs at least one variant")
    p = Profile()
    for hw in sorted({v["hardware"] for v in checked}):
        if prices == "ec2":
            price = HARDWARE.get(hw, {}).get("price_per_hour", 0.0)
        else:
            price = COST_PER_GB_S.get(hw, 0.0) * 3600
        p.add_hardware(hw, price_per_hour=price)
    for v in checked:
        p.add_model(v["name"], accuracy=v["accuracy"])
        for b, ms in enumerate(v["latency_ms"], start=1):
            p.set_latency(v["hardware"], v["name"], b, samples_s=[ms / 1000])
        p.set_load_time(v["hardware"], v["name"], v.get("load_s", 0.0))
        if v.get("memory_mb", 0.0) > 0:
            p.set_memory_mb(v["hardware"], v["name"], v["memory_mb"])
    return p


#: Table 8: (layers, parameters) of the 22 architectures (the vanilla implementations).
TABLE8_SIZE = {
    "mobilenetv1": (30, 4_253_864), "mobilenetv2": (30, 3_538_984), "alexnet": (8, 62_378_344),
    "densenet121": (121, 8_062_504), "densenet169": (169, 14_307_880),
    "densenet201": (201, 20_242_984), "resnet50": (50, 25_636_712),
    "resnet50v2": (50, 25_613_800), "resnext50": (50, 25_700_000),
    "resnet101": (101, 44_707_176), "resnet101v2": (101, 44_675_560),
    "resnext101": (101, 45_300_000), "resnet152": (152, 60_419_944),
    "resnet152v2": (152, 60_380_648), "vgg16": (16, 138_357_544), "vgg19": (19, 143_667_240),
    "inceptionv3": (48, 23_851_784), "xception": (76, 22_910_480),
    "inception_resnetv2": (164, 55_873_736), "nasnetmobile": (914, 5_326_716),
    "nasnetlarge": (1244, 88_949_818), "gnmt": (16, 210_000_000),
}  # fmt: skip

#: The Sec. 6.1 family of every architecture: the ResNet50 family's CPU (TensorFlow b1, PyTorch
#: b4), Inferentia (b1, b4) and TensorRT GPU (b1, b8) variants.
TABLE8_FAMILY = (
    ("tensorflow", "cpu", 1), ("pytorch", "cpu", 4), ("neuron", "inferentia", 1),
    ("neuron", "inferentia", 4), ("tensorrt", "gpu", 1), ("tensorrt", "gpu", 8),
)  # fmt: skip


def compute_scale(architecture: str) -> float:
    """An architecture's latency relative to ResNet50 (our assumption, from Table 8 alone):
    sqrt(layers / 50 x parameters / ResNet50's), clipped to [0.3, 4]. Depth stands for the
    sequential work, parameters for the width; the clip keeps NasNetLarge's 1244 layers and
    MobileNet's 4 M parameters within what such models measure against ResNet50."""
    if architecture not in TABLE8_SIZE:
        raise KeyError(f"architecture={architecture!r} is not in Table 8: {sorted(TABLE8_SIZE)}")
    layers, params = TABLE8_SIZE[architecture]
    base_layers, base_params = TABLE8_SIZE["resnet50"]
    return min(4.0, max(0.3, math.sqrt(layers / base_layers * params / base_params)))


#: GNMT's nine variants (Table 6), shaped after the paper's artifact, whose translation container
#: (github.com/stanford-mast/INFaaS, ``gnmt-nvpy``) serves NVIDIA's PyTorch GNMT (a 4-layer LSTM,
#: English-German) on CPU in FP32 and on a V100 in FP32 or FP16, with beam size 1, 2 or 5: 3 x 3.
#: Neuron did not compile it, so no Inferentia variant. Rows: (precision, hardware, batch_opt,
#: batch-1 ms by beam size, latency at batch_opt / at batch 1, load_s, memory_mb). The latencies,
#: batch factors, load times and footprints are our assumptions (the paper gives none): a V100 at
#: batch 1 is latency bound by the sequential decoder (28-55 ms), a wider beam costs more steps'
#: work, 8 CPU cores take 240-500 ms, and a batch of 8 sentences costs 1.4x (FP16) to 1.6x (FP32)
#: one sentence on the GPU; the CPU variants stay at batch 1.
_GNMT_FAMILY = (
    ("fp32", "cpu", 1, {1: 240.0, 2: 320.0, 5: 500.0}, 1.0, 6.0, 1500.0),
    ("fp32", "gpu", 8, {1: 34.0, 2: 42.0, 5: 55.0}, 1.6, 8.0, 1800.0),
    ("fp16", "gpu", 8, {1: 28.0, 2: 33.0, 5: 40.0}, 1.4, 8.0, 1200.0),
)

#: BLEU lost by a narrower beam, against beam 5 (NVIDIA's GNMT README, FP32 at batch 128: 23.18,
#: 24.12 and 24.63 at beam 1, 2 and 5). Table 8's 24.5 is the beam-5 variants' BLEU, so a floor of
#: 24.5 leaves the three beam-5 variants, a lower one the faster beams too.
GNMT_BLEU_LOSS = {1: 1.45, 2: 0.5, 5: 0.0}


def gnmt_variants() -> list[dict[str, Any]]:
    """GNMT's nine translation variants (task "translation", accuracy = BLEU / 100): see
    ``_GNMT_FAMILY`` for what comes from the paper's artifact and what is assumed."""
    out = []
    for precision, hardware, batch_opt, by_beam, batch_factor, load_s, memory_mb in _GNMT_FAMILY:
        for beam, ms in by_beam.items():
            bleu = TABLE8_ACCURACY["gnmt"] - GNMT_BLEU_LOSS[beam]
            out.append({
                "name": f"gnmt_pytorch_{precision}_beam{beam}_{hardware}_b{batch_opt}",
                "architecture": "gnmt",
                "task": "translation",
                "framework": "pytorch",
                "hardware": hardware,
                "batch_opt": batch_opt,
                "accuracy": round(bleu / 100, 6),
                "latency_ms": batch_curve({1: ms, batch_opt: ms * batch_factor}, batch_opt),
                "load_s": load_s,
                "memory_mb": memory_mb,
                "cost_per_s": round(COST_PER_GB_S[hardware] * memory_mb / 1024, 6),
            })  # fmt: skip
    return out


def table8_variants(architectures: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Variant families for Table 8's 22 architectures (Sec. 6.1), in Table 8's order. The image
    architectures' families are shaped like ``resnet50_variants()``: each family member's latency
    curve scaled by ``compute_scale``, its memory footprint and load time by 0.5 + 0.5 x
    parameters / ResNet50's, its cost Sec. 6.2's rate x footprint, its accuracy Table 8's top-1
    (task "classification"). GNMT's are ``gnmt_variants()`` (task "translation", BLEU)."""
    names = list(architectures) if architectures is not None else list(TABLE8_SIZE)
    family = {
        (f, hw, b): (points, load_s, mem) for f, hw, b, points, load_s, mem in _RESNET50_FAMILY
    }
    base_params = TABLE8_SIZE["resnet50"][1]
    out = []
    for arch in names:
        scale = compute_scale(arch)  # also the KeyError naming an unknown architecture
        if arch == "gnmt":
            out.extend(gnmt_variants())
            continue
        size = 0.5 + 0.5 * TABLE8_SIZE[arch][1] / base_params
        for framework, hardware, batch_opt in TABLE8_FAMILY:
            points, load_s, memory_mb = family[(framework, hardware, batch_opt)]
            mem = round(memory_mb * size, 1)
            variant = {
                "name": f"{arch}_{framework}_{hardware}_b{batch_opt}",
                "architecture": arch,
                "task": "classification",
                "framework": framework,
                "hardware": hardware,
                "batch_opt": batch_opt,
                "accuracy": TABLE8_ACCURACY[arch] / 100,
                "latency_ms": batch_curve({b: ms * scale for b, ms in points.items()}, batch_opt),
                "load_s": round(load_s * size, 3),
                "memory_mb": mem,
                "cost_per_s": round(COST_PER_GB_S[hardware] * mem / 1024, 6),
            }
            if (framework, hardware, batch_opt) in _PEAK_QPS:
                variant["peak_qps"] = round(_PEAK_QPS[(framework, hardware, batch_opt)] / scale, 3)
            out.append(variant)
    return out
