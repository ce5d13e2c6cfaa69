"""The Kairos paper's settings and claims, and our numbers set beside them.

``QOS_MS`` is the paper's Table 3 (the QoS target of each model, for which the artifact's
``allocator_profile.json`` was computed); ``PAPER_CLAIMS`` what Sec. 8.1 and 8.2 report for the
comparisons of Fig. 8 and Fig. 9. :func:`fidelity_table` lays out the results of those comparisons
(``servelab.kairos.experiments``) one row per model, with the claims attached; the experiments'
``fidelity_report`` runs them and returns that table::

    from servelab import kairos

    kairos.QOS_MS["rm2"]                                          # 350.0
    report = kairos.fidelity_report("../shared/data/kairos", size="full")
    report.attrs["paper"]                                         # PAPER_CLAIMS
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

#: The QoS targets of the paper's Table 3 (p99 latency, ms).
QOS_MS: dict[str, float] = {"ncf": 5.0, "rm2": 350.0, "wnd": 25.0, "mtwnd": 25.0, "dien": 35.0}

#: The models of the paper's evaluation (DeepRecSys), in the order its figures list them.
MODELS: tuple[str, ...] = ("ncf", "rm2", "wnd", "mtwnd", "dien")

#: What the paper reports (Sec. 8.1, 8.2) for the comparisons of Fig. 8 and Fig. 9.
PAPER_CLAIMS = {
    "kairos_over_ribbon": "about 1.5x on every model (Fig. 9)",
    "kairos_over_drs_clockwork": "up to 1.44x (Fig. 9)",
    "kairos_over_homogeneous": "at least 1.25x on every model, up to 2x on RM2 (Fig. 8)",
}


def qos_target(model: str, qos_ms: float | None) -> float:
    """``qos_ms`` checked (a positive number of ms), or the paper's Table 3 target of ``model``."""
    if qos_ms is None:
        if model not in QOS_MS:
            raise ValueError(f"qos_ms=None: give the QoS target (ms) of model {model!r}")
        return QOS_MS[model]
    if (
        isinstance(qos_ms, bool)
        or not isinstance(qos_ms, (int, float))
        or not (math.isfinite(qos_ms) and qos_ms > 0)
    ):
        raise ValueError(f"qos_ms={qos_ms!r} must be a positive number of ms")
    return float(qos_ms)


def fidelity_table(
    fig9: Mapping[str, pd.DataFrame], fig8: Mapping[str, Mapping[str, Any]]
) -> pd.DataFrame:
    """Fig. 9 (``compare_distributors`` frames) and Fig. 8 (``compare_with_homogeneous`` dicts),
    keyed by model, as one row per model beside the paper's claims (``attrs["paper"]``)."""
    rows = []
    for model, distributors in fig9.items():
        homogeneous = fig8[model]
        rows.append(
            {
                "model": model,
                "oracle_config": distributors.attrs["config"],
                **{f"{s}_qps": distributors.loc[s, "rate"] for s in distributors.index},
                "kairos_over_ribbon": distributors.loc["ribbon", "kairos_over"],
                "kairos_over_drs": distributors.loc["drs", "kairos_over"],
                "kairos_over_clockwork": distributors.loc["clockwork", "kairos_over"],
                "kairos_config": homogeneous["kairos_config"],
                "kairos_on_own_config_qps": homogeneous["kairos_rate"],
                "homogeneous": homogeneous["homogeneous"],
                "homogeneous_scaled_qps": homogeneous["homogeneous_scaled_rate"],
                "kairos_over_homogeneous": homogeneous["improvement"],
            }
        )
    frame = pd.DataFrame(rows).set_index("model")
    frame.attrs["paper"] = dict(PAPER_CLAIMS)
    return frame
