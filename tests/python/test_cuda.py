"""The CUDA backend: always compiled, run only where a GPU is present."""

import re
import subprocess
import sys

import numpy as np
import pytest

import servelab
from servelab import backends

from .conftest import skip_unless_usable


def test_importing_servelab_needs_no_cuda_or_torch():
    optional = ("servelab._cuda", "servelab._torch", "torch")
    code = f"import sys, servelab; print(sorted(m for m in sys.modules if m in {optional!r}))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_unusable_cuda_raises_with_the_reason():
    status = backends.status("cuda")
    if status.usable:
        pytest.skip("a usable GPU is present")
    with pytest.raises(
        servelab.BackendUnavailable, match=re.escape(f"cuda backend is not usable: {status.reason}")
    ):
        servelab.CudaMlp  # noqa: B018


@pytest.mark.gpu
@pytest.mark.parametrize("batch", [1, 33, 512])
def test_cuda_mlp_matches_reference(batch):
    skip_unless_usable("cuda")
    weights = servelab.MlpWeights.random([64, 256, 32, 4], seed=11)
    x = np.random.default_rng(batch).standard_normal((batch, 64), dtype=np.float32)
    got = servelab.CudaMlp(weights)(x)
    np.testing.assert_allclose(got, servelab.ReferenceMlp(weights)(x), atol=1e-4)


@pytest.mark.gpu
def test_cuda_bad_device_index_is_a_value_error():
    skip_unless_usable("cuda")
    with pytest.raises(ValueError, match="device=99 is out of range"):
        servelab.CudaMlp(servelab.MlpWeights.random([4, 2], seed=0), device=99)


@pytest.mark.gpu
def test_cuda_device_is_hopper_or_newer_for_sm90_code():
    skip_unless_usable("cuda")
    details = backends.status("cuda").details
    assert details["compute_capability"] >= 90, details
