from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pimmodel.errors import SpecError
from pimmodel.specs import FIELDS, hardware_names, load_hardware, to_toml
from pimmodel.specs.architectures import fields_of
from pimmodel.specs.hardware import from_mapping, to_mapping


def test_shipped_specs_load_and_cite_every_constant() -> None:
    names = hardware_names()
    assert {"upmem-2556", "upmem-640"} <= set(names) and len(names) >= 3
    for name in names:
        hw = load_hardware(name)
        missing = [f.name for f in fields_of(hw) if not hw.sources.get(f.name)]
        assert not missing, f"{name}: constants without a source: {missing}"


def test_upmem_2556_values(upmem) -> None:
    assert upmem.dpu_clock_hz == 350e6
    assert upmem.dpus_available == 2556 and upmem.ranks(2556) == 40
    assert upmem.wram_bytes == 64 * 1024 and upmem.mram_bytes == 64 * 1024**2
    assert upmem.dma_read_latency_cycles == 77 and upmem.dma_write_latency_cycles == 61
    assert load_hardware("upmem-640").dpu_clock_hz == 267e6


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([f for f in FIELDS]), st.floats(0.1, 10.0))
def test_spec_toml_round_trip(field, factor) -> None:
    base = load_hardware("upmem-2556")
    value = getattr(base, field.name) * factor
    value = int(round(value)) if field.integer else value
    if not field.low <= value <= field.high or (field.name == "dpus_per_rank" and value > base.dpus_available) \
            or (field.name == "dma_min_bytes" and value > base.dma_max_bytes) \
            or (field.name == "dma_max_bytes" and value < base.dma_min_bytes) \
            or (field.name == "dpus_available" and value < base.dpus_per_rank):
        return
    spec = base.replace(**{field.name: value})
    again = from_mapping(tomllib.loads(to_toml(spec)), "round-trip")
    # decimal unit prefixes (GB/s, us) make the last bit of a float inexact: compare to 1e-12
    assert again.numeric() == pytest.approx(spec.numeric(), rel=1e-12)
    assert (again.name, again.link_topology, again.sources) == (spec.name, spec.link_topology, spec.sources)


def test_out_of_range_and_unknown_keys_are_one_line_errors() -> None:
    base = load_hardware("upmem-2556")
    with pytest.raises(SpecError, match="clock_mhz"):
        dataclasses.replace(base, dpu_clock_hz=-1.0)
    data = to_mapping(base)
    data["dpu"]["clock_ghz"] = 1
    with pytest.raises(SpecError, match="unknown key dpu.clock_ghz"):
        from_mapping(data, "x.toml")
    data = to_mapping(base)
    del data["dma"]["read_latency_cycles"]
    with pytest.raises(SpecError, match="missing dma.read_latency_cycles"):
        from_mapping(data, "x.toml")


def test_malformed_toml_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_hardware(str(bad))
    with pytest.raises(SpecError, match="unknown hardware 'upmem-256'.*upmem-2556"):
        load_hardware("upmem-256")
