"""The CLI's simulate/schedulers subcommands and the main job (`servelab demo`)."""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

import servelab
import servelab.scenario

from .cli_errors import assert_one_line_error, run_main, run_process


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "servelab", *args], capture_output=True, text=True, timeout=600
    )


def test_help_lists_the_subcommands():
    proc = _cli("--help")
    assert proc.returncode == 0
    for sub in ("info", "demo", "simulate", "serve", "schedulers", "smoke"):
        assert sub in proc.stdout


def test_simulate_json_carries_summary_and_scenario():
    proc = _cli("simulate", "default", "--scheduler", "jsq", "--seed", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["scenario"]["scheduler"] == "jsq"
    assert out["scenario"]["seed"] == 3
    assert out["summary"]["queries"] == out["scenario"]["workload"]["count"]
    same = servelab.simulate("default", scheduler="jsq", seed=3).summary()
    assert out["summary"]["latency_ms"] == same["latency_ms"]


def test_simulate_missing_scenario_is_a_clear_error():
    proc = _cli("simulate", "no-such-scenario.yaml")
    assert proc.returncode == 2
    assert "no-such-scenario.yaml" in proc.stderr


def test_schedulers_lists_every_generic_policy():
    proc = _cli("schedulers", "--json")
    names = {e["name"] for e in json.loads(proc.stdout)}
    assert {"fcfs", "round_robin", "random", "jsq", "least_finish_time", "edf", "batching"} <= names


def test_main_job_writes_plots_and_a_consistent_summary(tmp_path):
    proc = _cli("demo", "--out", str(tmp_path), "--queries", "3000", "--serve-s", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert set(summary["summaries"]) == set(servelab.main_job.SCHEDULERS)
    for s in summary["summaries"].values():
        assert s["queries"] == 3000
    assert all(rate >= 0 for rate in summary["allowable_throughput"].values())
    # Heterogeneity-aware placement sustains more load than strict FCFS on this cluster.
    rates = summary["allowable_throughput"]
    assert rates["least_finish_time"] > rates["fcfs(prefer='g4dn.xlarge')"]
    assert {p.name for p in tmp_path.glob("*.png")} >= {"latency_cdf.png", "cost_vs_goodput.png"}
    assert (tmp_path / "summary.json").exists()
    assert (tmp_path / "sim_vs_serve" / "latency_cdf.png").stat().st_size > 0


# --- errors: exit code 2, one line naming the path and the reason --------------------------------


def test_help_is_plain_text_and_every_option_has_help():
    from servelab.cli import build_parser

    proc = _cli("--help")
    assert proc.returncode == 0
    assert "`" not in proc.stdout  # no reST markup from a docstring
    assert "servelab: ML inference-serving experiments" in proc.stdout

    def options_without_help(parser: argparse.ArgumentParser, name: str) -> list[str]:
        missing = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    missing += options_without_help(sub, f"{name} {sub_name}")
            elif not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
        return missing

    assert options_without_help(build_parser(), "servelab") == []
    for command in (["kairos", "search"], ["kairos", "evaluate"]):
        proc = _cli(*command, "--help")
        assert "seed of the simulated workloads" in proc.stdout, proc.stdout


def test_a_directory_as_scenario_is_one_line(tmp_path):
    run_process(["simulate", str(tmp_path)], str(tmp_path), "directory")


def test_a_binary_scenario_names_the_file_and_the_encoding(tmp_path):
    path = tmp_path / "random.yaml"
    path.write_bytes(bytes(range(256)) * 4)
    line = run_process(["simulate", str(path)], str(path))
    assert "utf-8" in line.lower() and "error: utf-8" not in line


def test_a_deeply_nested_scenario_is_one_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    line = run_process(["simulate", str(path)], str(path))
    assert "deep" in line


def test_an_unwritable_out_folder_fails_before_the_job_with_path_and_reason(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / "plots"
    proc = _cli("demo", "--out", str(out), "--queries", "100")
    assert_one_line_error(proc.returncode, proc.stderr, str(out), "Not a directory")
    assert "error: 20" not in proc.stderr  # the errno alone
    assert proc.stdout == ""  # refused before the simulations, not after


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["smoke", "--batch", str(2**63)], "argument --batch: must be at most 65536"),
        (["smoke", "--batch", "0"], "argument --batch: must be a positive integer, got 0"),
        (["demo", "--serve-s", "-1"], "argument --serve-s: must be a positive number, got -1"),
        (["demo", "--serve-s", "inf"], "argument --serve-s: must be a finite number, got inf"),
        (["demo", "--queries", "0"], "argument --queries: must be a positive integer, got 0"),
        (["simulate", "default", "--warmup-s", "-1"], "argument --warmup-s: must be a non-neg"),
        (["simulate", "default", "--warmup-s", "nan"], "argument --warmup-s: must be a finite"),
        (["simulate", "default", "--seed", "-1"], "argument --seed: must be a non-negative"),
        (["serve", "default", "--seed", str(2**64)], "argument --seed: must be at most"),
        (["serve", "default", "--count", "0"], "argument --count: must be a positive integer"),
        (["serve", "default", "--count", "x"], "argument --count: 'x' is not an integer"),
        (["nope"], "invalid choice: 'nope'"),
    ],
)
def test_bad_options_are_refused_by_the_parser(capsys, argv, expected):
    run_main(capsys, argv, expected)


