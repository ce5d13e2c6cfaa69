"""Recommendation models: every model on the reference and oneDNN backends agrees, and agrees with
the same model rebuilt in torch from the exported weights; inputs and weights are deterministic."""

import threading

import numpy as np
import pytest

import servelab
from servelab import recsys

from .conftest import skip_unless_usable

SCALE = 1e-4  # tables of a few hundred to a thousand rows: fast, still every code path
MODELS = recsys.list_models()


def test_the_catalogue_lists_every_model():
    assert MODELS == ["rm1", "rm2", "rm3", "wnd", "mtwnd", "ncf", "din", "dien"]
    rm2 = recsys.spec("rm2", scale=1.0)
    assert rm2.dim == 64 and len(rm2.tables) == 32 and rm2.tables[0][1] == 500_000
    assert rm2.lookups_per_sample == 32 * 120
    assert recsys.spec("din").sequence_op == "attention"
    assert recsys.spec("dien").sequence_op == "gru_attention"
    assert recsys.spec("rm1", interaction="dot").interaction == "dot"


def test_mtwnd_has_deeprecsys_task_mlp():
    # DeepRecSys models/multi_task_wnd.py with mtwnd.json: the shared MLP 1888 -> 1024-512 (ReLU
    # after its last layer), then num_multi_tasks (1 by default) task MLPs 512 -> 256 -> 128 with
    # a sigmoid after the last.
    mtwnd = recsys.spec("mtwnd", scale=1.0)
    assert mtwnd.interaction_width == 512 + 43 * 32 and mtwnd.top == [1024, 512]
    assert mtwnd.tasks == [[256, 128]] and mtwnd.outputs == 128
    shared = 1888 * 1024 + 1024 * 512
    assert mtwnd.mlp_macs_per_sample == shared + 512 * 256 + 256 * 128
    model = recsys.build("mtwnd", backend="reference", scale=SCALE, seed=3)
    weights = model.export_weights()
    assert weights["task0.0.weight"].shape == (256, 512)
    assert weights["task0.1.weight"].shape == (128, 256) and "task1.0.weight" not in weights
    dense, sparse = model.inputs(4, seed=5)
    out = model.run(dense, sparse)
    # By hand: sigmoid(task(relu(top(cat(dense, bags))))).
    rows = [weights[f"tables.{t}"][sparse[:, t]] for t in range(43)]
    x = np.concatenate([dense, *rows], axis=1).astype(np.float64)
    for layer in range(2):
        x = np.maximum(x @ weights[f"top.{layer}.weight"].T + weights[f"top.{layer}.bias"], 0)
    x = np.maximum(x @ weights["task0.0.weight"].T + weights["task0.0.bias"], 0)
    want = 1 / (1 + np.exp(-(x @ weights["task0.1.weight"].T + weights["task0.1.bias"])))
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-6)


def test_ncf_has_deeprecsys_gmf_branch_and_mlp_tower():
    # DeepRecSys models/ncf.py with ncf.json: tables 0-1 feed GMF (element-wise), tables 2-3 the
    # tower 128-256-256-128-64, the final layer [64 GMF + 64 tower] -> 64; no dense feature read.
    ncf = recsys.spec("ncf", scale=1.0)
    assert [rows for _, rows in ncf.tables] == [140_000, 140_000, 28_000, 28_000]
    assert ncf.gmf == [0, 1] and ncf.dim == 64
    assert ncf.interaction_width == 2 * 64 and ncf.top == [256, 256, 128, 64]
    assert ncf.predict == [64] and ncf.outputs == 64
    tower = 128 * 256 + 256 * 256 + 256 * 128 + 128 * 64
    assert ncf.mlp_macs_per_sample == tower + 64 + 128 * 64
    model = recsys.build("ncf", backend="reference", scale=SCALE, seed=3)
    weights = model.export_weights()
    assert weights["predict.0.weight"].shape == (64, 128) and "bottom.0.weight" not in weights
    dense, sparse = model.inputs(6, seed=4)
    out = model.run(dense, sparse)
    # The dense column is read by no layer; the GMF features change the output.
    np.testing.assert_array_equal(model.run(dense + 1.0, sparse), out)
    other = sparse.copy()
    other[:, 0] = (other[:, 0] + 1) % model.spec.tables[0][1]
    assert not np.array_equal(model.run(dense, other), out)
    # By hand from the weights: relu(W_p [u_mf * i_mf, tower(u_mlp, i_mlp)] + b_p).
    rows = [weights[f"tables.{t}"][sparse[:, t]] for t in range(4)]
    x = np.concatenate([rows[2], rows[3]], axis=1).astype(np.float64)
    for layer in range(4):
        x = np.maximum(x @ weights[f"top.{layer}.weight"].T + weights[f"top.{layer}.bias"], 0)
    joined = np.concatenate([rows[0] * rows[1], x], axis=1)
    want = np.maximum(joined @ weights["predict.0.weight"].T + weights["predict.0.bias"], 0)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-6)


