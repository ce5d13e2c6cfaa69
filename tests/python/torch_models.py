"""Tiny TorchScript models the real-executor tests save to a temporary folder (torch required)."""

from __future__ import annotations

from pathlib import Path

import torch


class Mlp(torch.nn.Module):
    """Linear, ReLU, ..., Linear."""

    def __init__(self, widths: tuple[int, ...], seed: int) -> None:
        super().__init__()
        torch.manual_seed(seed)
        layers: list[torch.nn.Module] = []
        for i, (a, b) in enumerate(zip(widths[:-1], widths[1:], strict=True)):
            layers.append(torch.nn.Linear(a, b))
            if i < len(widths) - 2:
                layers.append(torch.nn.ReLU())
        self.body = torch.nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class FailsOnBigBatches(torch.nn.Module):
    """A linear layer that raises on batches of more than `max_rows` rows."""

    def __init__(self, width: int, max_rows: int) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(width, 2)
        self.max_rows = max_rows

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.size(0) > self.max_rows:
            raise RuntimeError(f"batch of {x.size(0)} rows is over the limit")
        return self.linear(x)


def save_mlp(
    folder: Path, widths: tuple[int, ...] = (16, 32, 4), seed: int = 0
) -> tuple[Path, torch.nn.Module]:
    module = torch.jit.script(Mlp(widths, seed).eval())
    path = folder / "mlp.pt"
    torch.jit.save(module, str(path))
    return path, module


def save_failing(folder: Path, width: int = 8, max_rows: int = 2) -> Path:
    path = folder / "fails.pt"
    torch.jit.save(torch.jit.script(FailsOnBigBatches(width, max_rows).eval()), str(path))
    return path
