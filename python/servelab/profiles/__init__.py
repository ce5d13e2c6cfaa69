"""Profiles: what hardware and models cost in time, accuracy and money.

A :class:`Profile` holds latency(hardware, model, batch) as a distribution per measured batch size
(samples or percentiles, interpolated linearly across batch sizes), accuracy(model),
price(hardware) in $/h, memory (MB) and load time (s). Times are seconds::

    from servelab import profiles

    p = profiles.Profile()
    p.add_hardware("g4dn.xlarge", price_per_hour=0.526)
    p.set_latency("g4dn.xlarge", "rm2", 100, samples_s=[0.031, 0.030, 0.034])
    p.latency("g4dn.xlarge", "rm2", 50, statistic="p95")
    profiles.save(p, "my_profile.json")          # the native JSON format, docs/profiles.md
    kairos = profiles.import_kairos("shared/data/kairos")
    demo = profiles.example("hetero_cpu_gpu")

:class:`LatencyEstimator` learns a latency curve online, as Kairos does.
"""

from __future__ import annotations

from importlib import resources

from .._core import LatencyEstimator, Profile
from .format import FORMAT, VERSION, dumps, from_dict, load, loads, save, to_dict
from .importers import (
    import_kairos,
    import_ramsis,
    import_ribbon,
    read_latency_list,
    read_price_csv,
)

STATISTICS = ("mean", "p50", "p95", "p99", "mean_without_max")


def list_examples() -> list[str]:
    """Names of the example profiles shipped with servelab."""
    folder = resources.files(__package__) / "data"
    return sorted(f.name[: -len(".json")] for f in folder.iterdir() if f.name.endswith(".json"))


def example(name: str) -> Profile:
    """An example profile shipped with servelab (see list_examples() and make_examples.py)."""
    known = list_examples()
    if name not in known:
        raise KeyError(f"example {name!r} does not exist (known: {', '.join(known)})")
    resource = resources.files(__package__) / "data" / f"{name}.json"
    return loads(resource.read_bytes(), where=f"servelab example {name}.json")


__all__ = [
    "FORMAT",
    "STATISTICS",
    "VERSION",
    "LatencyEstimator",
    "Profile",
    "dumps",
    "example",
    "from_dict",
    "import_kairos",
    "import_ramsis",
    "import_ribbon",
    "list_examples",
    "load",
    "loads",
    "read_latency_list",
    "read_price_csv",
    "save",
    "to_dict",
]
