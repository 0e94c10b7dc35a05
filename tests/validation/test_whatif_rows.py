"""Issue 27, item 1: the real what-if rows load as checked data, name their sources, and split fit from test by
source (more than half of the scored rows are test rows)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from pimmodel.calibration import whatifs
from pimmodel.errors import DataError
from pimmodel.validation.data import validation_dir


def test_the_rows_are_real_sourced_and_split_by_source() -> None:
    rows = whatifs.load_whatifs()
    scored = [r for r in rows if r.role != "context"]
    assert len(scored) >= 15 and len({r.source for r in rows}) >= 3
    test = [r for r in scored if r.role == "test"]
    # the rows found for the what-if set are more than half test; the pairs re-expressed from the upmem-scale fit
    # files keep the role that data set gave them (fit: their values already set the machines' constants)
    found = [r for r in scored if "upmem-scale fit file" not in r.source]
    carried = [r for r in scored if r not in found]
    assert 2 * len(test) > len(found) and carried and all(r.role == "fit" for r in carried)
    assert len({r.source for r in scored}) >= 3
    assert not {r.source for r in test} & {r.source for r in scored if r.role == "fit"}  # no sweep on both sides
    for r in scored:
        assert r.dpus and r.bytes_per_dpu and r.direction in ("to-dpu", "from-dpu"), r.id
        assert r.pair in whatifs.PAIRS and r.pair, r.id


def test_a_ratio_is_its_two_values() -> None:
    row = next(r for r in whatifs.load_whatifs() if r.id == "direct2023-send-256dpu-65536B")
    assert row.measured_ratio == pytest.approx(0.00569997 / 0.00235139, rel=1e-3)  # the spreadsheet's J / D
    light = next(r for r in whatifs.load_whatifs() if r.id == "light-send-1k")
    assert light.ratio_of == "throughput" and light.time_ratio == pytest.approx(3.555 / 21.534, rel=1e-3)
    # the upmem-scale pairs: the two measured values at the same size and DPU count
    serial = next(r for r in whatifs.load_whatifs() if r.id == "bpforest-serial-64k-2dpu")
    assert serial.time_ratio == pytest.approx(382.263 / 180.375183, rel=1e-3)  # parallel / serial MiB/s
    read = next(r for r in whatifs.load_whatifs() if r.id == "upvec-notrans-read-2rank")
    assert read.direction == "from-dpu" and read.time_ratio == pytest.approx(2.757 / 3.296, rel=1e-3)


@pytest.mark.parametrize(("column", "value", "needle"), [
    ("role", "train", "role 'train' is not one of fit, test, context"),
    ("measured_ratio", "7", "is not its values'"),
    ("where", "", "names its source and where"),
    ("dpus", "many", "dpus 'many' is not a number"),
])
def test_a_bad_row_is_one_line(column: str, value: str, needle: str, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "validation"
    shutil.copytree(validation_dir(), folder)
    path = folder / "whatifs" / "whatifs.csv"
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows[0][column] = value
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    monkeypatch.setenv("PIMMODEL_VALIDATION_DIR", str(folder))
    whatifs.load_whatifs.cache_clear()
    try:
        with pytest.raises(DataError, match="whatifs.csv row light-send-1k") as caught:
            whatifs.load_whatifs()
        assert needle in str(caught.value) and "\n" not in str(caught.value)
    finally:
        whatifs.load_whatifs.cache_clear()
