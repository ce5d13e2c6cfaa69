import signal

import pytest

import servelab
from servelab import backends


def pytest_configure(config):
    # A shell without job control starts background jobs (`make test &`, some CI runners) with
    # SIGINT ignored, and Python then installs no KeyboardInterrupt handler: every Ctrl-C test
    # would fail for the way the suite was launched. Restore Python's own handler, which also
    # gives the subprocesses the tests start the default disposition.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def skip_unless_usable(name: str) -> None:
    """Skips the calling test, with the backend's own reason, when it is not usable here."""
    status = backends.status(name)
    if not status.usable:
        pytest.skip(f"{name} backend not usable: {status.reason}")


@pytest.fixture
def mlp_weights() -> servelab.MlpWeights:
    return servelab.MlpWeights.random([32, 64, 16, 4], seed=3)
