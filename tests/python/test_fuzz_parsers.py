"""Fuzzing the Python-facing parsers with Hypothesis: spec strings, profile JSON, trace files,
scenario dicts and RAMSIS policy files, from random text and from mutations of valid inputs.

The property is the one bad input must always meet: a clear Python exception of the kinds the
command line reports as user errors (ValueError, KeyError, TypeError, OSError, RuntimeError,
MemoryError, OverflowError), never a crash of the interpreter, a hang or another exception type.
Examples are derandomised (CI runs the same 150 cases per target every time); set
``SERVELAB_FUZZ_EXAMPLES=N`` for a longer campaign with fresh random cases.
"""

from __future__ import annotations

import json
import os

import pytest

import servelab
from servelab import profiles, workload
from servelab.cli import USER_ERRORS

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# A long campaign (SERVELAB_FUZZ_EXAMPLES=N) draws fresh random cases each run.
LONG_RUN = os.environ.get("SERVELAB_FUZZ_EXAMPLES")
EXAMPLES = int(LONG_RUN or "150")
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=LONG_RUN is None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Text that looks like what the parsers read: names, parentheses, quotes, numbers, separators.
SPEC_ALPHABET = "abcdefghijklmnopqrstuvwxyz_=(),'\"[]{}.-+eE0123456789 :\\\x00\u00e9"
spec_text = st.text(alphabet=SPEC_ALPHABET, max_size=60)
known_names = st.sampled_from(
    ["poisson", "gamma", "fcfs", "kairos", "uniform", "constant", "recsys"]
)


@st.composite
def specs(draw):
    """A registered-looking name followed by fuzzed parameters, or pure noise."""
    if draw(st.booleans()):
        return draw(spec_text)
    return draw(known_names) + "(" + draw(spec_text) + ")"


def refuses_cleanly(fn, *args, **kwargs) -> None:
    """fn either succeeds or raises one of the user-error kinds."""
    try:
        fn(*args, **kwargs)
    except USER_ERRORS:
        pass


@FUZZ
@given(specs())
def test_scheduler_specs(text):
    refuses_cleanly(servelab.make_scheduler, text)


@FUZZ
@given(specs())
def test_arrival_and_size_specs(text):
    refuses_cleanly(workload.make_arrival_process, text)
    refuses_cleanly(workload.make_size_distribution, text)


@FUZZ
@given(specs())
def test_executor_specs(text):
    # Only parsing and validation: building a recsys or torchscript executor from a fuzzed
    # but valid spec would load models; those are small here (scale defaults to 0.01).
    refuses_cleanly(servelab.make_executor, text)


EXAMPLE_PROFILE = profiles.dumps(profiles.example("model_variants"))


@st.composite
def mutated(draw, original: bytes):
    """The original bytes with a few random cuts, insertions and byte flips."""
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 6))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        kind = draw(st.sampled_from(["flip", "cut", "insert", "truncate"]))
        if kind == "flip":
            data[at] = draw(st.integers(0, 255))
        elif kind == "cut":
            del data[at : at + draw(st.integers(1, 40))]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=20))
        else:
            del data[at:]
    return bytes(data)


def _profile_bytes():
    raw = EXAMPLE_PROFILE.encode() if isinstance(EXAMPLE_PROFILE, str) else EXAMPLE_PROFILE
    return mutated(raw)


@FUZZ
@given(st.one_of(_profile_bytes(), st.binary(max_size=200)))
def test_profile_json(data):
    refuses_cleanly(profiles.loads, data)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)


@FUZZ
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "profile": st.sampled_from(["example:hetero_cpu_gpu", "example:nope", 3]) | json_values,
            "workers": json_values,
            "workload": json_values,
            "scheduler": st.sampled_from(["fcfs", "jsq(", 7]) | json_values,
            "seed": json_values,
            "drain_s": json_values,
            "service": json_values,
        },
    )
)
def test_scenario_dicts(scenario):
    def build():
        sc = servelab.load_scenario(scenario)
        sc.build_profile()
        sc.build_workers()
        sc.build_workload()

    refuses_cleanly(build)


@FUZZ
@given(st.binary(max_size=300) | st.text(alphabet="0123456789.,-e\n\r\t #abc", max_size=300))
def test_trace_readers(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("trace") / "trace.csv"
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    for reader in (workload.read_timestamps_csv, workload.read_gaps_csv, workload.read_rate_trace):
        refuses_cleanly(reader, str(path))


POLICY = {
    "format": "servelab.ramsis.policy",
}


@FUZZ
@given(json_values)
def test_ramsis_policy_files(tmp_path_factory, value):
    from servelab import ramsis

    path = tmp_path_factory.mktemp("policy") / "policy.json"
    path.write_text(json.dumps(value if not isinstance(value, dict) else {**POLICY, **value}))
    refuses_cleanly(ramsis.load, path)
