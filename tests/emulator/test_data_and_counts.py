"""svmlight loader, bad input, and trace counts vs the cost model's closed forms."""


import pytest
from support import run_emulation

from pimmodel.emulator.data import read_svmlight, read_svmlight_data, synthetic_sparse
from pimmodel.errors import DataError, PimModelError
from pimmodel.specs import HyperParams


def test_svmlight_reads(tmp_path) -> None:
    f = tmp_path / "a.svm"
    f.write_text("1 3:1 7:1\n-1 2:1 # comment\n\n+1 9:0.16\n")
    rows, y, top = read_svmlight(f)
    assert [r.tolist() for r in rows] == [[3, 7], [2], [9]] and y.tolist() == [1, 0, 1] and top == 10


@pytest.mark.parametrize("text,line", [("1 3:1\nfoo 2:1\n", 2), ("1 3:1 3:1\n", 1), ("1 a:1\n", 1), ("1 -4:1\n", 1)])
def test_svmlight_malformed_names_line(tmp_path, text, line) -> None:
    f = tmp_path / "bad.svm"
    f.write_text(text)
    with pytest.raises(DataError, match=f":{line}:"):
        read_svmlight(f)


def test_real_valued_svmlight_is_dense_and_binary_is_sparse(tmp_path) -> None:
    real = tmp_path / "real.svm"
    real.write_text("".join(f"{i % 2} 1:{0.9 if i % 2 else 0.1} 2:0.3\n" for i in range(80)))
    data = read_svmlight_data(real)
    assert not data.binary and data.dense()[1].tolist() == [0.0, 0.9, 0.3]
    hyper = HyperParams(4, 64, 1, 12)
    run = run_emulation(str(real), 1, "lr", "ma-sgd", hyper, epochs=2)
    assert run.history[-1]["train_accuracy"] == 1.0
    binary = tmp_path / "bin.svm"
    binary.write_text("".join(f"{i % 2} {1 + i % 2}:0.16013 5:0.16013\n" for i in range(80)))
    assert read_svmlight_data(binary).binary
    assert run_emulation(str(binary), 1, "lr", "ma-sgd", hyper, epochs=2).history[-1]["auc"] == 1.0


def test_real_valued_features_must_fit_q131(tmp_path) -> None:
    f = tmp_path / "range.svm"
    f.write_text("".join(f"{i % 2} 1:1.5 2:0.3\n" for i in range(80)))
    with pytest.raises(DataError, match="outside \\[0, 1\\]"):
        run_emulation(str(f), 1, "lr", "ma-sgd", HyperParams(4, 64, 1, 12))


def test_non_binary_labels(tmp_path) -> None:
    f = tmp_path / "l.svm"
    f.write_text("1 3:1\n2 4:1\n3 5:1\n")
    with pytest.raises(DataError, match="binary"):
        read_svmlight(f)


def test_missing_file() -> None:
    with pytest.raises(PimModelError):
        read_svmlight("/nonexistent/file.svm")


def test_synthetic_criteo_statistics() -> None:
    idx, y = synthetic_sparse(20_000, 1_000_000, seed=1)
    assert idx.shape == (20_000, 39) and idx.min() >= 1 and idx.max() < 1_000_000
    assert all(len(set(r)) == 39 for r in idx[:200].tolist())
    assert abs(y.mean() - 0.0342) < 0.005


CASES = [(ds, m, o) for ds in ("synthetic-yfcc", "synthetic-criteo") for m in ("lr", "svm")
         for o in ("ma-sgd", "ga-sgd", "admm")]


@pytest.mark.parametrize("dataset,model,optimizer", CASES)
def test_host_bytes_and_rounds_equal_cost_model(dataset, model, optimizer) -> None:
    dense = dataset == "synthetic-yfcc"
    hyper = HyperParams(batch_size=8 if dense else 256, global_batch_size=64 if dense else 2048,
                        learning_rate_shift=4, reg_shift=10, admm_alpha_shift=4)
    res = run_emulation(dataset, 8, model, optimizer, hyper, epochs=1, samples_per_dpu=32 if dense else 512,
                  features=2048 if dense else 20_000)
    pred, tr = res.predicted, res.trace
    assert pred is not None
    assert tr["rounds"] == pred["rounds_per_epoch"]
    assert tr["host_to_pim"]["bytes"] == pred["per_epoch_bytes"]["host_to_pim"]
    assert tr["pim_to_host"]["bytes"] == pred["per_epoch_bytes"]["pim_to_host"]
    for phase in ("host_to_pim", "pim_to_host", "launch"):
        assert tr["seconds"]["wall"][phase] == pytest.approx(pred["per_epoch_s"][phase], rel=1e-9)
