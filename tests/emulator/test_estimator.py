"""The estimators are scikit-learn estimators: its checks, clone, cross-validation, arbitrary binary labels, sparse
binary input, one-line parameter errors; and ``import pimmodel`` / ``pimmodel predict`` never load scikit-learn.

scikit-learn is imported inside the tests (collection stays cheap)."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

from pimmodel.errors import PimModelError

RANGE = "draws features outside [0, 1]; the kernels take unsigned Q1.31 features (this check passes through a " \
        "MinMaxScaler(clip=True) pipeline, test_checks_through_a_unit_scaler)"
OUT_OF_RANGE = re.compile(r"outside \[0, 1\]|Negative values in data")
EXPECTED = {
    **{name: RANGE for name in (
        "check_classifier_data_not_an_array", "check_classifiers_classes", "check_classifiers_train",
        "check_decision_proba_consistency", "check_dict_unchanged", "check_dont_overwrite_parameters",
        "check_estimators_dtypes", "check_estimators_fit_returns_self", "check_estimators_overwrite_params",
        "check_estimators_pickle", "check_f_contiguous_array_estimator", "check_fit2d_1feature",
        "check_fit2d_predict1d", "check_fit_check_is_fitted", "check_fit_idempotent",
        "check_methods_sample_order_invariance", "check_methods_subset_invariance", "check_n_features_in",
        "check_n_features_in_after_fitting", "check_pipeline_consistency", "check_readonly_memmap_input")},
    "check_estimator_sparse_tag": "fits sparse data of real values and three classes: sparse input takes the "
                                  "binary kernels (one value everywhere), and the estimators separate two classes",
}
"""Every check of ``check_estimator`` that cannot apply, with why."""
PIPELINE_EXPECTED = {
    "check_estimators_overwrite_params": "Pipeline's own: its steps hold the fitted estimator (LogisticRegression "
                                         "in the same pipeline fails it too)",
    "check_dont_overwrite_parameters": "Pipeline's own, as above",
}


def _estimators():
    from pimmodel.emulator.estimator import PimLogisticRegression, PimSVM

    return {"lr": PimLogisticRegression, "svm": PimSVM}


def _run_checks(estimator, expected: dict[str, str]) -> list[dict]:
    """``check_estimator``'s results; every failure must be an expected one."""
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the study's kernels warn about features equal to 1.0
        results = check_estimator(estimator, on_fail=None)
    failed = [r for r in results if r["status"] == "failed"]
    unexpected = [f"{r['check_name']}: {r['exception']!r}"[:300] for r in failed if r["check_name"] not in expected]
    assert not unexpected, "\n".join(unexpected)
    return failed


@pytest.mark.parametrize("model", ["lr", "svm"])
def test_check_estimator(model: str) -> None:
    failed = _run_checks(_estimators()[model](n_dpus=2), EXPECTED)
    for r in failed:  # the range failures fail for that reason, not another
        if EXPECTED[r["check_name"]] == RANGE:
            assert OUT_OF_RANGE.search(str(r["exception"])), f"{r['check_name']}: {r['exception']!r}"
            assert isinstance(r["exception"], PimModelError | AssertionError)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["lr", "svm"])
def test_checks_through_a_unit_scaler(model: str) -> None:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler

    _run_checks(make_pipeline(MinMaxScaler(clip=True), _estimators()[model](n_dpus=2)), PIPELINE_EXPECTED)


