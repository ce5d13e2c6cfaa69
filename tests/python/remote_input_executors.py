"""Imported by the worker processes of test_remote_inputs.py (``servelab worker --import``):
registers ``expect_inputs(case=...)``, the executor of remote_input_cases.py."""

import servelab

from .remote_input_cases import ExpectInputs


def expect_inputs(case="float_rows"):
    """Checks each query's input against remote_input_cases.expected."""
    return ExpectInputs(case)


servelab.register_executor("expect_inputs", expect_inputs)
