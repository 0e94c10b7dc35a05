"""Calibrate on a tiny design, write, read, predict: the same numbers. Plus the shipped file and intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pimmodel.api import predict, predict_interval
from pimmodel.calibration.design import tiny_design
from pimmodel.calibration.result import SCHEMA_VERSION, SHIPPED_PATH, load_calibration, read_calibration
from pimmodel.costmodel import predict as predict_with
from pimmodel.errors import SpecError
from pimmodel.phases import PHASES
from pimmodel.specs import CRITEO, YFCC, Workload, load_hardware

HW = load_hardware("upmem-2556")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    from pimmodel.calibration.run import calibrate  # scipy.optimize loads when the test runs, not at collection

    points = [p for p in tiny_design() if p.optimizer == "ma-sgd"]
    result = calibrate(points, HW, label="tiny test calibration")
    path = result.write(tmp_path_factory.mktemp("cal") / "tiny.json")
    return result, path


def test_round_trip_predicts_the_same_numbers(tiny: tuple) -> None:
    result, path = tiny
    loaded = read_calibration(path)
    assert loaded.fits.keys() == result.fits.keys()
    for key, fit in result.fits.items():
        assert loaded.fits[key].as_dict() == fit.as_dict()
    for w in (Workload(YFCC, "lr", "ma-sgd", 256), Workload(CRITEO, "svm", "ma-sgd", 256)):
        from_file = predict(w, HW, calibration=path).to_record()
        from_memory = predict_with(w, HW, result.coefficients_for(w), calibration=result.label).to_record()
        assert from_file["per_epoch_s"] == from_memory["per_epoch_s"]
        assert from_file["calibration"] == "tiny test calibration"


def test_calibration_file_has_provenance(tiny: tuple) -> None:
    _, path = tiny
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    prov = data["provenance"]
    for key in ("created_utc", "git_revision", "emulator_settings", "seeds", "hardware"):
        assert key in prov
    assert data["design"] and all("stats" in d and "reference_s" in d for d in data["design"])
    # least squares minimises the squared relative errors of the fitted phases together: their sum cannot grow
    from pimmodel.calibration.fit import FIT_PHASES

    def ssr(errors: dict) -> float:
        return sum(errors[p]["rms"] ** 2 * errors[p]["count"] for p in FIT_PHASES)

    assert ssr(data["errors"]["after"]) <= ssr(data["errors"]["before"]) * (1 + 1e-9)


def test_shipped_calibration_is_the_default() -> None:
    shipped = read_calibration(SHIPPED_PATH)
    assert len(shipped.fits) == 12
    record = predict(Workload(YFCC, "lr", "admm", 2048), HW).to_record()
    assert record["calibration"] == shipped.label == load_calibration(None).label
    assert predict(Workload(YFCC, "lr", "admm", 2048), HW, calibration="defaults").calibration == "defaults"


def test_bad_calibration_file_is_a_spec_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SpecError):
        load_calibration(str(bad))
    with pytest.raises(SpecError):
        load_calibration(str(tmp_path / "missing.json"))
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"schema_version": 0}))
    with pytest.raises(SpecError, match="schema_version"):
        load_calibration(str(old))


def test_interval_brackets_the_prediction() -> None:
    w = Workload(YFCC, "svm", "ma-sgd", 2048)
    point = predict(w, HW).to_record()["per_epoch_s"]
    band = predict_interval(w, HW)["per_epoch_s"]
    for p in (*PHASES, "total"):
        lo, hi = band[p]
        assert lo <= point[p] * (1 + 1e-9) and point[p] <= hi * (1 + 1e-9)
    assert band["dpu_compute"][1] > band["dpu_compute"][0]
    flat = predict_interval(w, HW, calibration="defaults")["per_epoch_s"]["total"]
    assert flat[0] == flat[1]
