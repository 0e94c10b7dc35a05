"""Metrics of a decoded model: accuracy, loss (log-loss or the study's hinge with margin 0.5), ROC AUC."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from . import fixedpoint as fx
from .lut import sigmoid

HINGE_MARGIN = 0.5
"""The study's float post-processing and baselines use max(0, 0.5 - y z)."""


def decision(x: NDArray, layout: str, coef: NDArray[np.float64], intercept: float, chunk: int = 4096
             ) -> NDArray[np.float64]:
    """z = x . w + b for Q1.31 dense rows (n, d) or ELL index rows (n, z)."""
    out = np.empty(x.shape[0], np.float64)
    w = np.zeros(max(coef.size, x.shape[1] if layout == "dense" else 0))
    w[: coef.size] = coef
    for lo in range(0, x.shape[0], chunk):
        part = x[lo:lo + chunk]
        if layout == "dense":
            out[lo:lo + chunk] = (part.astype(np.float64) / fx.ONE) @ w[: part.shape[1]]
        else:
            out[lo:lo + chunk] = w[part].sum(axis=1)
    return out + intercept


def roc_auc(y: NDArray, score: NDArray[np.float64]) -> float:
    """Mann-Whitney AUC with tied scores averaged; NaN when only one class is present."""
    y = np.asarray(y).astype(bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    s = score[order]
    ranks = np.empty(s.size, np.float64)
    start = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    end = np.r_[start[1:], s.size]
    avg = (start + end + 1) / 2.0
    ranks[order] = np.repeat(avg, end - start)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def evaluate(z: NDArray[np.float64], y: NDArray, model: str) -> dict[str, float]:
    """Accuracy with what it should be read against (the majority-class baseline: the accuracy of always
    predicting the commoner class; the predicted-positive rate), the model's loss, and ROC AUC."""
    yb = np.asarray(y).astype(bool)
    acc = float(((z > 0) == yb).mean())
    majority = float(max(yb.mean(), 1.0 - yb.mean()))
    if model == "lr":
        p = np.clip(sigmoid(z), 1e-15, 1 - 1e-15)
        loss = float(-(yb * np.log(p) + (~yb) * np.log(1 - p)).mean())
    else:
        loss = float(np.maximum(0.0, HINGE_MARGIN - np.where(yb, 1.0, -1.0) * z).mean())
    return {"accuracy": acc, "majority_baseline": majority, "positive_rate": float((z > 0).mean()), "loss": loss,
            "auc": roc_auc(yb, z)}
