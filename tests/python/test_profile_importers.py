"""Importers of the Kairos, RAMSIS and Ribbon artifact layouts (servelab.profiles.import_*).

Fidelity tests read ../shared/data and skip, saying so, when it is absent. Corruption tests write
small artifact-format folders into tmp_path.
"""

import csv
import gzip
from pathlib import Path

import numpy as np
import pytest

from servelab import profiles

DATA = Path(__file__).parents[3] / "shared" / "data"


def shared_dir(*parts: str) -> Path:
    path = DATA.joinpath(*parts)
    if not path.is_dir():
        pytest.skip(f"shared data folder {path} is absent (fidelity tests need ../shared/data)")
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def kairos() -> profiles.Profile:
    return profiles.import_kairos(shared_dir("kairos"), models=["rm2", "wnd", "ncf"])


def test_kairos_distributor_mean_equals_mean_without_max(kairos):
    rows = read_csv(DATA / "kairos" / "derived" / "latency_summary.csv")
    rows = [r for r in rows if r["model"] in {"rm2", "wnd", "ncf"}]
    assert len(rows) == 4 * 3 * 100
    for r in rows[::37]:  # several rows of every instance and model
        args = (r["instance"], r["model"], int(r["batch"]))
        assert kairos.latency(*args, "mean_without_max") * 1e3 == pytest.approx(
            float(r["distributor_mean_ms"]), abs=5.1e-5
        )
        assert kairos.latency(*args, "p99") * 1e3 == pytest.approx(
            float(r["p99_sum_ms"]), abs=5.1e-5
        )


def test_kairos_shape_prices_and_vio_batch(kairos):
    assert kairos.hardware == ["c5n.2xlarge", "g4dn.xlarge", "r5n.large", "t3.xlarge"]
    assert kairos.price("g4dn.xlarge") == 0.526 and kairos.price("r5n.large") == 0.149
    assert kairos.batches("t3.xlarge", "rm2") == list(range(10, 1001, 10))
    # README: the smallest rm2 batch whose distributor mean exceeds QoS 350 ms.
    for hw, vio in {"c5n.2xlarge": 910, "r5n.large": 870, "t3.xlarge": 400}.items():
        table = kairos.latency(hw, "rm2", list(range(10, 1001, 10)), "mean_without_max")
        assert 10 * (int(np.argmax(table > 0.350)) + 1) == vio


def test_kairos_drop_max_makes_mean_the_distributor_mean():
    p = profiles.import_kairos(
        shared_dir("kairos"), models=["rm2"], instances=["g4dn.xlarge"], drop_max=True
    )
    row = next(
        r
        for r in read_csv(DATA / "kairos" / "derived" / "latency_summary.csv")
        if r["instance"] == "g4dn.xlarge" and r["model"] == "rm2" and r["batch"] == "100"
    )
    assert p.latency("g4dn.xlarge", "rm2", 100) * 1e3 == pytest.approx(
        float(row["distributor_mean_ms"]), abs=5.1e-5
    )
    assert p.distribution("g4dn.xlarge", "rm2", 100)["samples_s"].size == 99


def test_ramsis_matches_profile_summary_and_accuracy():
    p = profiles.import_ramsis(
        shared_dir("ramsis"),
        tasks=["image_cloud_cpu"],
        models=["resnet50", "efficientnet_b0", "shufflenet_v2_x0_5"],
    )
    assert p.hardware == ["cloud_cpu"]
    assert p.accuracy("resnet50") == pytest.approx(0.80282)
    rows = [
        r
        for r in read_csv(DATA / "ramsis" / "derived" / "profile_summary.csv")
        if r["model"] in set(p.models)
    ]
    assert len(rows) > 30
    for r in rows:
        args = ("cloud_cpu", r["model"], int(r["batch_size"]))
        assert p.latency(*args, "p95") * 1e3 == pytest.approx(float(r["p95_ms"]), abs=5.1e-5)
        assert p.latency(*args, "mean") * 1e3 == pytest.approx(float(r["mean_ms"]), abs=5.1e-5)
        n = p.distribution(*args)["samples_s"].size
        assert n == int(r["n_samples"])  # .gz files included


def test_ribbon_instances_prices_and_batches():
    p = profiles.import_ribbon(shared_dir("ribbon"), models=["resnet", "dien"])
    assert len(p.hardware) == 16 and sorted(p.models) == ["dien", "resnet"]
    assert p.price("c5a.4xlarge") == 0.616 and p.price("t3.2xlarge") == 0.3328
    assert p.batches("c5a.4xlarge", "resnet") == list(range(10, 501, 10))
    assert p.has_latency("g4dn.xlarge", "dien") and not p.has_latency("g4dn.xlarge", "resnet")
    assert p.latency("c5a.4xlarge", "resnet", 250) > p.latency("c5a.4xlarge", "resnet", 10)


# --- corrupted artifact-format files: the error names the file and the line ---


