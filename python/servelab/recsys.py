"""Recommendation models: DLRM RM1-RM3, Wide&Deep, MT-WnD, NCF, DIN and DIEN, on real tensors.

Each model is servelab's own description of the architecture DeepRecSys published (see
docs/recsys.md for what is simplified), with embedding tables scaled down by ``scale`` so they fit
memory and weights drawn from ``seed``::

    import servelab.recsys as recsys

    model = recsys.build("rm1", backend="onednn", scale=0.01, seed=0)
    dense, sparse = model.inputs(256, seed=1)      # or model.inputs(query_ids)
    scores = model.run(dense, sparse)              # [256, 1] click probabilities

    weights = model.export_weights()               # {name: numpy array}
    same = recsys.from_weights("rm1", weights, scale=0.01, backend="reference")
    torch_model = model.to_torch()                 # the same model in torch (servelab.recsys_torch)

Backends: ``reference`` (plain C++, always there), ``onednn`` (CPU: oneDNN MLPs and servelab's
vectorised embedding bag) and ``cuda`` (GPU: servelab's embedding-bag kernel and cuBLAS); see
``servelab.build_info()`` for which are usable here. In the serving loop the same models run as
the executor ``recsys(model='rm1', backend='onednn', scale=0.01)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import _core

_recsys = _core.recsys
Spec = _recsys.Spec

DEFAULT_SCALE = 0.01


def list_models() -> list[str]:
    """The built-in models: rm1, rm2, rm3, wnd, mtwnd, ncf, din, dien."""
    return list(_recsys.list_models())


def list_backends() -> list[str]:
    """Every backend name a model accepts (whether usable here: ``servelab.build_info()``)."""
    return list(_recsys.backend_names())


def spec(model: str, scale: float = DEFAULT_SCALE, interaction: str | None = None) -> Spec:
    """The description of a built-in model, its tables at ``ceil(rows * scale)`` rows.

    ``interaction``: None (the model's own), ``"cat"`` or ``"dot"`` (DLRM's pairwise dot products).
    """
    return _recsys.spec(model, float(scale), interaction or "")


def _as_spec(model: str | Spec, scale: float, interaction: str | None) -> Spec:
    if isinstance(model, Spec):
        return model
    if not isinstance(model, str):
        raise TypeError(f"model={model!r} must be a model name (see list_models()) or a Spec")
    return spec(model, scale, interaction)


class RecsysModel:
    """A recommendation model on one backend; ``run`` scores numpy batches."""

    def __init__(self, model: Any) -> None:
        self._model = model

    @property
    def spec(self) -> Spec:
        return self._model.spec

    @property
    def name(self) -> str:
        return self._model.spec.name

    @property
    def backend(self) -> str:
        return self._model.backend

    @property
    def supports_threads(self) -> bool:
        return self._model.supports_threads

    def run(self, dense: np.ndarray, sparse: np.ndarray, threads: int = 0) -> np.ndarray:
        """Scores a batch: ``dense`` [batch, spec.dense] float32, ``sparse`` [batch,
        spec.lookups_per_sample] int64 (the features' columns in ``spec.features`` order).

        Returns [batch, spec.outputs] probabilities (NCF: its final layer's ReLU units).
        ``threads`` > 0 sets the backend's threads.
        """
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 0:
            raise ValueError(f"threads={threads!r} must be an integer >= 0")
        return self._model.run(dense, sparse, int(threads))

    __call__ = run

    def run_timed(
        self, dense: np.ndarray, sparse: np.ndarray, threads: int = 0
    ) -> tuple[np.ndarray, dict[str, float]]:
        """``run`` plus the seconds it spent: ``{"gather_s", "mlp_s", "total_s"}`` (the embedding
        gathers, the MLPs and GRU projections, and the whole forward pass)."""
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 0:
            raise ValueError(f"threads={threads!r} must be an integer >= 0")
        scores, stages = self._model.run_timed(dense, sparse, int(threads))
        return scores, dict(stages)

    def inputs(
        self,
        queries: int | Sequence[int] | np.ndarray,
        seed: int = 0,
        distribution: str | Sequence[str] = "uniform",
    ) -> tuple[np.ndarray, np.ndarray]:
        """(dense, sparse) for query ids ``queries`` (or ids 0..queries-1 for a count).

        Each row depends on (seed, query id) only. ``distribution``: ``"uniform"``, ``"zipf"``
        (exponent 1.05), ``"zipf:<exponent>"``, or one of these per table.
        """
        gen = generator(self.spec, seed, distribution)
        if isinstance(queries, (int, np.integer)) and not isinstance(queries, bool):
            return gen.first(int(queries))  # checks the memory before allocating anything
        return gen.queries(_query_ids(queries))

    def export_weights(self) -> dict[str, np.ndarray]:
        """Copies of every weight by name: ``tables.<i>`` [rows, dim], ``bottom.<l>.weight``
        [out, in] and ``.bias``, ``top.<l>.*``, ``task<t>.<l>.*``, ``gru.weight_ih`` ... (torch's
        layouts). ``numpy.savez(path, **weights)`` stores them."""
        return dict(self._model.export_weights())

    def mlp_flops(self, batch: int) -> int:
        """Floating-point operations of the MLPs (and GRU) for ``batch`` samples (2 per FMA)."""
        return 2 * int(batch) * self.spec.mlp_macs_per_sample

    def to_torch(self) -> Any:
        """The same model, same weights, as a ``torch.nn.Module`` (see servelab.recsys_torch)."""
        from . import recsys_torch  # imports torch: only when asked

        return recsys_torch.torch_model(self.spec, self.export_weights())

    def __repr__(self) -> str:
        return f"RecsysModel({self.name!r}, backend={self.backend!r})"


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed={seed!r} must be an integer >= 0")
    return int(seed)


def _query_ids(queries: Sequence[int] | np.ndarray) -> np.ndarray:
    ids = np.asarray(queries)
    if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(
            f"queries must be a count or a non-empty 1-D sequence of integer ids, got {queries!r}"
        )
    return ids.astype(np.int64)


def generator(
    model: str | Spec,
    seed: int = 0,
    distribution: str | Sequence[str] = "uniform",
    scale: float = DEFAULT_SCALE,
) -> Any:
    """The per-query input generator of a model (``queries(ids)``, ``batch(ids, sizes)``)."""
    return _recsys.InputGenerator(_as_spec(model, scale, None), _check_seed(seed), distribution)


def build(
    model: str | Spec,
    backend: str = "reference",
    scale: float = DEFAULT_SCALE,
    seed: int = 0,
    interaction: str | None = None,
) -> RecsysModel:
    """A built-in model with weights drawn from ``seed`` on ``backend``.

    KeyError for an unknown model or backend; RuntimeError saying why when the backend is not
    usable here; MemoryError when the tables would not fit in memory (lower ``scale``).
    """
    s = _as_spec(model, scale, interaction)
    return RecsysModel(_recsys.build(s, backend, _check_seed(seed)))


def from_weights(
    model: str | Spec,
    weights: Mapping[str, np.ndarray],
    backend: str = "reference",
    scale: float = DEFAULT_SCALE,
    interaction: str | None = None,
) -> RecsysModel:
    """A model with the given weights (``export_weights()``'s names, e.g. from ``numpy.load``)."""
    if not isinstance(weights, Mapping):
        raise TypeError(f"weights must be a mapping of name -> array, got {type(weights).__name__}")
    s = _as_spec(model, scale, interaction)
    return RecsysModel(_recsys.from_weights(s, dict(weights), backend))
