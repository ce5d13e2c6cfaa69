"""The recommendation models of servelab.recsys rebuilt in torch, from exported weights.

The same graph as servelab's C++ forward pass, written with torch's own modules
(``nn.EmbeddingBag(mode="sum")``, ``nn.Linear``, ``nn.GRU``; NCF's GMF branch as ``user * item``),
so anyone can check servelab's outputs, or time the model in torch eager, with identical weights::

    model = servelab.recsys.build("dien", scale=0.001, seed=0)
    module = servelab.recsys_torch.torch_model(model.spec, model.export_weights())
    with torch.no_grad():
        scores = module(torch.from_numpy(dense), torch.from_numpy(sparse))

Importing this module imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn


def _mlp(weights: Mapping[str, np.ndarray], prefix: str, relu_after_last: bool) -> nn.Sequential:
    """nn.Linear layers ``<prefix>.<l>.weight/bias``, ReLU between them (and last if asked)."""
    layers: list[nn.Module] = []
    count = sum(1 for key in weights if key.startswith(prefix + ".") and key.endswith(".weight"))
    for layer in range(count):
        w = torch.from_numpy(np.ascontiguousarray(weights[f"{prefix}.{layer}.weight"]))
        linear = nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            linear.weight.copy_(w)
            linear.bias.copy_(
                torch.from_numpy(np.ascontiguousarray(weights[f"{prefix}.{layer}.bias"]))
            )
        layers.append(linear)
        if layer + 1 < count or relu_after_last:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class RecsysTorch(nn.Module):
    """A servelab recommendation model in torch: ``forward(dense, sparse)``, as ``run``."""

    def __init__(self, spec: Any, weights: Mapping[str, np.ndarray]) -> None:
        super().__init__()
        self.dim = int(spec.dim)
        self.interaction = spec.interaction
        self.sequence_op = spec.sequence_op
        self.features = [dict(f) for f in spec.features]
        self.bags = nn.ModuleList()
        for t, (_, rows) in enumerate(spec.tables):
            bag = nn.EmbeddingBag(int(rows), self.dim, mode="sum")
            with torch.no_grad():
                bag.weight.copy_(torch.from_numpy(np.ascontiguousarray(weights[f"tables.{t}"])))
            self.bags.append(bag)
        self.bottom = _mlp(weights, "bottom", relu_after_last=True)
        self.tasks = nn.ModuleList(_mlp(weights, f"task{t}", False) for t in range(len(spec.tasks)))
        # NCF: the GMF branch's two features and the prediction layers (ReLU after each).
        self.gmf = [int(f) for f in spec.gmf]
        self.predict = _mlp(weights, "predict", relu_after_last=True)
        self.top = _mlp(weights, "top", relu_after_last=len(self.tasks) > 0 or len(self.gmf) > 0)
        self.gru: nn.GRU | None = None
        if self.sequence_op == "gru_attention":
            self.gru = nn.GRU(self.dim, self.dim, batch_first=True)
            with torch.no_grad():
                for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    getattr(self.gru, f"{name}_l0").copy_(
                        torch.from_numpy(np.ascontiguousarray(weights[f"gru.{name}"]))
                    )
        # Column ranges of each feature in the sparse input.
        self.columns: list[tuple[int, int]] = []
        start = 0
        for f in self.features:
            self.columns.append((start, start + f["lookups"]))
            start += f["lookups"]
        self.query_feature = int(spec.query_feature)

    def _bag(self, feature: int, sparse: torch.Tensor) -> torch.Tensor:
        lo, hi = self.columns[feature]
        return self.bags[self.features[feature]["table"]](sparse[:, lo:hi])

    def embeddings(
        self, sparse: torch.Tensor
    ) -> tuple[list[torch.Tensor], torch.Tensor | None, torch.Tensor | None]:
        """The gather: each pooled feature's bag sum (NCF's GMF features aside), the query
        feature's, the sequence's rows."""
        pooled: list[torch.Tensor] = []
        query = None
        sequence = None
        for i, (f, (lo, hi)) in enumerate(zip(self.features, self.columns, strict=True)):
            bag = self.bags[f["table"]]
            if i in self.gmf:
                continue
            if f["sequence"]:
                sequence = nn.functional.embedding(
                    sparse[:, lo:hi], bag.weight
                )  # [batch, steps, dim]
                continue
            vector = bag(sparse[:, lo:hi])
            pooled.append(vector)
            if i == self.query_feature:
                query = vector
        return pooled, query, sequence

    def forward(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        # Indices are integers: a float tensor is refused here, as servelab's own backends do,
        # rather than failing deep in embedding_bag (or being truncated by a cast).
        if sparse.dtype not in (torch.int64, torch.int32):
            raise ValueError(
                f"sparse (embedding indices) must hold integers, got dtype {sparse.dtype}"
            )
        if self.gmf:  # NCF: GMF and the MLP tower, no dense features
            user, item = (self._bag(self.gmf[0], sparse), self._bag(self.gmf[1], sparse))
            tower = self.top(torch.cat(self.embeddings(sparse)[0], dim=1))
            return self.predict(torch.cat([user * item, tower], dim=1))
        d = self.bottom(dense) if len(self.bottom) else dense
        pooled, query, sequence = self.embeddings(sparse)
        if self.interaction == "dot":
            vectors = torch.stack([d, *pooled], dim=1)
            products = torch.bmm(vectors, vectors.transpose(1, 2))
            n = vectors.shape[1]
            rows, cols = torch.tril_indices(n, n, offset=-1)
            z = torch.cat([d, products[:, rows, cols]], dim=1)
        else:
            parts = [d, *pooled]
            if sequence is not None and query is not None:
                states = self.gru(sequence)[0] if self.gru is not None else sequence
                scores = torch.bmm(states, query.unsqueeze(2)).squeeze(2) / math.sqrt(self.dim)
                weights = torch.softmax(scores, dim=1)
                parts.append(torch.bmm(weights.unsqueeze(1), states).squeeze(1))
            z = torch.cat(parts, dim=1)
        top = self.top(z)
        if len(self.tasks):
            return torch.sigmoid(torch.cat([head(top) for head in self.tasks], dim=1))
        if top.shape[1] == 1:
            return torch.sigmoid(top)
        return torch.softmax(top, dim=1)


def torch_model(spec: Any, weights: Mapping[str, np.ndarray]) -> RecsysTorch:
    """The model ``spec`` with ``weights`` (``RecsysModel.export_weights()``), in eval mode."""
    return RecsysTorch(spec, weights).eval()
