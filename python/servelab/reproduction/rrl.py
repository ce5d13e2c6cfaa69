"""RRL's rows: Fig. 11's radius-1 speed-up and Sec. 6.3's latency against CAPES."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .rows import row, tolerance

#: RRL run sizes: seeds (the issue asks for at least 10 at full size) and steps per run.
RRL_SIZES: dict[str, dict[str, Any]] = {
    "reduced": {"seeds": (0, 1, 2, 3, 4), "steps": 1500},
    "full": {"seeds": tuple(range(10)), "steps": 1500},
}


def claims(size: str, root: Path) -> list[dict[str, Any]]:
    """Fig. 11's radius-1 speed-up over point-based Q-learning and Sec. 6.3's mean latency
    against CAPES, on the CPU space of an 8-core machine (512 configurations) with the
    performance model, Inception-like at 7 requests/s (the fidelity tests' setting: the paper's
    Fig. 4 load scaled to 8 cores). Reduced: seeds 0-4; full: 0-9."""
    from ..systems import rrl

    del root  # the performance model needs no data
    setting = RRL_SIZES[size]
    space, model = rrl.cpu_space(8), rrl.PerfModel(cores=8)
    common = {"steps": setting["steps"], "model": model, "oracle_episodes": 10}
    seeds = setting["seeds"]
    sweep = rrl.region_sweep(space, "poisson(rate=7.0)", (0, 1, 2), seeds=seeds, **common)
    steps = sweep.groupby("radius")["steps_to_converge"].mean()
    speedup = float(steps[0.0] / steps[1.0])
    per_seed = sweep[sweep["radius"] == 1.0]["steps_to_converge"].tolist()
    seed_text = f"seeds {seeds[0]}-{seeds[-1]}"
    rows = [
        row(
            "Fig. 11: radius 1 converges faster than point-based Q-learning, x",
            "Sec. 6.2 (Fig. 11): 'when the region size is one, RRL converges five times faster "
            "than Q-learning'",
            5.0,
            speedup,
            tolerance(5.0, rel=0.3),
            "one number from the paper's testbed; 30%: ours is a mean over seeds on a "
            "performance model, where one slow seed moves it",
            cause=lambda: (
                f"not yet tested; radius 1's steps per seed {per_seed} against "
                f"{steps[0.0]:.0f} for Q-learning; radius 2 gives {steps[0.0] / steps[2.0]:.2f}x. "
                "Suspected: one estimator step per observation (the artifact retrains to a "
                "plateau) and optimistic start values that sweep every region"
            ),
            detail=f"{seed_text}: mean steps to converge, radius 0 {steps[0.0]:.0f}, "
            f"1 {steps[1.0]:.0f}, 2 {steps[2.0]:.0f}",
        )  # fmt: skip
    ]
    runs = rrl.compare_methods(
        space, "poisson(rate=7.0)", ("rrl", "capes"), seeds=seeds[:3], progress=False, **common
    )
    table = rrl.regret_table(runs).groupby("method")
    mean = table["mean_chosen_latency_ms"].mean()
    tail = table["tail_chosen_latency_ms"].mean()
    reduction = float(1 - mean["rrl"] / mean["capes"])
    rows.append(
        row(
            "Sec. 6.3: RRL's mean latency below CAPES's over a run, Inception (share)",
            "Sec. 6.3 (Fig. 12b): 'improves from CAPES and DeepRM by 50.6% and 52.9% "
            "respectively for Inception'",
            0.506,
            reduction,
            tolerance(0.506, rel=0.25),
            "a number in the text; 25%: the paper's runs last 2,000 minutes of a WiKi trace, "
            "ours a Poisson load on the performance model",
            cause=lambda: (
                f"the difference is in the learning phase: over the whole run RRL averages "
                f"{mean['rrl']:.0f} ms against CAPES's {mean['capes']:.0f} ms, in the last tenth "
                f"{tail['rrl']:.0f} ms against {tail['capes']:.0f} ms"
            ),
            detail=f"seeds {seeds[0]}-{seeds[:3][-1]}: mean chosen latency RRL "
            f"{mean['rrl']:.1f} ms, CAPES {mean['capes']:.1f} ms; last tenth {tail['rrl']:.1f} / "
            f"{tail['capes']:.1f} ms",
        )  # fmt: skip
    )
    return rows