def kairos_copy(tmp_path: Path) -> Path:
    root = tmp_path / "kairos"
    for sub in ("data/g4dn.xlarge", "data/logs_load/g4dn.xlarge"):
        (root / sub).mkdir(parents=True)
        (root / sub / "rm2_10_1.json").write_text("[\n    3.181,\n    1.939,\n    1.933\n]")
    (root / "price.csv").write_text("instance,price\ng4dn.xlarge,0.526\n")
    return root


def test_kairos_small_copy_imports(tmp_path):
    p = profiles.import_kairos(kairos_copy(tmp_path))
    np.testing.assert_allclose(
        p.distribution(0, 0, 10)["samples_s"], np.sort([0.006362, 0.003878, 0.003866])
    )
    assert p.price("g4dn.xlarge") == 0.526


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[\n    3.181,\n    -1.939,\n    1.933\n]", r":3: element \[1\]=-1.939 must be a finite"),
        ("[\n    3.181,\n    1.939,\n    NaN\n]", r":4: element \[2\]=NaN"),
        ('[\n    3.181,\n    "x",\n    1.933\n]', r":3: element \[1\]=\"x\""),
        ("[\n    3.181,\n    1.939\n    1.933\n]", r":4:5: malformed JSON"),
        ("{}", r":1: expected a non-empty JSON list"),
    ],
)
def test_kairos_corrupt_sample_file(tmp_path, text, message):
    root = kairos_copy(tmp_path)
    bad = root / "data" / "g4dn.xlarge" / "rm2_10_1.json"
    bad.write_text(text)
    with pytest.raises(ValueError, match=rf"{bad}{message}"):
        profiles.import_kairos(root)


def test_kairos_missing_load_component_and_bad_price(tmp_path):
    root = kairos_copy(tmp_path)
    (root / "price.csv").write_text("instance,price\ng4dn.xlarge,-0.5\n")
    with pytest.raises(ValueError, match=rf"{root / 'price.csv'}:2: price='-0.5'"):
        profiles.import_kairos(root)
    (root / "data" / "logs_load" / "g4dn.xlarge" / "rm2_10_1.json").unlink()
    with pytest.raises(ValueError, match=r"rm2_10_1.json: its load component .* is missing"):
        profiles.import_kairos(root, prices={})


def test_ribbon_corrupt_copy_of_a_real_file(tmp_path):
    source = shared_dir("ribbon", "characterization", "logs", "c5.4xlarge") / "resnet_100_1.json"
    logs = tmp_path / "characterization" / "logs" / "c5.4xlarge"
    logs.mkdir(parents=True)
    lines = source.read_text().splitlines()
    lines[6] = "    -66.48,"  # element [5]
    (logs / "resnet_100_1.json").write_text("\n".join(lines))
    with pytest.raises(ValueError, match=r"resnet_100_1.json:7: element \[5\]=-66.48"):
        profiles.import_ribbon(tmp_path)


def test_ramsis_corrupt_gz_and_accuracy(tmp_path):
    folder = tmp_path / "profiles" / "image_cloud_cpu" / "resnet18"
    folder.mkdir(parents=True)
    (folder / "resnet18_bsize-1_profile.json").write_text("[0.05, 0.06]")
    with gzip.open(folder / "resnet18_bsize-2_profile.json.gz", "wt") as f:
        f.write("[0.09, 0.0, 0.1]")
    with pytest.raises(ValueError, match=r"resnet18_bsize-2_profile.json.gz:1: element \[1\]=0.0"):
        profiles.import_ramsis(tmp_path)
    with gzip.open(folder / "resnet18_bsize-2_profile.json.gz", "wt") as f:
        f.write("[0.09, 0.08, 0.1]")
    (tmp_path / "derived").mkdir()
    (tmp_path / "derived" / "accuracy.csv").write_text(
        "task,model,top1_accuracy_pct,note\nimage,resnet18,69.494,quantized\nimage,x,abc,\n"
    )
    with pytest.raises(ValueError, match=r"accuracy.csv:3: top1_accuracy_pct='abc' of model 'x'"):
        profiles.import_ramsis(tmp_path)
    p = profiles.import_ramsis(tmp_path, accuracy={"resnet18": 0.69494})
    assert p.batches("cloud_cpu", "resnet18") == [1, 2] and p.accuracy("resnet18") == 0.69494


def test_missing_folder_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        profiles.import_ribbon(tmp_path / "nowhere")


# --- selections: an unknown, empty or repeated name is an error listing what the folder holds ---


def ramsis_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "ramsis" / "profiles" / "image_cloud_cpu" / "resnet18"
    folder.mkdir(parents=True)
    (folder / "resnet18_bsize-1_profile.json").write_text("[0.05, 0.06]")
    return tmp_path / "ramsis"


