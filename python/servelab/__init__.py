"""servelab: a research framework for ML inference serving."""

from ._core import MlpWeights, Model, ReferenceMlp
