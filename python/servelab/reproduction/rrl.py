"""RRL's rows: Fig. 11's radius-1 speed-up and Sec. 6.3's latency against CAPES, with the two
suspected causes of the gaps measured: the optimistic start values (Algorithm 1's Q = 1/|C|,
which force a sweep of the space) against the artifact's start (every Q at the first measured
latency), and more estimator training per observation (the artifact retrains to a plateau)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .rows import row, tolerance

#: RRL run sizes: seeds (the issue asks for at least 10 at full size) and steps per run.
RRL_SIZES: dict[str, dict[str, Any]] = {
    "reduced": {"seeds": (0, 1, 2, 3, 4), "steps": 1500},
    "full": {"seeds": tuple(range(10)), "steps": 1500},
}

#: More estimator training per observation than the default one FTRL step: the cheap stand-in for
#: the artifact's retraining to a plateau (docs/rrl.md measures the plateau rule itself).
MORE_TRAINING = {"train_steps": 10}
#: The artifact's start: every Q-value at the first measured latency (no forced sweep).
ARTIFACT_START = {"initial": "first"}


def _grid(space: Any) -> np.ndarray:
    """Each configuration's position on the grid, in grid steps per knob."""
    knobs = [np.asarray(values) for _, values in space.knobs]
    return np.array(
        [
            [int(np.searchsorted(k, x)) for k, x in zip(knobs, space.values(c), strict=True)]
            for c in range(space.size)
        ]
    )


def sweep_end(grid: np.ndarray, configs: np.ndarray, radius: float) -> int:
    """The episode after which every configuration has had its first update (measured, or as a
    member of a measured configuration's region of ``radius`` grid steps), or -1."""
    covered = np.zeros(len(grid), dtype=bool)
    for t, c in enumerate(configs):
        covered |= np.linalg.norm(grid - grid[int(c)], axis=1) <= radius + 1e-9
        if covered.all():
            return t + 1
    return -1