@pytest.mark.parametrize(
    "error",
    [
        RecursionError("maximum recursion depth exceeded"),
        MemoryError(),
        TypeError("'<' not supported between instances of 'str' and 'int'"),
        OverflowError("cannot convert float infinity to integer"),
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_raised_by_user_input_become_one_line_with_the_path(
    capsys, monkeypatch, tmp_path, error
):
    path = tmp_path / "scenario.yaml"
    path.write_text("name: x\n")

    def failing_reader(*_args, **_kwargs):
        raise error

    monkeypatch.setattr(servelab.scenario, "load_scenario", failing_reader)
    run_main(capsys, ["simulate", str(path)], f"servelab simulate: error: {path}: ")


def test_error_line_forms():
    from servelab.cli import error_line

    missing = FileNotFoundError(2, "No such file or directory", "/no/such.json")
    assert error_line("kairos search", missing) == (
        "servelab kairos search: error: /no/such.json: No such file or directory"
    )
    binary = UnicodeDecodeError("utf-8", b"\x00\xff", 1, 2, "invalid start byte")
    assert error_line("x", binary).endswith("error: not utf-8 text (invalid start byte at byte 1)")
    assert error_line("x", KeyError("unknown scheduler 'bogus'")).endswith(
        "error: unknown scheduler 'bogus'"  # not quoted twice
    )
    assert error_line("x", ValueError("first\n  second\n")) == "servelab x: error: first; second"
    # A path already named by the message is not repeated.
    named = ValueError(f"{__file__}:1: bad")
    assert error_line("x", named, [__file__]) == f"servelab x: error: {__file__}:1: bad"


def test_docs_describe_demo_as_the_main_job_and_list_every_cpp_area():
    root = Path(__file__).parents[2]
    # Descriptions of `servelab demo` (a Makefile recipe line, starting with a tab, only runs it).
    demo_lines = [
        line
        for name in ("docs/index.md", "docs/developing.md", "Makefile")
        for line in (root / name).read_text().splitlines()
        if ("servelab demo" in line and not line.startswith("\t")) or line.startswith("## demo:")
    ]
    assert demo_lines
    for line in demo_lines:
        assert "main job" in line and "--batch" not in line, line
    developing = (root / "docs" / "developing.md").read_text()
    areas = sorted(p.name for p in (root / "cpp" / "src").iterdir() if p.is_dir())
    assert [a for a in areas if f"- `{a}`: " not in developing] == []


def test_ctrl_c_ends_a_command_with_one_line_and_code_130():
    import signal
    import time

    command = [sys.executable, "-m", "servelab", "simulate", "default", "--count", "30000000"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2.0)  # inside the long simulation call by now
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert stderr.strip() == "servelab simulate: interrupted", stderr
