"""Argument types and option checks shared by every `servelab` subcommand.

A type function turns the text of one option into a checked value, or raises
argparse.ArgumentTypeError; argparse then prints "argument --top: must be ..." and exits with 2.
Bounds follow what the C++ core takes (int32 counts in RAMSIS, int64 elsewhere, uint64 seeds), so
a value out of range is refused here with its option's name rather than deep in a binding.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return value


def int_in_range(low: int, high: int, what: str) -> Callable[[str], int]:
    """A type accepting integers in [low, high]; `what` names the kind ("a positive integer")."""

    def parse(text: str) -> int:
        value = _integer(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        if value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}, got {text}")
        return value

    parse.__name__ = what  # argparse names the type by it in its own messages
    return parse


positive_int = int_in_range(1, INT64_MAX, "a positive integer")
non_negative_int = int_in_range(0, INT64_MAX, "a non-negative integer")
positive_int32 = int_in_range(1, INT32_MAX, "a positive integer")
random_seed = int_in_range(0, UINT64_MAX, "a non-negative integer")


def positive_float(text: str) -> float:
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def non_negative_float(text: str) -> float:
    value = _finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative number, got {text}")
    return value


def ignored_option(option: str, needs: str, why: str) -> ValueError:
    """The error for an option that has no effect without another: raise it."""
    return ValueError(f"{option} needs {needs}: {why}")


def conflicting_options(option: str, other: str, why: str) -> ValueError:
    """The error for an option that `other` leaves without effect: raise it."""
    return ValueError(f"{option} cannot be combined with {other}: {why}")
