"""The RRL paper's (SC'19) and artifact's numbers, and reports that print ours beside them.

The paper's figures come from TF-Serving on its testbed; the artifact ships no measurements (only
an inter-arrival trace), so these numbers are the claims our simulated experiments are set beside,
not values they must equal.
"""

from __future__ import annotations

from typing import Any

#: The paper's headline numbers and the artifact's settings.
PAPER: dict[str, Any] = {
    # Sec. 6.2 / abstract: near-optimal configurations > 8x faster than DeepRM and CAPES.
    "speedup_vs_deep_rl": 8.0,
    # Sec. 6.2 (Fig. 11): "when the region size is one, RRL converges five times faster than
    # Q-learning".
    "speedup_vs_qlearning_region_1": 5.0,
    # Sec. 6.3: average latency reduction of RRL on CPU (DeepSpeech / Inception, WiKi arrivals).
    "latency_reduction_vs_capes": {"deepspeech": 0.790, "inception": 0.506},
    "latency_reduction_vs_deeprm": {"deepspeech": 0.517, "inception": 0.529},
    # Sec. 6.5: SLO violation reduction under the strict p95 SLO.
    "violation_reduction_vs_capes": 0.499,
    "violation_reduction_vs_deeprm": 0.434,
    # Sec. 6.5: the strict SLOs (p95), ms.
    "strict_slo_ms": {"cpu": 550, "gpu": 520},
    # Fig. 4 / Fig. 5 arrival rates, requests/s.
    "fig4_cpu_rate_qps": 14,
    "fig5_gpu_rate_qps": 61,
    # The artifact: 11 levels per knob, region radius 3 grid steps, Q <- 0.7 Q + 0.3 Q_est,
    # 200 requests per measurement episode.
    "artifact_levels_per_knob": 11,
    "artifact_radius": 3,
    "artifact_learning_rate": 0.3,
    "artifact_episode_requests": 200,
}


def format_region_sweep(table: Any) -> str:
    """Fig. 11 beside ours: steps to converge (censored runs count in full) and the final latency
    ratio to the oracle, per radius, averaged over seeds."""
    grouped = table.groupby("radius").agg(
        region_size=("region_size", "mean"),
        steps=("steps_to_converge", "mean"),
        never=("censored", "sum"),
        ratio=("final_ratio", "mean"),
    )
    base = float(grouped["steps"].iloc[0]) if 0.0 in grouped.index else float("nan")
    lines = ["Fig. 11 (region size sweep): steps to converge within tolerance of the oracle"]
    lines.append(
        f"{'radius':>7} {'region':>7} {'steps':>8} {'never':>6} {'speed-up':>9} "
        f"{'latency/oracle':>15}"
    )
    for radius, row in grouped.iterrows():
        speedup = base / row["steps"] if row["steps"] > 0 else float("nan")
        lines.append(
            f"{radius:>7.2f} {row['region_size']:>7.1f} {row['steps']:>8.0f} "
            f"{int(row['never']):>6d} "
            f"{speedup:>8.2f}x {row['ratio']:>15.3f}"
        )
    lines.append(
        f"paper: radius 1 converges {PAPER['speedup_vs_qlearning_region_1']:.0f}x faster than "
        "Q-learning; convergence time drops quickly with the region size while the distance from "
        "the optimum grows more slowly (Fig. 11)"
    )
    return "\n".join(lines)


def _lower(ours: float, theirs: float) -> str:
    """'23.9% lower' or '12.0% higher': ours relative to theirs."""
    change = 1 - ours / theirs
    return f"{change:.1%} lower" if change >= 0 else f"{-change:.1%} higher"


def format_comparison(table: Any) -> str:
    """Methods side by side (a regret_table): convergence, final and mean latency, regret."""
    grouped = table.groupby("method").agg(
        converged=("converged", "mean"),
        steps=("converged_step", lambda s: s[s >= 0].mean() if (s >= 0).any() else float("nan")),
        final=("final_latency_ms", "mean"),
        chosen=("mean_chosen_latency_ms", "mean"),
        regret=("mean_regret_ms", "mean"),
    )
    lines = [
        f"{'method':>10} {'converged':>9} {'step':>7} {'final ms':>9} {'mean ms':>9} "
        f"{'regret ms':>10}"
    ]
    for method, row in grouped.iterrows():
        lines.append(
            f"{method:>10} {row['converged']:>9.0%} {row['steps']:>7.0f} {row['final']:>9.1f} "
            f"{row['chosen']:>9.1f} {row['regret']:>10.1f}"
        )
    if {"rrl", "qlearning"} <= set(grouped.index):
        rrl, q = grouped.loc["rrl"], grouped.loc["qlearning"]
        if rrl["steps"] > 0 and q["steps"] > 0:  # NaN when no run of the method converged
            speed = f"{q['steps'] / rrl['steps']:.2f}x fewer steps to converge"
        else:
            speed = "convergence steps not comparable (a method never converged)"
        lines.append(
            f"RRL vs point-based Q-learning: {speed}, "
            f"{_lower(rrl['chosen'], q['chosen'])} mean latency while learning "
            f"(paper: {PAPER['speedup_vs_qlearning_region_1']:.0f}x at region 1, "
            f">{PAPER['speedup_vs_deep_rl']:.0f}x vs deep RL)"
        )
    for baseline, label in (("capes", "CAPES"), ("deeprm", "DeepRM")):
        if {"rrl", baseline} <= set(grouped.index):
            rrl, other = grouped.loc["rrl"], grouped.loc[baseline]
            paper = PAPER[f"latency_reduction_vs_{baseline}"]
            line = (
                f"RRL vs {label}-like: {_lower(rrl['chosen'], other['chosen'])} mean latency "
                f"over the run, {_lower(rrl['final'], other['final'])} at the end (paper: "
                f"{paper['inception']:.1%} Inception, {paper['deepspeech']:.1%} DeepSpeech)"
            )
            if "violation_rate" in table:
                v = table.groupby("method")["violation_rate"].mean()
                reduction = 1 - v["rrl"] / v[baseline] if v[baseline] > 0 else float("nan")
                line += (
                    f"; SLO violations {v['rrl']:.1%} vs {v[baseline]:.1%} ({reduction:.1%} fewer) "
                    f"(paper: {PAPER[f'violation_reduction_vs_{baseline}']:.1%})"
                )
            lines.append(line)
    return "\n".join(lines)
