"""A straightforward Python/numpy RRL, the yardstick of bench_rrl.py.

The same algorithms as servelab.rrl, written the plain way: configurations as a numpy grid,
regions from a full distance matrix, the episode simulation as a Python loop, the 256-64 MLP as
numpy float32 arrays trained by FTRL-Proximal on the displacement from its initial weights, and
the Q-table as a numpy array with Boltzmann sampling over exp(-beta Q). The episode model and the
exhaustive oracle give the same numbers as servelab's (checked by the benchmark); the learner is
timed, not compared draw for draw (its random streams differ).
"""

from __future__ import annotations

import itertools
import math

import numpy as np


class Space:
    def __init__(self, cores: int) -> None:
        levels = np.arange(1, cores + 1)
        self.values = np.array(list(itertools.product(levels, levels, levels)), dtype=np.int64)
        self.levels = self.values - 1  # grid steps
        self.coords = (self.levels / max(1, cores - 1)).astype(np.float32)
        self.cores = cores

    def regions(self, radius: float) -> list[np.ndarray]:
        diff = self.levels[:, None, :] - self.levels[None, :, :]
        d2 = (diff**2).sum(axis=2)
        return [np.nonzero(row <= radius * radius + 1e-9)[0] for row in d2]


def service_ms(m: dict, inter: int, intra: int, in_service: int) -> float:
    used = min(inter, m["op_width"])
    s_intra = 1 / ((1 - m["intra_fraction"]) + m["intra_fraction"] / intra)
    s_inter = 1 / ((1 - m["inter_fraction"]) + m["inter_fraction"] / used)
    demand = in_service * used * intra / m["cores"]
    slow = 1 if demand <= 1 else demand * (1 + m["interference"] * (demand - 1))
    return (m["base_ms"] / (s_intra * s_inter) + m["sync_ms"] * (inter * intra - 1)) * slow


def episode_mean_ms(m: dict, config: np.ndarray, arrivals: np.ndarray) -> float:
    """FCFS over `workers` servers, service time by the model with the count in service."""
    workers, inter, intra = (int(x) for x in config)
    free = [0.0] * workers
    total = 0.0
    for a in arrivals:
        w = min(range(workers), key=free.__getitem__)
        start = max(a, free[w])
        busy = sum(1 for f in free if f > start) + 1
        free[w] = start + service_ms(m, inter, intra, busy)
        total += free[w] - a
    return total / len(arrivals)


def oracle(space: Space, m: dict, episodes: np.ndarray) -> tuple[int, float]:
    means = [np.mean([episode_mean_ms(m, c, e) for e in episodes]) for c in space.values]
    best = int(np.argmin(means))
    return best, float(means[best])


class Mlp:
    """4 -> 256 -> 64 -> 1, ReLU, Huber loss, FTRL-Proximal around the initial weights."""

    def __init__(self, inputs: int, seed: int, alpha=0.05, beta=1.0, batch=4) -> None:
        rng = np.random.default_rng(seed)

        def he(shape, fan_in, scale=1.0):
            limit = scale * math.sqrt(6 / fan_in)
            return rng.uniform(-limit, limit, shape).astype(np.float32)

        self.w = [
            he((256, inputs), inputs),
            np.full(256, 0.01, np.float32),
            he((64, 256), 256),
            np.full(64, 0.01, np.float32),
            he((1, 64), 64, 0.1),
            np.zeros(1, np.float32),
        ]
        self.w0 = [x.copy() for x in self.w]
        self.z = [np.zeros_like(x) for x in self.w]
        self.n = [np.zeros_like(x) for x in self.w]
        self.alpha, self.beta, self.batch = alpha, beta, batch
        self.xs: list[np.ndarray] = []
        self.ys: list[float] = []
        self.y0: float | None = None
        self.rng = rng

    def forward(self, x: np.ndarray):
        w1, b1, w2, b2, w3, b3 = self.w
        a1 = np.maximum(w1 @ x + b1[:, None], 0)
        a2 = np.maximum(w2 @ a1 + b2[:, None], 0)
        return a1, a2, (w3 @ a2 + b3[:, None])[0]

    def observe(self, x: np.ndarray, latency_ms: float) -> None:
        if self.y0 is None:
            self.y0 = math.log(latency_ms)
        self.xs.append(x.astype(np.float32))
        self.ys.append(math.log(latency_ms) - self.y0)
        picks = [len(self.ys) - 1] + list(self.rng.integers(0, len(self.ys), self.batch - 1))
        picks = picks[: min(self.batch, len(self.ys))]
        x_b = np.stack([self.xs[i] for i in picks], axis=1)
        y_b = np.array([self.ys[i] for i in picks], np.float32)
        a1, a2, out = self.forward(x_b)
        d_out = np.clip(out - y_b, -1, 1) / len(picks)
        w1, b1, w2, b2, w3, b3 = self.w
        d2 = (w3.T @ d_out[None, :]) * (a2 > 0)
        d1 = (w2.T @ d2) * (a1 > 0)
        grads = [
            d1 @ x_b.T,
            d1.sum(1),
            d2 @ a1.T,
            d2.sum(1),
            d_out[None, :] @ a2.T,
            np.array([d_out.sum()]),
        ]
        for i, g in enumerate(grads):
            g = g.astype(np.float32)
            n_new = self.n[i] + g * g
            sigma = (np.sqrt(n_new) - np.sqrt(self.n[i])) / self.alpha
            self.z[i] += g - sigma * (self.w[i] - self.w0[i])
            self.n[i] = n_new
            self.w[i] = self.w0[i] - self.z[i] / ((self.beta + np.sqrt(n_new)) / self.alpha)

    def predict_log(self, x: np.ndarray) -> np.ndarray:
        return self.forward(x)[2]


class RegionQLearner:
    """Region-based Q-learning (Eq. 1-3) in one load level, gamma = 0, alpha = (1 + n)^-0.8."""

    def __init__(self, space: Space, radius: float, seed: int, beta: float = 20.0) -> None:
        self.space = space
        self.regions = space.regions(radius)
        self.q = np.full(len(space.values), 1 / len(space.values))
        self.visits = np.zeros(len(space.values))
        self.beta = beta
        self.mlp = Mlp(space.coords.shape[1] + 1, seed)
        self.rng = np.random.default_rng(seed + 1)

    def choose(self) -> int:
        weights = np.exp(-self.beta * (self.q - self.q.min()))
        return int(self.rng.choice(len(weights), p=weights / weights.sum()))

    def learn(self, config: int, load: float, latency_ms: float) -> None:
        region = self.regions[config]
        x = np.concatenate(
            [self.space.coords[region], np.full((len(region), 1), load, np.float32)], axis=1
        )
        self.mlp.observe(x[list(region).index(config)], latency_ms)
        g = self.mlp.predict_log(x.T)
        g_self = g[list(region).index(config)]
        estimate = latency_ms * np.exp(g - g_self)
        estimate[region == config] = latency_ms
        alpha = (1 + self.visits[region]) ** -0.8
        self.visits[region] += 1
        self.q[region] = (1 - alpha) * self.q[region] + alpha * np.log1p(estimate)

    def step(self, load: float, latency_ms: float) -> int:
        c = self.choose()
        self.learn(c, load, latency_ms)
        return c
