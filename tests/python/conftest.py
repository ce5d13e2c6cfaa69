import pytest

import servelab
from servelab import backends


def skip_unless_usable(name: str) -> None:
    """Skips the calling test, with the backend's own reason, when it is not usable here."""
    status = backends.status(name)
    if not status.usable:
        pytest.skip(f"{name} backend not usable: {status.reason}")


@pytest.fixture
def mlp_weights() -> servelab.MlpWeights:
    return servelab.MlpWeights.random([32, 64, 16, 4], seed=3)