@pytest.fixture(params=MODELS)
def reference_model(request):
    return recsys.build(request.param, backend="reference", scale=SCALE, seed=3)


def test_outputs_are_probabilities_of_the_right_shape(reference_model):
    dense, sparse = reference_model.inputs(5, seed=1)
    out = reference_model.run(dense, sparse)
    spec = reference_model.spec
    assert out.shape == (5, spec.outputs) and out.dtype == np.float32
    if spec.predict:  # NCF: DeepRecSys's final layer, 64 ReLU units
        assert np.all(out >= 0) and np.any(out > 0)
    else:
        assert np.all((out > 0) & (out < 1))
    if spec.outputs == 2:  # DIN, DIEN: softmax over two classes
        np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-6)
    timed, stages = reference_model.run_timed(dense, sparse)
    np.testing.assert_array_equal(timed, out)
    assert 0 < stages["gather_s"] + stages["mlp_s"] <= stages["total_s"]


def test_onednn_matches_the_reference(reference_model):
    skip_unless_usable("onednn")
    onednn = recsys.from_weights(
        reference_model.spec, reference_model.export_weights(), backend="onednn"
    )
    assert onednn.backend == "onednn" and onednn.supports_threads
    dense, sparse = reference_model.inputs(np.arange(100, 117), seed=2, distribution="zipf")
    want = reference_model.run(dense, sparse)
    np.testing.assert_allclose(onednn.run(dense, sparse), want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(onednn.run(dense, sparse, threads=2), want, rtol=1e-4, atol=1e-6)


def test_torch_rebuilt_from_the_export_matches(reference_model):
    torch = pytest.importorskip(
        "torch", reason="torch is not installed: the torch rebuild cannot be checked"
    )
    module = reference_model.to_torch()
    dense, sparse = reference_model.inputs(9, seed=4, distribution="zipf:1.2")
    with torch.no_grad():
        want = module(torch.from_numpy(dense), torch.from_numpy(sparse)).numpy()
    np.testing.assert_allclose(reference_model.run(dense, sparse), want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["rm2", "din", "dien"])
def test_onednn_scores_alike_on_one_and_two_threads_at_a_large_batch(name):
    # Batch 300 is big enough for the oneDNN backend to split the gather and (DIN, DIEN) the
    # attention over two threads, each thread a slice of the samples; only oneDNN's own
    # multiplies may round differently on two threads.
    skip_unless_usable("onednn")
    model = recsys.build(name, backend="onednn", scale=0.002, seed=0)
    dense, sparse = model.inputs(300, seed=1)
    one = model.run(dense, sparse, 1)
    np.testing.assert_allclose(model.run(dense, sparse, 2), one, rtol=1e-5, atol=1e-7)
    reference = recsys.from_weights(model.spec, model.export_weights(), backend="reference")
    np.testing.assert_allclose(one, reference.run(dense, sparse), rtol=1e-4, atol=1e-6)


def test_dot_interaction_matches_torch():
    torch = pytest.importorskip(
        "torch", reason="torch is not installed: the torch rebuild cannot be checked"
    )
    model = recsys.build("rm2", scale=SCALE, seed=1, interaction="dot")
    dense, sparse = model.inputs(6)
    with torch.no_grad():
        want = model.to_torch()(torch.from_numpy(dense), torch.from_numpy(sparse)).numpy()
    np.testing.assert_allclose(model.run(dense, sparse), want, rtol=1e-4, atol=1e-6)


def test_same_seed_same_model_and_inputs(tmp_path):
    a = recsys.build("dien", scale=SCALE, seed=7)
    b = recsys.build("dien", scale=SCALE, seed=7)
    c = recsys.build("dien", scale=SCALE, seed=8)
    wa, wb, wc = a.export_weights(), b.export_weights(), c.export_weights()
    assert wa.keys() == wb.keys()
    assert all(np.array_equal(wa[k], wb[k]) for k in wa)
    assert not np.array_equal(wa["tables.0"], wc["tables.0"])
    assert wa["gru.weight_ih"].shape == (96, 32)
    # Query 12's row is the same alone or in a batch; another seed gives other inputs.
    d1, s1 = a.inputs([3, 12], seed=5)
    d2, s2 = a.inputs([12], seed=5)
    np.testing.assert_array_equal(d1[1], d2[0])
    np.testing.assert_array_equal(s1[1], s2[0])
    assert not np.array_equal(a.inputs([12], seed=6)[1], s2)
    # Weights survive a numpy file round trip.
    np.savez(tmp_path / "w.npz", **wa)
    with np.load(tmp_path / "w.npz") as stored:
        again = recsys.from_weights("dien", dict(stored), scale=SCALE)
    np.testing.assert_array_equal(again.run(d1, s1), a.run(d1, s1))


def test_zipf_inputs_are_skewed():
    model = recsys.build("wnd", scale=1e-3)
    _, uniform = model.inputs(2000, seed=1)
    _, skewed = model.inputs(2000, seed=1, distribution="zipf:1.2")
    top_share = lambda column: np.bincount(column).max() / column.size  # noqa: E731
    assert top_share(skewed[:, 0]) > 5 * top_share(uniform[:, 0])
    # One distribution per table.
    per_table = ["uniform"] * 26 + ["zipf"]
    _, mixed = model.inputs(2000, seed=1, distribution=per_table)
    np.testing.assert_array_equal(mixed[:, 0], uniform[:, 0])


def test_served_batch_rows_follow_the_query_sizes():
    gen = recsys.generator("rm1", seed=2, scale=SCALE)
    dense, sparse = gen.batch(np.array([4, 9]), np.array([2, 3]))
    assert dense.shape[0] == sparse.shape[0] == 5
    alone = gen.queries(np.array([9]))
    np.testing.assert_array_equal(sparse[2], alone[1][0])


def test_bad_input_names_the_model_and_the_value():
    with pytest.raises(KeyError, match="rm9"):
        recsys.build("rm9")
    with pytest.raises(KeyError, match="tpu"):
        recsys.build("rm1", backend="tpu", scale=SCALE)
    with pytest.raises(ValueError, match="scale=0"):
        recsys.build("rm1", scale=0)
    with pytest.raises(ValueError, match="dot"):
        recsys.build("wnd", scale=SCALE, interaction="dot")
    model = recsys.build("rm3", scale=SCALE)
    dense, sparse = model.inputs(3)
    with pytest.raises(ValueError, match=r"rm3: threads=100000 must be in \[0, 1024\]"):
        model.run(dense, sparse, threads=100000)
    with pytest.raises(ValueError, match=r"rm3: dense has 2559 columns, the model takes 2560"):
        model.run(dense[:, 1:], sparse)
    with pytest.raises(ValueError, match=r"rm3: sparse has 199 columns"):
        model.run(dense, sparse[:, 1:])
    bad = sparse.copy()
    bad[1, 7] = 10**9
    with pytest.raises(
        ValueError, match=r"rm3: sparse\[1, 7\]=1000000000 is out of range .* 200 rows"
    ):
        model.run(dense, bad)
    bad[1, 7] = -3
    with pytest.raises(ValueError, match=r"=-3 is out of range"):
        model.run(dense, bad)
    with pytest.raises(ValueError, match="dense must be 2-D"):
        model.run(dense[0], sparse)
    with pytest.raises(ValueError, match="threads"):
        model.run(dense, sparse, threads=-1)
    with pytest.raises(MemoryError, match="batch=1000000000000"):
        model.inputs(10**12)
    with pytest.raises(MemoryError, match="batch=2147483647"):
        recsys.generator(model.spec).batch(np.array([0]), np.array([2**31 - 1]))
    with pytest.raises(ValueError, match="count=0"):
        model.inputs(0)
    with pytest.raises(ValueError, match="distribution='pareto'"):
        model.inputs(3, distribution="pareto")
    weights = model.export_weights()
    del weights["top.0.bias"]
    with pytest.raises(KeyError, match="top.0.bias"):
        recsys.from_weights("rm3", weights, scale=SCALE)
    weights = model.export_weights()
    weights["tables.0"] = weights["tables.0"][:-1]
    with pytest.raises(
        ValueError, match=r"weights\['tables.0'\] has shape \(199, 32\), expected \(200, 32\)"
    ):
        recsys.from_weights("rm3", weights, scale=SCALE)


@pytest.mark.parametrize("name", MODELS)
def test_cuda_matches_the_reference(name):
    skip_unless_usable("cuda")
    model = recsys.build(name, backend="cuda", scale=SCALE, seed=2)
    reference = recsys.from_weights(model.spec, model.export_weights())
    # 400 rows of rm2 are 12 MB of indices: copied from numpy's memory rather than staged.
    for batch in (1, 33, 400):
        dense, sparse = reference.inputs(np.arange(batch) + batch, distribution="zipf")
        np.testing.assert_allclose(
            model.run(dense, sparse),
            reference.run(dense, sparse),
            rtol=1e-4,
            atol=1e-5,
            err_msg=f"batch={batch}",
        )


@pytest.mark.parametrize("name", ["rm1", "rm3"])
def test_cuda_matches_the_reference_with_the_dot_interaction(name):
    skip_unless_usable("cuda")
    model = recsys.build(name, backend="cuda", scale=SCALE, seed=3, interaction="dot")
    reference = recsys.from_weights(model.spec, model.export_weights())
    dense, sparse = reference.inputs(17, distribution="zipf")
    np.testing.assert_allclose(
        model.run(dense, sparse), reference.run(dense, sparse), rtol=1e-4, atol=1e-5
    )


def test_cuda_names_an_index_out_of_range_and_keeps_working():
    skip_unless_usable("cuda")
    model = recsys.build("rm3", backend="cuda", scale=SCALE)
    dense, sparse = model.inputs(3)
    good = model.run(dense, sparse)
    bad = sparse.copy()
    for value, shown in ((10**9, "1000000000"), (-3, "-3")):
        bad[1, 7] = value
        with pytest.raises(
            ValueError, match=rf"rm3: sparse\[1, 7\]={shown} is out of range .* 200 rows"
        ):
            model.run(dense, bad)
    np.testing.assert_array_equal(model.run(dense, sparse), good)


def test_cuda_stage_times_are_within_the_total():
    skip_unless_usable("cuda")
    model = recsys.build("rm2", backend="cuda", scale=SCALE, seed=1)
    dense, sparse = model.inputs(64)
    scores, stages = model.run_timed(dense, sparse)
    np.testing.assert_array_equal(scores, model.run(dense, sparse))
    assert stages["gather_s"] > 0 and stages["mlp_s"] > 0
    assert stages["gather_s"] + stages["mlp_s"] <= stages["total_s"]


def test_cuda_backend_says_why_it_is_not_usable():
    status = servelab.backends.status("cuda")
    if status.usable:
        pytest.skip("a GPU is usable here: test_cuda_matches_the_reference runs instead")
    with pytest.raises(RuntimeError, match="(?i)cuda"):
        recsys.build("ncf", backend="cuda", scale=SCALE)


@pytest.mark.parametrize("backend", ["reference", "onednn"])
def test_concurrent_python_threads_agree(backend):
    if backend != "reference":
        skip_unless_usable(backend)
    model = recsys.build("din", backend=backend, scale=SCALE, seed=1)
    batches = [model.inputs(np.arange(i * 8, i * 8 + 8), seed=2) for i in range(4)]
    expected = [model.run(d, s) for d, s in batches]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(5):
                got = model.run(*batches[i], threads=1)
                np.testing.assert_allclose(got, expected[i], rtol=1e-6, atol=1e-7)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