def claims(size: str, root: Path) -> list[dict[str, Any]]:
    """Fig. 11's radius-1 speed-up over point-based Q-learning and Sec. 6.3's mean latency
    against CAPES, on the CPU space of an 8-core machine (512 configurations) with the
    performance model, Inception-like at 7 requests/s (the fidelity tests' setting: the paper's
    Fig. 4 load scaled to 8 cores). Reduced: seeds 0-4; full: 0-9 (every comparison)."""
    from ..systems import rrl

    del root  # the performance model needs no data
    setting = RRL_SIZES[size]
    space, model = rrl.cpu_space(8), rrl.PerfModel(cores=8)
    seeds = setting["seeds"]
    grid = _grid(space)
    common = {"steps": setting["steps"], "model": model, "oracle_episodes": 10}
    arrivals = "poisson(rate=7.0)"

    def runs(method: str, learner: dict[str, Any]) -> list[Any]:
        return [rrl.tune(space, arrivals, method, learner=learner, seed=s, **common) for s in seeds]

    def converged(run: Any) -> int:
        return run.converged_step if run.converged_step >= 0 else run.steps

    # Fig. 11 under Algorithm 1's start, with one estimator step per observation and with ten.
    sweep: dict[tuple[str, float], list[Any]] = {("default", 0.0): runs("qlearning", {})}
    for radius in (1.0, 2.0):
        sweep[("default", radius)] = runs("rrl", {"radius": radius})
        sweep[("trained", radius)] = runs("rrl", {"radius": radius, **MORE_TRAINING})
    steps = {k: [converged(r) for r in v] for k, v in sweep.items()}
    mean = {k: float(np.mean(v)) for k, v in steps.items()}
    ends = {
        k: float(np.mean([sweep_end(grid, r.columns["config"], k[1]) for r in v]))
        for k, v in sweep.items()
        if k[0] == "default"
    }
    speedup = mean[("default", 0.0)] / mean[("default", 1.0)]
    trained_1 = mean[("default", 0.0)] / mean[("trained", 1.0)]
    slow_2 = sum(s > 500 for s in steps[("default", 2.0)])
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
                f"Algorithm 1's start (Q = 1/{space.size}, below every cost) makes convergence "
                f"the end "
                f"of a forced sweep: every configuration has had its first update after "
                f"{ends[('default', 0.0)]:.0f} episodes point by point and "
                f"{ends[('default', 1.0)]:.0f} with radius 1 (mean region "
                f"{sweep[('default', 1.0)][0].mean_region_size:.2f} configurations), and the "
                f"runs converge at {mean[('default', 0.0)]:.0f} and "
                f"{mean[('default', 1.0)]:.0f}: a random covering of the grid, which gives "
                f"3.0x here and 3.1x on the paper's 11x11x11 grid (docs/rrl.md), never 5x. "
                f"More estimator training does not move radius 1 ({MORE_TRAINING['train_steps']}"
                f" FTRL steps per observation: {mean[('trained', 1.0)]:.0f} steps, "
                f"{trained_1:.2f}x); it does radius 2, where one step leaves {slow_2} of "
                f"{len(seeds)} seeds past 500 steps ({steps[('default', 2.0)]}) and "
                f"{MORE_TRAINING['train_steps']} steps converge every seed by "
                f"{max(steps[('trained', 2.0)])} "
                f"({mean[('default', 0.0)] / mean[('trained', 2.0)]:.1f}x)"
            ),
            detail=f"{seed_text}: mean steps to converge, radius 0 {mean[('default', 0.0)]:.0f}"
            f", 1 {mean[('default', 1.0)]:.0f}, 2 {mean[('default', 2.0)]:.0f}; with "
            f"{MORE_TRAINING['train_steps']} estimator steps per observation radius 1 "
            f"{mean[('trained', 1.0)]:.0f}, 2 {mean[('trained', 2.0)]:.0f}",
        )  # fmt: skip
    ]

    # Sec. 6.3: CAPES against RRL (radius 1) from Algorithm 1's start and from the artifact's.
    capes = runs("capes", {})
    artifact = runs("rrl", {"radius": 1.0, **ARTIFACT_START})

    def latency(method_runs: list[Any], key: str) -> float:
        return float(np.mean([r.summary()[key] for r in method_runs]))

    ours = sweep[("default", 1.0)]
    mean_ms = {
        "rrl": latency(ours, "mean_chosen_latency_ms"),
        "artifact": latency(artifact, "mean_chosen_latency_ms"),
        "capes": latency(capes, "mean_chosen_latency_ms"),
    }
    tail_ms = {
        "rrl": latency(ours, "tail_chosen_latency_ms"),
        "artifact": latency(artifact, "tail_chosen_latency_ms"),
        "capes": latency(capes, "tail_chosen_latency_ms"),
    }
    oracle_ms = latency(ours, "oracle_latency_ms")
    sweep_share = float(
        np.mean(
            [
                r.columns["chosen_ms"][: sweep_end(grid, r.columns["config"], 1.0)].sum()
                / r.columns["chosen_ms"].sum()
                for r in ours
            ]
        )
    )
    reduction = 1 - mean_ms["rrl"] / mean_ms["capes"]
    artifact_reduction = 1 - mean_ms["artifact"] / mean_ms["capes"]
    latency_detail = (
        f"{seed_text}: mean chosen latency RRL {mean_ms['rrl']:.1f} ms, RRL from the "
        f"artifact's start {mean_ms['artifact']:.1f} ms, CAPES {mean_ms['capes']:.1f} ms; last "
        f"tenth {tail_ms['rrl']:.1f} / {tail_ms['artifact']:.1f} / {tail_ms['capes']:.1f} ms "
        f"(oracle {oracle_ms:.1f} ms)"
    )
    source = (
        "Sec. 6.3 (Fig. 12b): 'improves from CAPES and DeepRM by 50.6% and 52.9% respectively "
        "for Inception'"
    )
    reason = (
        "a number in the text; 25%: the paper's runs last 2,000 minutes of a WiKi trace, ours a "
        "Poisson load on the performance model"
    )
    rows.append(
        row(
            "Sec. 6.3: RRL's mean latency below CAPES's over a run, Inception (share)",
            source,
            0.506,
            reduction,
            tolerance(0.506, rel=0.25),
            reason,
            cause=lambda: (
                f"Algorithm 1's start: the forced sweep (until every configuration has had an "
                f"update, {ends[('default', 1.0)]:.0f} of {setting['steps']} episodes) carries "
                f"{sweep_share:.0%} of RRL's summed latency, saturating configurations included; "
                f"after it RRL is ahead (last tenth {tail_ms['rrl']:.0f} ms against CAPES's "
                f"{tail_ms['capes']:.0f}). From the artifact's start (every Q at the first "
                f"measured latency, no sweep) RRL's mean is {mean_ms['artifact']:.0f} ms, "
                f"{artifact_reduction:.0%} below CAPES's {mean_ms['capes']:.0f} ms (next row)"
            ),
            detail=latency_detail,
        )  # fmt: skip
    )
    rows.append(
        row(
            "Sec. 6.3 from the artifact's start (Q at the first measured latency): RRL's mean "
            "latency below CAPES's, Inception (share)",
            source,
            0.506,
            artifact_reduction,
            tolerance(0.506, rel=0.25),
            reason,
            cause=lambda: (
                f"{'above' if artifact_reduction > 0.633 else 'below'} the tolerance: without "
                f"the sweep RRL spends little time on saturating "
                f"configurations ({mean_ms['artifact']:.0f} ms against CAPES's "
                f"{mean_ms['capes']:.0f} ms, the paper's DeepSpeech figure is 79.0%), but it "
                f"settles on the first good configurations it meets: in the last tenth it "
                f"averages {tail_ms['artifact']:.0f} ms against the oracle's {oracle_ms:.0f} "
                f"(from Algorithm 1's start {tail_ms['rrl']:.0f} ms)"
            ),
            detail=latency_detail,
        )  # fmt: skip
    )
    return rows
