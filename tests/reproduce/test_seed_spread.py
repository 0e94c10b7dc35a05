"""Accuracy in the reproduced figures: seed ranges drawn, axes that do not magnify noise, and a platform
difference stated only beyond the seeds' spread."""

from __future__ import annotations

from pimmodel.report.study_figures import MIN_METRIC_SPAN, _metric_range
from pimmodel.reproduce.findings import _accuracy_verdict


def test_an_accuracy_axis_is_never_narrower_than_the_minimum_span() -> None:
    low, high = _metric_range([89.1, 89.4, 89.2])
    assert high - low >= MIN_METRIC_SPAN and low <= 89.1 and high >= 89.4
    assert _metric_range([99.5, 99.9]) == (100.0 - MIN_METRIC_SPAN, 100.0)  # clipped at 100: widened downwards
    low, high = _metric_range([50.0, 90.0])
    assert low == 40.0 and high == 100.0  # a wide range keeps its 25 % margin (clipped at 100)


def _row(final: float, low: float, high: float) -> dict:
    return {"final_metric": final, "per_epoch_metric_low": [low], "per_epoch_metric_high": [high]}


def test_pim_against_cpu_is_within_noise_unless_the_ranges_part() -> None:
    assert _accuracy_verdict(_row(0.80, 0.66, 0.89), _row(0.89, 0.86, 0.91)).startswith("within noise (-0.090")
    assert _accuracy_verdict(_row(0.80, 0.78, 0.82), _row(0.89, 0.86, 0.91)) == "lower by 0.090"
    assert _accuracy_verdict(_row(0.95, 0.94, 0.96), _row(0.89, 0.86, 0.91)) == "higher by 0.060"
    assert _accuracy_verdict({"final_metric": 0.5}, _row(0.89, 0.86, 0.91)) == "within noise (one seed)"


def test_bar_labels_use_full_numbers_with_a_spaced_unit() -> None:
    from pimmodel.report.study_figures import _seconds_text
    assert _seconds_text(1196.16) == "1,196 s" and _seconds_text(17490.0) == "17,490 s"
    assert _seconds_text(12.8) == "12.8 s"
