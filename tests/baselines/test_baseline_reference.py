"""The numpy reference trainer really trains: accuracy close to scikit-learn on separable data."""

from __future__ import annotations

import numpy as np
import pytest

from pimmodel.baselines import reference as ref


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    x, y = ref.make_dataset(6000, 32, "lr", seed=5)
    return x[:4800], y[:4800], x[4800:], y[4800:]


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", ["ma-sgd", "ga-sgd", "admm"])
def test_lr_accuracy_close_to_sklearn(data, optimizer: str) -> None:
    from sklearn.linear_model import LogisticRegression

    x, y, x_test, y_test = data
    config = ref.TrainConfig("lr", optimizer, batch_size=8, lr_shift=0, wd_shift=12, alpha_shift=4)
    wb = ref.train(x, y, config, epochs=5)
    ours = float((ref.predict_labels(wb, x_test, "lr") == y_test).mean())
    theirs = float(LogisticRegression(max_iter=2000).fit(x, y).score(x_test, y_test))
    assert theirs > 0.95
    assert ours > 0.9 and ours > theirs - 0.06


def test_svm_learns(data) -> None:
    x, y, x_test, y_test = data
    config = ref.TrainConfig("svm", "ma-sgd", batch_size=8, lr_shift=4, wd_shift=10)
    wb = ref.train(x, 2 * y - 1, config, epochs=5)
    assert (ref.predict_labels(wb, x_test, "svm") == 2 * y_test - 1).mean() > 0.9


def test_study_hyper_parameters_run(data) -> None:
    x, y, _, _ = data
    for model in ("lr", "svm"):
        for optimizer in ref.OPTIMIZERS:
            wb = ref.train(x, y if model == "lr" else 2 * y - 1, ref.study_config(model, optimizer), epochs=1)
            assert np.isfinite(wb).all() and np.abs(wb).sum() > 0


def test_admm_host_round_by_hand() -> None:
    # two processes, alpha/(p wd) = 2^-1 / (2 * 2^-1) = 0.5: v = mean w + mean u = [1.5, 0.25]
    config = ref.TrainConfig("lr", "admm", batch_size=1, lr_shift=0, wd_shift=1, alpha_shift=1)
    host = ref.AdmmHost(np.zeros((2, 2), np.float32))
    w = np.array([[1.0, 0.0], [2.0, 0.5]], np.float32)
    out = np.zeros((2, 2), np.float32)
    host.round(w, config, out)
    z = np.array([1.0, 0.0], np.float32)  # soft threshold at 0.5
    np.testing.assert_allclose(host.u, w - z)
    np.testing.assert_allclose(out, w - 2 * z)


def test_shards_cover_every_row() -> None:
    parts = [ref.shard_rows(1003, 4, r) for r in range(4)]
    assert parts[0].start == 0 and parts[-1].stop == 1003
    assert all(a.stop == b.start for a, b in zip(parts, parts[1:], strict=False))
    assert ref.steps_per_epoch(250, 8) == 31
