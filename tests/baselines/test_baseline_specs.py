"""Baseline spec records: the shipped files load and cite every constant; bad values are one-line errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pimmodel.baselines.specs import (
    CPU_FIELDS,
    GPU_FIELDS,
    assumptions_of,
    cpu_from_mapping,
    cpu_to_mapping,
    cpu_to_toml,
    gpu_from_mapping,
    gpu_to_mapping,
    load_cpu,
    load_gpu,
    spec_names,
)
from pimmodel.errors import SpecError

SPECS = Path(__file__).resolve().parents[2] / "hardware_specs"


def _cpu_table() -> dict:
    return tomllib.loads((SPECS / "cpu" / "amd-epyc-7742-2s.toml").read_text())


def test_shipped_specs_load_and_cite_every_constant() -> None:
    assert spec_names("cpu") == ["amd-epyc-7742-2s"] and spec_names("gpu") == ["nvidia-a100-pcie-80gb"]
    cpu, gpu = load_cpu(), load_gpu()
    for spec, fields in ((cpu, CPU_FIELDS), (gpu, GPU_FIELDS)):
        missing = [f.name for f in fields if not spec.sources.get(f.name)]
        assert not missing, f"{spec.name}: constants without a source: {missing}"


def test_study_values_in_si() -> None:
    cpu, gpu = load_cpu(), load_gpu()
    assert cpu.cores == 128 and cpu.clock_hz == 2.25e9 and cpu.l2_bytes == 512 * 1024
    assert cpu.dram_peak_bytes_per_s == 204.8e9 and cpu.implementation == "pytorch-study"
    assert cpu.sync_algorithm == "ring" and cpu.ma_sgd_lr_step_s == pytest.approx(162e-6)
    assert gpu.hbm_peak_bytes_per_s == 1935e9 and gpu.hbm_bytes == 80 * 1024**3 and gpu.loader_workers == 1


def test_assumptions_are_listed() -> None:
    listed = assumptions_of(load_cpu())
    assert any(line.startswith("memory.sustained_fraction = 0.7") for line in listed)
    assert any(line.startswith("sync.latency_us = 15") for line in listed)
    assert not any(line.startswith("cpu.cores_per_socket") for line in listed)  # vendor data, not assumed
    assert any(line.startswith("pcie.sustained_fraction") for line in assumptions_of(load_gpu()))


def test_round_trip() -> None:
    cpu, gpu = load_cpu(), load_gpu()
    assert cpu_from_mapping(cpu_to_mapping(cpu), "round trip") == cpu
    assert gpu_from_mapping(gpu_to_mapping(gpu), "round trip") == gpu
    assert tomllib.loads(cpu_to_toml(cpu))["memory"]["peak_gb_per_s_per_socket"]["value"] == 204.8


@pytest.mark.parametrize(("section", "key", "value", "message"), [
    ("memory", "sustained_fraction", 1.5, "out of range"),
    ("cpu", "cores_per_socket", 2.5, "whole number"),
    ("cpu", "clock_ghz", "fast", "must be a number"),
    ("sync", "latency_us", -1, "out of range"),
    ("framework", "implementation", "tensorflow", "framework.implementation must be one of"),
    ("sync", "algorithm", "tree", "sync.algorithm must be one of"),
])
def test_bad_values_rejected(section: str, key: str, value: object, message: str) -> None:
    data = _cpu_table()
    data[section][key] = {"value": value, "source": "test"}
    with pytest.raises(SpecError, match=message):
        cpu_from_mapping(data, "test.toml")


def test_unknown_and_missing_keys_rejected() -> None:
    data = _cpu_table()
    data["memory"]["bandwith_gb_per_s"] = 1.0
    with pytest.raises(SpecError, match="unknown key memory.bandwith_gb_per_s"):
        cpu_from_mapping(data, "test.toml")
    data = _cpu_table()
    del data["cache"]["l2_kib_per_core"]
    with pytest.raises(SpecError, match="missing cache.l2_kib_per_core"):
        cpu_from_mapping(data, "test.toml")
    data = _cpu_table()
    data["gpu"] = {}
    with pytest.raises(SpecError, match="unknown key gpu"):
        cpu_from_mapping(data, "test.toml")


def test_unknown_name_and_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="unknown cpu spec"):
        load_cpu("epyc")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_gpu(str(bad))
    with pytest.raises(SpecError, match="out of range"):
        load_cpu().replace(vector_bytes_per_s=0.0)