def test_unknown_names_are_key_errors_listing_the_known_ones(tmp_path):
    kairos = kairos_copy(tmp_path)
    with pytest.raises(KeyError, match=r"models: 'rm3' is not in .*data \(known: rm2\)"):
        profiles.import_kairos(kairos, models=["rm3"])
    with pytest.raises(KeyError, match=r"instances: 'g4dn' is not in .*\(known: g4dn\.xlarge\)"):
        profiles.import_kairos(kairos, instances=["g4dn"])
    ribbon = tmp_path / "ribbon" / "characterization" / "logs" / "c5.4xlarge"
    ribbon.mkdir(parents=True)
    (ribbon / "resnet_10_1.json").write_text("[1.5, 2.5]")
    with pytest.raises(KeyError, match=r"models: 'resnet50' is not in .*\(known: resnet\)"):
        profiles.import_ribbon(tmp_path / "ribbon", models=["resnet50"])
    ramsis = ramsis_copy(tmp_path)
    with pytest.raises(KeyError, match=r"tasks: 'image' is not in .*\(known: image_cloud_cpu\)"):
        profiles.import_ramsis(ramsis, tasks=["image"])
    with pytest.raises(KeyError, match=r"models: 'resnet' is not in .*\(known: resnet18\)"):
        profiles.import_ramsis(ramsis, models=["resnet"])


def test_empty_repeated_or_bare_string_selections_are_errors(tmp_path):
    kairos = kairos_copy(tmp_path)
    with pytest.raises(ValueError, match=r"models=\[\] is empty; omit it \(None\) to import every"):
        profiles.import_kairos(kairos, models=[])
    with pytest.raises(ValueError, match=r"instances=\['g4dn.xlarge', 'g4dn.xlarge'\] names "):
        profiles.import_kairos(kairos, instances=["g4dn.xlarge", "g4dn.xlarge"])
    with pytest.raises(TypeError, match=r"models='rm2' must be a list of names, e.g. \['rm2'\]"):
        profiles.import_ribbon(kairos, models="rm2")
    with pytest.raises(ValueError, match=r"tasks=\[\] is empty"):
        profiles.import_ramsis(ramsis_copy(tmp_path), tasks=[])


def test_kairos_damaged_folders_are_errors_not_skipped(tmp_path):
    root = kairos_copy(tmp_path)
    data_file = root / "data" / "g4dn.xlarge" / "rm2_20_1.json"
    data_file.mkdir()
    with pytest.raises(IsADirectoryError, match=rf"^{data_file}: is a directory, expected a JSON"):
        profiles.import_kairos(root)
    data_file.rmdir()
    (root / "data" / "logs_load" / "t3.xlarge").mkdir()
    with pytest.raises(FileNotFoundError, match=rf"^{root / 'data' / 't3.xlarge'}: the instance "):
        profiles.import_kairos(root)
    (root / "data" / "logs_load" / "t3.xlarge").rmdir()
    (root / "instance.json").write_text('{"ins_types": ["g4dn.xlarge", "r5n.large"]}')
    with pytest.raises(FileNotFoundError, match=r"r5n\.large: the instance folder is missing .*"):
        profiles.import_kairos(root)
    (root / "instance.json").unlink()
    (root / "data" / "c5n.2xlarge").mkdir()
    with pytest.raises(ValueError, match=r"c5n\.2xlarge: holds no data files named like"):
        profiles.import_kairos(root)


def test_kairos_load_component_replaced_by_a_directory(tmp_path):
    root = kairos_copy(tmp_path)
    load = root / "data" / "logs_load" / "g4dn.xlarge" / "rm2_10_1.json"
    load.unlink()
    load.mkdir()
    with pytest.raises(IsADirectoryError, match=rf"^{load}: is a directory, expected a JSON list"):
        profiles.import_kairos(root)


def test_latency_beyond_the_simulators_clock_names_file_and_line(tmp_path):
    root = kairos_copy(tmp_path)
    bad = root / "data" / "g4dn.xlarge" / "rm2_10_1.json"
    bad.write_text("[\n    3.181,\n    1e300\n]")
    with pytest.raises(ValueError, match=rf"{bad}:3: element \[1\]=1e\+300 must be a finite"):
        profiles.import_kairos(root, include_load=False)


def test_ramsis_task_named_without_its_hardware_suffix():
    with pytest.raises(KeyError, match=r"'image' is not in .*known: image_cloud_cpu, text_cloud"):
        profiles.import_ramsis(shared_dir("ramsis"), tasks=["image"])


def test_ramsis_accuracy_mapping_names_an_unknown_model():
    with pytest.raises(KeyError, match=r"accuracy: model 'resnet999' is not in the imported"):
        profiles.import_ramsis(
            shared_dir("ramsis"),
            tasks=["image_cloud_cpu"],
            models=["resnet50"],
            accuracy={"resnet50": 0.8, "resnet999": 0.9},
        )


def test_csv_files_that_are_not_utf8_name_the_file_and_the_byte(tmp_path):
    from servelab.profiles.importers import read_price_csv

    path = tmp_path / "prices.csv"
    path.write_bytes(b"instance,price\nc5,\xff1.0\n")
    with pytest.raises(ValueError, match=r"prices.csv:2: not UTF-8 text \(byte 18\)"):
        read_price_csv(path)
