import numpy as np
import pytest

import servelab
from servelab import backends

from .diagnostics import cpp_diagnostics


@pytest.mark.parametrize(
    ("kind", "exception"), [("value", ValueError), ("key", KeyError), ("runtime", RuntimeError)]
)
def test_cpp_exceptions_arrive_as_python_exceptions_with_their_message(kind, exception):
    with pytest.raises(exception, match="field=x is bad"):
        cpp_diagnostics().throw_error(kind, "field=x is bad")


def test_unknown_error_kind_names_the_value():
    with pytest.raises(ValueError, match="kind='nope'"):
        cpp_diagnostics().throw_error("nope", "")


def test_bad_weights_name_the_layer_and_value():
    w = np.zeros((4, 3), np.float32)
    with pytest.raises(
        ValueError, match=r"layers\[0\]\.bias has 2 values, expected out_features=4"
    ):
        servelab.MlpWeights([(w, np.zeros(2, np.float32))])
    with pytest.raises(
        ValueError, match=r"layers\[1\]\.weight expects 5 inputs but layers\[0\] produces 4"
    ):
        servelab.MlpWeights(
            [(w, np.zeros(4, np.float32)), (np.zeros((2, 5), np.float32), np.zeros(2, np.float32))]
        )
    with pytest.raises(ValueError, match="layers is empty"):
        servelab.MlpWeights([])
    with pytest.raises(ValueError, match=r"widths\[1\]=0 is not positive"):
        servelab.MlpWeights.random([3, 0], seed=1)


def test_bad_input_shapes_name_the_shape(mlp_weights):
    model = servelab.ReferenceMlp(mlp_weights)
    with pytest.raises(
        ValueError, match=r"input must be 2-D \[batch, features\], got shape \(32\)"
    ):
        model(np.zeros(32, np.float32))
    with pytest.raises(ValueError, match="input has 31 features, the model expects in_features=32"):
        model(np.zeros((2, 31), np.float32))
    with pytest.raises(ValueError, match="input batch has 0 rows"):
        model(np.zeros((0, 32), np.float32))


def test_unknown_backend_is_a_key_error():
    with pytest.raises(KeyError, match="backend='tpu' is unknown"):
        backends.status("tpu")


def test_missing_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        servelab.Nope  # noqa: B018
