import threading

import numpy as np
import pytest

import servelab

from .conftest import skip_unless_usable


def numpy_mlp(weights: servelab.MlpWeights, x: np.ndarray) -> np.ndarray:
    layers = weights.layers
    h = x.astype(np.float64)
    for i, (w, b) in enumerate(layers):
        h = h @ w.T.astype(np.float64) + b
        if i + 1 < len(layers):
            h = np.maximum(h, 0.0)
    return h


@pytest.fixture
def onednn_model(mlp_weights):
    skip_unless_usable("onednn")
    return servelab.OneDnnMlp(mlp_weights)


@pytest.mark.parametrize("batch", [1, 2, 17, 256])
def test_onednn_matches_numpy_and_reference(onednn_model, mlp_weights, batch):
    x = np.random.default_rng(batch).standard_normal((batch, 32), dtype=np.float32)
    got = onednn_model(x)
    assert got.dtype == np.float32
    assert got.shape == (batch, 4)
    np.testing.assert_allclose(got, numpy_mlp(mlp_weights, x), atol=1e-5)
    np.testing.assert_allclose(got, servelab.ReferenceMlp(mlp_weights)(x), atol=1e-5)
    assert onednn_model.backend == "onednn"
    assert onednn_model.in_features == 32


def test_onednn_accepts_float64_and_non_contiguous_input(onednn_model, mlp_weights):
    x = np.random.default_rng(0).standard_normal((64, 32))  # float64
    expected = numpy_mlp(mlp_weights, x.astype(np.float32))
    np.testing.assert_allclose(onednn_model(x), expected, atol=1e-5)
    strided = np.asfortranarray(x)[::2]
    np.testing.assert_allclose(onednn_model(strided), expected[::2], atol=1e-5)


def test_onednn_output_is_handed_over_without_a_copy(onednn_model):
    out = onednn_model(np.ones((3, 32), np.float32))
    # numpy did not allocate the buffer: it wraps the C++ result through a capsule that frees it.
    assert not out.flags.owndata
    assert type(out.base).__name__ == "PyCapsule"
    del onednn_model
    assert np.isfinite(out).all()


def test_onednn_concurrent_python_threads_agree(onednn_model, mlp_weights):
    x = np.random.default_rng(1).standard_normal((8, 32), dtype=np.float32)
    expected = numpy_mlp(mlp_weights, x)
    errors = []

    def work():
        for _ in range(50):
            errors.append(float(np.max(np.abs(onednn_model(x) - expected))))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 200
    assert max(errors) < 1e-5


def test_weights_round_trip_and_are_deterministic():
    a = servelab.MlpWeights.random([5, 7, 3], seed=42)
    b = servelab.MlpWeights.random([5, 7, 3], seed=42)
    c = servelab.MlpWeights(a.layers)
    for (wa, ba), (wb, bb), (wc, bc) in zip(a.layers, b.layers, c.layers, strict=True):
        np.testing.assert_array_equal(wa, wb)
        np.testing.assert_array_equal(ba, bb)
        np.testing.assert_array_equal(wa, wc)
        np.testing.assert_array_equal(ba, bc)
    assert repr(a) == "MlpWeights([5, 7, 3])"
    assert (a.in_features, a.out_features) == (5, 3)
    d = servelab.MlpWeights.random([5, 7, 3], seed=43)
    assert not np.array_equal(a.layers[0][0], d.layers[0][0])
