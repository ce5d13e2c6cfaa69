"""A TorchScript module saved from Python is loaded and run by C++ on a numpy batch."""

import numpy as np
import pytest

import servelab
from servelab import smoke

from .conftest import skip_unless_usable

torch = pytest.importorskip("torch", reason="torch is not installed")


@pytest.fixture(autouse=True)
def _needs_torch_backend():
    skip_unless_usable("torch")


def _scripted_mlp(widths=(32, 64, 8), seed=0):
    return smoke.scripted_torch_mlp(servelab.MlpWeights.random(list(widths), seed))


@pytest.mark.parametrize("batch", [1, 5, 64])
def test_torchscript_output_matches_torch_in_python(tmp_path, batch):
    module = _scripted_mlp()
    path = tmp_path / "mlp.pt"
    torch.jit.save(module, str(path))
    model = servelab.TorchScriptModel(str(path))
    x = np.random.default_rng(batch).standard_normal((batch, 32), dtype=np.float32)
    with torch.inference_mode():
        expected = module(torch.from_numpy(x)).numpy()
    got = model(x)
    assert got.shape == (batch, 8)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert (model.backend, model.device, model.in_features) == ("torch", "cpu", None)


def test_torchscript_matches_servelab_mlp_with_the_same_weights(tmp_path):
    module = _scripted_mlp((16, 24, 4))
    torch.jit.save(module, str(tmp_path / "m.pt"))
    linears = [m for m in module.modules() if m.original_name == "Linear"]
    weights = servelab.MlpWeights(
        [(m.weight.detach().numpy(), m.bias.detach().numpy()) for m in linears]
    )
    x = np.random.default_rng(0).standard_normal((10, 16), dtype=np.float32)
    np.testing.assert_allclose(
        servelab.TorchScriptModel(str(tmp_path / "m.pt"))(x),
        servelab.ReferenceMlp(weights)(x),
        atol=1e-5,
    )


def test_missing_file_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match=r"^TorchScriptModel: path='.*missing\.pt' is not a file$"):
        servelab.TorchScriptModel(str(tmp_path / "missing.pt"))
    (tmp_path / "junk.pt").write_bytes(b"not a zip archive")
    with pytest.raises(ValueError, match="could not be loaded as TorchScript"):
        servelab.TorchScriptModel(str(tmp_path / "junk.pt"))


def test_bad_device_is_a_value_error(tmp_path):
    torch.jit.save(_scripted_mlp(), str(tmp_path / "m.pt"))
    with pytest.raises(ValueError, match="device='tpu' is not a torch device"):
        servelab.TorchScriptModel(str(tmp_path / "m.pt"), "tpu")


def test_wrong_input_width_is_a_runtime_error_naming_torch(tmp_path):
    torch.jit.save(_scripted_mlp(), str(tmp_path / "m.pt"))
    model = servelab.TorchScriptModel(str(tmp_path / "m.pt"))
    # The executor's own forward: the same message, naming the model and the batch.
    with pytest.raises(
        RuntimeError, match=r"^TorchScriptModel: forward failed on a batch of 2 items: "
    ):
        model(np.zeros((2, 7), np.float32))


def test_non_tensor_output_is_a_runtime_error(tmp_path):
    class Pair(torch.nn.Module):
        def forward(self, x):
            return x, x

    torch.jit.save(torch.jit.script(Pair()), str(tmp_path / "pair.pt"))
    with pytest.raises(RuntimeError, match="expected one tensor"):
        servelab.TorchScriptModel(str(tmp_path / "pair.pt"))(np.zeros((2, 3), np.float32))
