"""The fit recovers known coefficients from synthetic traces generated with them (within 3 standard errors).

Synthetic traces: the cost model's own phases at known coefficients, times independent 0.5 % Gaussian
noise per phase; no emulator involved. The standard errors must also be honest: small, but not zero.
"""

from __future__ import annotations

import numpy as np
import pytest

from pimmodel.calibration.design import DesignPoint
from pimmodel.calibration.observations import Observation, model_phases
from pimmodel.specs import load_hardware


def fit_layout(*args, **kwargs):  # type: ignore[no-untyped-def]
    """``pimmodel.calibration.fit.fit_layout``, imported when a test runs (scipy.optimize is slow to import)."""
    from pimmodel.calibration.fit import fit_layout as fit

    return fit(*args, **kwargs)

UPMEM = HW = load_hardware("upmem-2556")


def _observations(points: list[DesignPoint], truth: dict[str, float], noise: float, seed: int) -> list[Observation]:
    rng = np.random.default_rng(seed)
    obs = [Observation(p.workload(), {}, p.name) for p in points]
    clean = model_phases(obs, HW.numeric(), truth)
    return [Observation(o.workload, {k: v * (1 + noise * rng.standard_normal()) for k, v in c.items()}, o.tag)
            for o, c in zip(obs, clean, strict=True)]


def _points(layout: str, optimizer: str, model: str) -> list[DesignPoint]:
    if layout == "dense":
        grid = [(n, r, d, b, p) for n in (2, 8) for r, b in ((32, 4), (64, 8)) for d in (2048, 4096)
                for p in (1.0, 0.5)]
        return [DesignPoint("dense", optimizer, model, n, r, d, b * (n if optimizer == "ga-sgd" else 1), p)
                for n, r, d, b, p in grid]
    grid = [(n, r, d, b) for n in (2, 8) for r, b in ((128, 16), (256, 64)) for d in (8_000, 50_000)]
    return [DesignPoint("sparse", optimizer, model, n, r, d, b * (n if optimizer == "ga-sgd" else 1))
            for n, r, d, b in grid]


CASES = [
    ("dense", "admm", "svm", {"svm_hit_fraction": 0.45}),
    ("dense", "ga-sgd", "svm", {"svm_hit_fraction": 0.6}),
    ("sparse", "ma-sgd", "lr", {"sparse_write_fraction": 0.8}),
    ("sparse", "ga-sgd", "svm", {"svm_hit_fraction": 0.35, "sparse_write_fraction": 0.9}),
]


@pytest.mark.parametrize(("layout", "optimizer", "model", "truth"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
def test_fit_recovers_known_coefficients(layout: str, optimizer: str, model: str, truth: dict[str, float]) -> None:
    obs = _observations(_points(layout, optimizer, model), truth, noise=0.005, seed=7)
    fit = _fit = fit_layout(obs, HW.numeric())
    values = fit.as_dict()
    for name, se in zip(fit.names, fit.std_errors, strict=True):
        assert 0 < se < 0.2 * max(truth[name], 0.1), (name, se)
        assert abs(values[name] - truth[name]) <= 3 * se, (name, values[name], truth[name], se)
    for tied, twin in _fit.ties:
        assert values[tied] == values[twin]


def test_noise_free_fit_is_exact() -> None:
    truth = {"svm_hit_fraction": 0.3, "sparse_write_fraction": 0.6}
    fit = fit_layout(_observations(_points("sparse", "ma-sgd", "svm"), truth, noise=0.0, seed=0), HW.numeric())
    assert set(fit.names) <= set(truth) and fit.names
    for name, value in fit.as_dict().items():
        assert value == pytest.approx(truth[name], rel=1e-6)


def test_coefficients_that_only_enter_together_are_tied() -> None:
    """Sparse SVM: the margin-hit fraction h scales the gradient's instructions and, times the write fraction w,
    the write-backs; the fit keeps both only if the data separate them (here they do: compute vs DMA)."""
    truth = {"svm_hit_fraction": 0.5, "sparse_write_fraction": 0.9}
    fit = fit_layout(_observations(_points("sparse", "admm", "svm"), truth, 0.005, 1), HW.numeric())
    assert set(fit.as_dict()) == set(truth)


def test_bootstrap_standard_errors_agree_in_magnitude() -> None:
    truth = {"sparse_write_fraction": 0.7}
    obs = _observations(_points("sparse", "admm", "lr"), truth, 0.01, 3)
    fit = fit_layout(obs, HW.numeric(), bootstrap=20, rng=np.random.default_rng(0))
    assert fit.bootstrap_std_errors is not None
    ratio = fit.bootstrap_std_errors[0] / fit.std_errors[0]
    assert 0.2 < ratio < 5


def test_nothing_to_fit_when_no_coefficient_matters() -> None:
    obs = _observations(_points("dense", "ma-sgd", "lr"), {}, 0.005, 2)
    obs = [Observation(o.workload, model_phases([o], UPMEM.numeric(), {})[0], o.tag) for o in obs]
    fit = fit_layout(obs, UPMEM.numeric())
    assert fit.names == () and fit.as_dict() == {}