@pytest.fixture(scope="module")
def blobs():
    """Two classes around 0.5, three features up for one class and down for the other: separable with a small
    intercept, which plain SGD reaches in a few epochs."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 240)
    sign = np.array([1, 1, 1, -1, -1, -1])
    return np.clip(0.5 + 0.2 * (2 * y[:, None] - 1) * sign + rng.normal(0, 0.12, (240, 6)), 0, 1), y


def test_clone_and_cross_val_score(blobs) -> None:
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    est = _estimators()["lr"](n_dpus=4, learning_rate_shift=3, epochs=5, optimizer="ga-sgd")
    twin = clone(est)
    assert twin.get_params() == est.get_params() and twin is not est
    scores = cross_val_score(est, *blobs, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.9
    assert not hasattr(est, "coef_")  # cross-validation fits clones


@pytest.mark.parametrize("model", ["lr", "svm"])
def test_any_two_labels(blobs, model: str) -> None:
    x, y = blobs
    names = np.array(["ham", "spam"])[y]
    est = _estimators()[model](n_dpus=4, learning_rate_shift=3, epochs=5).fit(x, names)
    assert list(est.classes_) == ["ham", "spam"] and est.n_features_in_ == 6
    predicted = est.predict(x)
    assert set(predicted) <= {"ham", "spam"} and np.mean(predicted == names) > 0.9
    assert np.array_equal(predicted == "spam", est.decision_function(x) > 0)
    signed = _estimators()[model](n_dpus=4, learning_rate_shift=3, epochs=5).fit(x, 2 * y - 1)
    assert list(signed.classes_) == [-1, 1] and set(signed.predict(x)) <= {-1, 1}
    assert est.coef_ == pytest.approx(_estimators()[model](n_dpus=4, learning_rate_shift=3, epochs=5)
                                      .fit(x, y).coef_)  # the positive class is classes_[1] either way


def test_predict_proba(blobs) -> None:
    x, y = blobs
    est = _estimators()["lr"](n_dpus=4, learning_rate_shift=3, epochs=3).fit(x, y)
    p = est.predict_proba(x)
    assert p.shape == (x.shape[0], 2) and np.allclose(p.sum(axis=1), 1.0)
    assert np.array_equal(est.classes_[p.argmax(axis=1)], est.predict(x))
    assert not hasattr(_estimators()["svm"](), "predict_proba")


def test_fitted_attributes_describe_the_run(blobs) -> None:
    import pimmodel

    x, y = blobs
    est = _estimators()["svm"](n_dpus=5, epochs=2, kernels="corrected").fit(x[:238], y[:238])  # shards 48 and 47
    assert est.hyperparams_.batch_size & (est.hyperparams_.batch_size - 1) == 0
    assert est.workload_.dpus == 5 and est.workload_.rows_per_dpu == 48 and len(est.history_) == 2
    assert est.emulated_s_ > 0 and est.trace_.launches > 0 and est.layout_ == "dense"
    predicted = pimmodel.predict(est.workload_, est.hardware)  # the cost model's time of the same run
    assert predicted.total_s > 0


def test_sparse_binary_input() -> None:
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 400)
    dense = (rng.random((400, 60)) < 0.08).astype(np.float64)
    dense[:, :4] = np.where(y[:, None] == 1, rng.random((400, 4)) < 0.9, rng.random((400, 4)) < 0.05)
    x = sp.csr_matrix(dense)
    est = _estimators()["lr"](n_dpus=4, learning_rate_shift=2, epochs=4, kernels="corrected").fit(x, y)
    assert est.layout_ == "sparse" and est.coef_.shape == (60,)
    assert np.allclose(est.decision_function(x), est.decision_function(dense))
    assert est.score(x, y) > 0.9
    with pytest.raises(PimModelError, match="every stored value must be the same"):
        _estimators()["lr"](n_dpus=4).fit(x.multiply(rng.random((400, 60))).tocsr(), y)
    with pytest.raises(PimModelError, match="holds 39 per row"):
        _estimators()["lr"](n_dpus=4).fit(sp.csr_matrix(np.ones((8, 40))), np.arange(8) % 2)


@pytest.mark.parametrize(("params", "message"), [
    ({"optimizer": "sgd"}, "optimizer='sgd' is not one of"),
    ({"n_dpus": 0}, "n_dpus=0 must be a whole number >= 1"),
    ({"batch_size": 6}, "batch_size=6 must be a power of two"),
    ({"learning_rate_shift": 70}, r"learning_rate_shift=70 must be a whole number in \[0, 62\]"),
    ({"svm_margin": 2.0}, r"svm_margin=2.0 must be in \(0, 1\]"),
    ({"class_weights": (1.0, -1.0)}, "class_weights"),
    ({"kernels": "fast"}, "kernels='fast' is not one of"),
    ({"hardware": "upmem-9999"}, "unknown hardware"),
    ({"n_dpus": 500}, "cannot feed 500 DPUs"),
    ({"global_batch_size": 30, "optimizer": "ga-sgd"}, "global_batch_size 30 is not a multiple of n_dpus 4"),
])
def test_parameter_errors_are_one_line(blobs, params: dict, message: str) -> None:
    est = _estimators()["lr"](**{"n_dpus": 4, **params})
    with pytest.raises(PimModelError, match=message) as info:
        est.fit(*blobs)
    assert "\n" not in str(info.value)


def test_data_errors_are_one_line_value_errors(blobs) -> None:
    x, y = blobs
    est = _estimators()["lr"](n_dpus=4)
    for bad_x, bad_y, message in ((x * 2, y, r"outside \[0, 1\]"), (x - 0.5, y, "Negative values"),
                                  (x, y % 3 + (y == 0) * np.arange(y.size) % 3, "Only binary classification"),
                                  (x, np.zeros_like(y), "one class")):
        with pytest.raises(ValueError, match=message) as info:
            est.fit(bad_x, bad_y)
        assert isinstance(info.value, PimModelError) and "\n" not in str(info.value)
        assert not hasattr(est, "classes_") and not hasattr(est, "coef_")  # a failed fit leaves no fitted model


@pytest.mark.slow
def test_no_scikit_learn_without_the_estimators() -> None:
    code = ("import sys, pimmodel, pimmodel.emulator, pimmodel.api\n"
            "from pimmodel.cli.app import app\n"
            "app(['predict', '--json'], standalone_mode=False)\n"
            "assert 'sklearn' not in sys.modules, 'sklearn imported'\n"
            "assert 'pandas' not in sys.modules and 'matplotlib' not in sys.modules, 'pandas/matplotlib imported'\n"
            "pimmodel.emulator.PimSVM\n"
            "assert 'sklearn' in sys.modules\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
