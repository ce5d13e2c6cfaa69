"""Long C++ calls release the GIL and stop cleanly on Ctrl-C."""

import os
import signal
import threading
import time

import pytest

from .diagnostics import cpp_diagnostics
from .gil import ticks_during


def test_ctrl_c_stops_a_long_cpp_call_promptly():
    timer = threading.Timer(0.2, os.kill, args=(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            cpp_diagnostics().spin_for(30.0)
    finally:
        timer.cancel()
    # Stopped within a fraction of a second of the signal, not after 30 s.
    assert time.monotonic() - start < 5.0


def test_interpreter_is_usable_after_an_interrupt():
    threading.Timer(0.05, os.kill, args=(os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        cpp_diagnostics().spin_for(30.0)
    assert cpp_diagnostics().spin_for(0.01) > 0


def test_long_call_releases_the_gil():
    # With the GIL held the counter could not move while spin_for ran.
    assert ticks_during(lambda: cpp_diagnostics().spin_for(0.3)) > 10


def test_negative_duration_is_rejected():
    with pytest.raises(ValueError, match="seconds=-1"):
        cpp_diagnostics().spin_for(-1.0)
