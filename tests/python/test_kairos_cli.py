"""`servelab kairos bound | select | search | evaluate`, human and --json output, errors."""

from __future__ import annotations

import json
import re

import pytest

from servelab import kairos, profiles
from servelab.cli import main

from .cli_errors import run_main, run_process
from .shared_data import shared_path


@pytest.fixture(scope="module")
def folder():
    return str(shared_path("kairos"))


def run_json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_bound_json_lists_every_configuration_ranked(capsys, folder):
    out = run_json(
        capsys, ["kairos", "bound", folder, "--model", "rm2", "--formula", "artifact", "--json"]
    )
    assert out["configs"] == len(out["bounds"]) == 331
    assert out["types"] == ["g4dn.xlarge", "c5n.2xlarge", "r5n.large", "t3.xlarge"]
    assert [b["rank"] for b in out["bounds"]] == list(range(1, 332))
    frame = kairos.upper_bounds(folder, "rm2", formula="artifact")
    assert [b["bound"] for b in out["bounds"]] == frame["bound"].tolist()
    assert out["bounds"][0]["config"] == {
        "g4dn.xlarge": 1,
        "c5n.2xlarge": 0,
        "r5n.large": 13,
        "t3.xlarge": 0,
    }


def test_bound_text_and_top(capsys, folder):
    assert main(["kairos", "bound", folder, "--model", "dien", "--top", "3"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("331 configurations under $2.5/h, model dien")
    assert len(text.strip().splitlines()) == 2 + 3  # header, column names, 3 rows


def test_bound_from_a_native_profile_with_a_space_file(capsys, tmp_path):
    p = profiles.Profile("toy")
    for b in range(10, 101, 10):
        p.set_latency("gpu", "m", b, samples_s=[0.0005 * b / 10 + 0.002])
        p.set_latency("cpu", "m", b, samples_s=[0.002 * b / 10])
    profiles.save(p, tmp_path / "toy.json")
    space = {"ins_types": ["gpu", "cpu"], "max_num": [2, 6], "price": [1.0, 0.25], "cost": 2.0}
    (tmp_path / "space.json").write_text(json.dumps(space))
    out = run_json(
        capsys,
        [
            "kairos",
            "bound",
            str(tmp_path / "toy.json"),
            "--space",
            str(tmp_path / "space.json"),
            "--qos-ms",
            "11",
            "--sizes",
            "uniform(low=1, high=100, round_to=10)",
            "--json",
        ],
    )
    assert out["model"] == "m" and out["configs"] == 6


def test_select(capsys, folder):
    out = run_json(capsys, ["kairos", "select", folder, "--model", "mtwnd", "--json"])
    assert out["rule"] == "min_distance_sum"
    assert out["config"] == kairos.select_config(folder, "mtwnd").config
    assert len(out["candidates"]) == 10
    assert main(["kairos", "select", folder, "--model", "dien"]) == 0
    assert "Kairos picks {'g4dn.xlarge': 2" in capsys.readouterr().out


def test_search_with_a_lookup_file(capsys, folder, tmp_path):
    frame = kairos.upper_bounds(folder, "rm2")
    types = frame.attrs["types"]
    lookup = {
        ",".join(str(int(r[t])) for t in types): 0.9 * r["bound"] for _, r in frame.iterrows()
    }
    (tmp_path / "lookup.json").write_text(json.dumps(lookup))

    def search(*method: str) -> dict:
        argv = [
            "kairos",
            "search",
            folder,
            "--model",
            "rm2",
            "--lookup",
            str(tmp_path / "lookup.json"),
        ]
        return run_json(capsys, [*argv, *method, "--json"])

    out = search("--method", "kairos+")
    assert out["best_config"] == {
        "g4dn.xlarge": 1,
        "c5n.2xlarge": 0,
        "r5n.large": 13,
        "t3.xlarge": 0,
    }
    assert out["evaluations"] == len(out["trace"]) >= 1
    assert out["space_points"] == 331
    assert 1 <= out["best_index"] <= out["evaluations"]
    assert out["share"] == pytest.approx(out["evaluations"] / 331)
    assert [row["evaluation"] for row in out["trace"]] == list(range(1, out["evaluations"] + 1))
    assert {"bound", "rank", "best_so_far"} <= set(out["trace"][0])
    out = search("--method", "random", "--seed", "4")
    assert out["method"].startswith("random")


def test_evaluate_and_search_by_simulation(capsys, folder):
    def evaluate(config: str) -> dict:
        argv = ["kairos", "evaluate", folder, "--model", "rm2", "--config", config]
        return run_json(capsys, [*argv, "--queries", "500", "--json"])

    out = evaluate("g4dn.xlarge=2,r5n.large=9")
    assert out["feasible"] and out["rate"] > 50
    same = evaluate("2,0,9,0")  # the same configuration as counts in instance.json's order
    assert same["rate"] == out["rate"]
    assert (
        main(
            [
                "kairos",
                "search",
                folder,
                "--model",
                "rm2",
                "--queries",
                "500",
                "--max-evaluations",
                "2",
            ]
        )
        == 0
    )
    assert "kairos_plus" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["kairos", "bound", "{folder}", "--model", "rm2", "--budget", "0.2"],
            "no feasible configuration",
        ),
        (["kairos", "bound", "{folder}", "--model", "resnet"], "no model 'resnet'"),
        (
            ["kairos", "bound", "{folder}", "--model", "rm2", "--qos-ms", "0.1"],
            "no configuration can meet it",
        ),
        (["kairos", "evaluate", "{folder}", "--model", "rm2", "--config", "2,0,9"], "has 3 counts"),
        (["kairos", "evaluate", "{folder}", "--config", "2,0,9,0"], "--model is required"),
        (["kairos", "search", "{folder}", "--model", "rm2", "--method", "sgd"], "method 'sgd'"),
        (["kairos", "bound", "/nonexistent/folder", "--model", "rm2"], "nonexistent"),
    ],
)
def test_errors_exit_2_with_a_message(capsys, folder, argv, message):
    assert main([a.format(folder=folder) for a in argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["bound", "--top", "-3"], "argument --top: must be a positive integer, got -3"),
        (["bound", "--top", "0"], "argument --top: must be a positive integer, got 0"),
        (["bound", "--budget", "-1"], "argument --budget: must be a positive number, got -1"),
        (["bound", "--qos-ms", "0"], "argument --qos-ms: must be a positive number, got 0"),
        (["bound", "--qos-ms", "nan"], "argument --qos-ms: must be a finite number, got nan"),
        (["select", "--top-k", "0"], "argument --top-k: must be a positive integer, got 0"),
        (["select", "--same-base-top", "-1"], "argument --same-base-top: must be a positive"),
        (["search", "--queries", "0"], "argument --queries: must be a positive integer, got 0"),
        (["search", "--seed", "-1"], "argument --seed: must be a non-negative integer, got -1"),
        (["search", "--max-evaluations", "-1"], "argument --max-evaluations: must be a non-neg"),
        (["evaluate", "--config", "1,0,0,0", "--queries", "-5"], "argument --queries: must be"),
        (["evaluate", "--config", "1,0,0,0", "--seed", str(2**64)], "argument --seed: must be at"),
    ],
)
def test_bad_numbers_are_refused_by_the_parser(capsys, options, expected):
    command, *rest = options
    run_main(capsys, ["kairos", command, "any-folder", "--model", "rm2", *rest], expected)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["bound", "--sizes", "uniform(low=1, high=99)"], "--sizes needs --qos-ms"),
        (["search", "--lookup", "{lookup}", "--queries", "500"], "--queries cannot be combined "
         "with --lookup"),
        (["search", "--lookup", "{lookup}", "--distributor", "fcfs"], "--distributor cannot be "
         "combined with --lookup"),
        (["search", "--lookup", "{lookup}", "--seed", "3"], "--seed cannot be combined with "
         "--lookup and --method kairos+"),
        (["search", "--bound-pruning"], "--bound-pruning cannot be combined with --method kairos+"),
        (["bound", "--space", "{lookup}", "--types", "g4dn.xlarge"], "--types cannot be combined "
         "with --space"),
    ],
)  # fmt: skip
def test_options_that_would_be_ignored_are_refused(capsys, folder, tmp_path, options, expected):
    lookup = tmp_path / "lookup.json"
    lookup.write_text('{"1,0,0,0": 10}')
    command, *rest = options
    argv = ["kairos", command, folder, "--model", "rm2"]
    run_main(capsys, [*argv, *(a.format(lookup=lookup) for a in rest)], expected)


