"""torch bundles its own oneDNN: both must work in one process, whichever is imported first.

Each order runs in a fresh interpreter so that a symbol clash shows up as a failed (or crashed)
subprocess instead of taking pytest down.
"""

import subprocess
import sys

import pytest

from .conftest import skip_unless_usable

SCRIPT = """
import importlib, numpy as np
for name in {order!r}:
    importlib.import_module(name)
import torch, servelab
x = np.random.default_rng(0).standard_normal((16, 32), dtype=np.float32)
w = servelab.MlpWeights.random([32, 64, 8], seed=1)
np.testing.assert_allclose(servelab.OneDnnMlp(w)(x), servelab.ReferenceMlp(w)(x), atol=1e-5)
# torch's own oneDNN paths: an mkldnn-layout convolution and linear.
img = torch.randn(2, 3, 16, 16)
conv = torch.nn.Conv2d(3, 4, 3)
with torch.no_grad():
    ref = conv(img)
    w_conv, b_conv = conv.weight.to_mkldnn(), conv.bias.to_mkldnn()
    via_mkldnn = torch.nn.functional.conv2d(img.to_mkldnn(), w_conv, b_conv).to_dense()
    x_mkldnn = torch.from_numpy(x).to_mkldnn()
    lin = torch.ops.aten.mkldnn_linear(x_mkldnn, torch.randn(8, 32), torch.zeros(8)).to_dense()
assert torch.allclose(ref, via_mkldnn, atol=1e-5)
assert lin.shape == (16, 8)
# servelab's oneDNN still right after torch's ran, and the LibTorch backend too.
np.testing.assert_allclose(servelab.OneDnnMlp(w)(x), servelab.ReferenceMlp(w)(x), atol=1e-5)
print("ok", servelab.build_info()["backends"]["torch"]["usable"])
"""


@pytest.mark.parametrize(
    "order", [("servelab", "torch"), ("torch", "servelab")], ids=["servelab-first", "torch-first"]
)
def test_torch_and_servelab_onednn_coexist(order):
    skip_unless_usable("onednn")
    skip_unless_usable("torch")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(order=order)], capture_output=True, text=True
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert proc.stdout.strip() == "ok True"
