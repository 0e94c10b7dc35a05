"""The helpers every spec record shares: ``SpecRecord`` (numbers by name, a validated copy), ``read_fields`` /
``write_fields`` (a ``Field`` table to record values and back) and ``check_positive_ints``."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pimmodel.baselines.specs import CPU_FIELDS, CpuSpec, load_cpu, load_gpu
from pimmodel.errors import SpecError
from pimmodel.specs import load_hardware
from pimmodel.specs.bank_simd import BankSimdSpec
from pimmodel.specs.hardware import FIELDS, NUMERIC_FIELDS, HardwareSpec, read_fields, write_fields
from pimmodel.specs.workload import check_positive_ints


def test_numeric_is_the_field_table_in_order() -> None:
    hw = load_hardware("upmem-2556")
    assert list(hw.numeric()) == list(NUMERIC_FIELDS)
    assert hw.numeric()["dpu_clock_hz"] == float(hw.dpu_clock_hz)
    assert list(load_cpu().numeric()) == [f.name for f in CPU_FIELDS]


def test_replace_is_a_validated_copy_of_the_same_type() -> None:
    hw = load_hardware("upmem-2556")
    changed = hw.replace(max_tasklets=12)
    assert type(changed) is HardwareSpec and changed.max_tasklets == 12 and hw.max_tasklets != 12
    with pytest.raises(SpecError, match="max_tasklets"):
        hw.replace(max_tasklets=0)
    assert type(load_gpu().replace(loader_workers=2)) is type(load_gpu())
    assert isinstance(load_cpu().replace(sockets=1), CpuSpec)
    assert BankSimdSpec.FIELDS and HardwareSpec.FIELDS is FIELDS


def test_read_and_write_fields_round_trip_with_defaults_and_sources() -> None:
    hw = load_hardware("upmem-2556")
    tables = write_fields({}, hw, FIELDS)
    values, sources = read_fields(tables, FIELDS, "test.toml")
    assert values == {f.name: getattr(hw, f.name) for f in FIELDS}
    assert sources == {f.name: hw.sources.get(f.name, "") for f in FIELDS}
    defaulted = next(f for f in FIELDS if f.default is not None)
    assert defaulted.default is not None
    del tables[defaulted.section][defaulted.key]
    values, sources = read_fields(tables, FIELDS, "test.toml")
    assert values[defaulted.name] == pytest.approx(defaulted.default * defaulted.scale)
    assert sources[defaulted.name].startswith(f"default {defaulted.default:g}: ")
    count = next(f for f in FIELDS if f.integer and f.scale == 1)
    tables[count.section][count.key] = 2.5
    with pytest.raises(SpecError, match=rf"test.toml: {count.section}.{count.key} must be a whole number"):
        read_fields(tables, FIELDS, "test.toml")


@dataclass
class _Counts:
    rows: object = 1
    epochs: object = 1


@pytest.mark.parametrize("value", [0, -1, True, 1.0, "2"])
def test_check_positive_ints_refuses_what_is_no_positive_whole_number(value: object) -> None:
    check_positive_ints(_Counts(), ("rows", "epochs"), lambda key: f"--{key}")
    with pytest.raises(SpecError, match=rf"^job: epochs must be a positive whole number, got {value!r}$"):
        check_positive_ints(_Counts(epochs=value), ("rows", "epochs"), lambda key: f"job: {key}")