def test_sizes_with_a_qos_of_ones_own_are_used(capsys, folder):
    def best_bound(*sizes: str) -> float:
        argv = ["kairos", "bound", folder, "--model", "rm2", "--qos-ms", "350", "--top", "1"]
        return run_json(capsys, [*argv, *sizes, "--json"])["bounds"][0]["bound"]

    assert best_bound("--sizes", "constant(value=10)") != best_bound()


def test_lookup_file_errors_name_the_file_and_the_reason(capsys, folder, tmp_path):
    search = ["kairos", "search", folder, "--model", "rm2", "--lookup"]
    missing = tmp_path / "missing.json"
    line = run_main(capsys, [*search, str(missing)], str(missing))
    assert re.search("no such file|does not exist", line, flags=re.I), line
    assert not line.endswith("error: 2")  # the errno alone
    run_main(capsys, [*search, str(tmp_path)], str(tmp_path), "directory")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\x00\xff\xfe" * 100)
    assert "utf-8" in run_main(capsys, [*search, str(binary)], str(binary)).lower()
    bad_key = tmp_path / "bad_key.json"
    bad_key.write_text('{"a,b": 100}')
    line = run_main(capsys, [*search, str(bad_key)], str(bad_key))
    assert "key 'a,b' is not comma-separated instance counts" in line, line


def test_deeply_nested_inputs_are_one_line(folder, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    argv = ["kairos", "search", folder, "--model", "rm2", "--lookup", str(deep)]
    assert "deep" in run_process(argv, str(deep))
    assert "deep" in run_process(["kairos", "bound", str(deep), "--budget", "2"], str(deep))
