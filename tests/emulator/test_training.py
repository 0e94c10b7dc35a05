"""Training: fixed point vs scikit-learn on breast cancer; float64 mode vs an independent reference."""

import numpy as np
import pytest
from support import train_config

from pimmodel.emulator.data import shard
from pimmodel.emulator.trainers import train


@pytest.fixture(scope="module")
def cancer():
    # scikit-learn loads when the tests run, not at collection
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import MinMaxScaler

    x, y = load_breast_cancer(return_X_y=True)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)
    sc = MinMaxScaler().fit(xtr)
    return sc.transform(xtr), np.clip(sc.transform(xte), 0, 1), ytr, yte


HYPER = {"lr": dict(learning_rate_shift=4, reg_shift=12), "svm": dict(learning_rate_shift=4, reg_shift=12)}
OPT = {"ma-sgd": dict(batch_size=8), "ga-sgd": dict(global_batch_size=32), "admm": dict(batch_size=8, alpha_shift=4)}
"""A step of 2^-4 on batches of 8 rows per DPU (32 per round), 20 epochs: enough to converge on 426 rows over 4
DPUs (shards of 107 and 106 rows, so a partial last batch), and small enough that where an epoch ends in SGD's
noise does not decide the comparison (a step of 1/2 on batches of 2 ends each epoch at a different point of a
limit cycle, in float64 as well). LR's ceiling is Q31's: weights and the bias saturate at +-1."""


@pytest.mark.parametrize("optimizer", ["ma-sgd", "ga-sgd", "admm"])
@pytest.mark.parametrize("model", ["lr", "svm"])
def test_fixed_point_close_to_sklearn(cancer, model, optimizer) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    from pimmodel.emulator.estimator import PimLogisticRegression, PimSVM  # imports scikit-learn

    xtr, xte, ytr, yte = cancer
    ref = (LogisticRegression(max_iter=5000) if model == "lr" else LinearSVC()).fit(xtr, ytr).score(xte, yte)
    params = {**HYPER[model], **OPT[optimizer]}
    if (model, optimizer) == ("svm", "admm"):  # the artifact's SVM consensus z = v 2^-r / (2^a + N 2^-r) ~ 0
        params.update(reg_shift=8, alpha_shift=8)  # at r = 12: a larger 2^-r keeps it off zero
    est = (PimLogisticRegression if model == "lr" else PimSVM)(optimizer=optimizer, n_dpus=4, epochs=20, **params)
    assert est.fit(xtr, ytr) is est
    assert est.score(xte, yte) >= ref - 0.03
    assert len(est.history_) == 20 and est.trace_.launches > 0


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def reference(parts, model, optimizer, b, lr, r, alpha, epochs):
    """Independent plain-loop float64 implementation of the three optimizers (dense layout). ``parts``: each
    DPU's (x, y) rows; shards may differ by a row, so every DPU makes ceil(longest / b) steps and a short (or
    empty) last batch is still divided by b, as the kernels' shift divides it."""
    n = len(parts)
    d = parts[0][0].shape[1]
    eta, decay = 2.0**-lr, 2.0 ** -(lr + r)

    def grad(w, bias, xb, yb):
        z = xb @ w + bias
        if model == "lr":
            c = eta * (_sigmoid(z) - yb)
        else:
            s = np.where(yb == 1, 1.0, -1.0)
            c = -eta * s * (s * z < 2.0**-15)
        return c @ xb, c.sum()

    w, bias = np.zeros(d), 0.0
    wl, bl, u = np.zeros((n, d)), np.zeros(n), np.zeros((n, d))
    c_ = np.zeros_like(u)
    longest = max(len(yk) for _, yk in parts)
    for _ in range(epochs):
        if optimizer == "admm":
            for k, (xk, yk) in enumerate(parts):
                for s in range(-(-longest // b)):
                    g, gb = grad(wl[k], bl[k], xk[s * b:(s + 1) * b], yk[s * b:(s + 1) * b])
                    wl[k] = wl[k] - g / b - decay * (wl[k] + c_[k])
                    bl[k] -= gb / b
            wm, um = wl.mean(0), u.mean(0)
            v = wm + um
            kappa = 2.0 ** (alpha - r) / n
            svm_z = v * 2.0**-r / (2.0**alpha + n * 2.0**-r)
            z = np.sign(v) * np.maximum(np.abs(v) - kappa, 0) if model == "lr" else svm_z
            u = u + wl - z
            c_ = u - z
            w, bias = wm, bl.mean()
            continue
        bb = b if optimizer == "ma-sgd" else b // n
        for s in range(-(-longest // bb)):
            res = [grad(w, bias, xk[s * bb:(s + 1) * bb], yk[s * bb:(s + 1) * bb]) for xk, yk in parts]
            if optimizer == "ma-sgd":
                w, bias = (np.mean([w - g / bb - decay * w for g, _ in res], axis=0),
                           np.mean([bias - gb / bb for _, gb in res]))
            else:
                w, bias = w - sum(g for g, _ in res) / b - decay * w, bias - sum(gb for _, gb in res) / b
    return w, bias


@pytest.mark.parametrize("optimizer", ["ma-sgd", "ga-sgd", "admm"])
@pytest.mark.parametrize("model", ["lr", "svm"])
def test_float64_matches_reference(cancer, model, optimizer) -> None:
    xtr, _, ytr, _ = cancer
    n, b = 4, (16 if optimizer == "ga-sgd" else 4)
    sh = shard(np.floor(np.clip(xtr, 0, 1) * 2**31).astype(np.uint32), ytr, n, "dense", xtr.shape[1], 2048)
    cfg = train_config(model=model, optimizer=optimizer, batch_size=b, global_batch_size=b, learning_rate_shift=2,
                       reg_shift=6, alpha_shift=2, epochs=2, arithmetic="float64")
    res = train(sh, cfg)
    assert sh.counts is not None and len(set(sh.counts.tolist())) == 2  # 426 rows: shards of 107 and 106 rows
    xq = sh.x[:, :, : xtr.shape[1]] / 2**31
    parts = [(xq[k, :count], sh.y[k, :count]) for k, count in enumerate(sh.counts)]
    w, bias = reference(parts, model, optimizer, b, 2, 6, 2, 2)
    np.testing.assert_allclose(res.weights.coef[: xtr.shape[1]], w, atol=1e-9, rtol=0)
    assert abs(res.weights.intercept - bias) < 1e-9
