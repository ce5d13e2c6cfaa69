"""`servelab kairos bound | select | search | evaluate`, human and --json output, errors."""

from __future__ import annotations

import json

import pytest

from servelab import kairos, profiles
from servelab.cli import main

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
