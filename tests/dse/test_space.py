"""Study files load into frozen records; every mistake is a one-line StudyError naming the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pimmodel.dse.space import from_mapping, load_study
from pimmodel.errors import StudyError

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = {"study": {"name": "t"}, "parameters": {"clock": {"field": "dpu_clock_hz", "low": 350, "high": 700,
                                                            "unit": "MHz"}}}


@pytest.mark.parametrize("path", sorted((ROOT / "studies").glob("*.toml")), ids=lambda p: p.stem)
def test_shipped_studies_load(path: Path) -> None:
    spec = load_study(path)
    assert spec.parameters and spec.workloads and spec.objectives
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "x"  # type: ignore[misc]


def test_units_and_defaults() -> None:
    spec = from_mapping(MINIMAL, "t")
    (p,) = spec.parameters
    assert (p.low * p.scale, p.high * p.scale) == (350e6, 700e6)
    assert spec.objectives[0].kind == "time_per_epoch" and len(spec.workloads) == 12


@pytest.mark.parametrize("change, message", [
    ({"study": {"name": "t", "samplr": "tpe"}}, "samplr"),
    ({"study": {"name": "t", "sampler": "cmaes"}}, "sampler"),
    ({"parameters": {"c": {"field": "dpu_clok_hz", "low": 1, "high": 2}}}, "dpu_clock_hz"),
    ({"parameters": {"c": {"field": "dpu_clock_hz", "low": 2, "high": 1, "unit": "MHz"}}}, "low < high"),
    ({"parameters": {"c": {"field": "dpu_clock_hz", "low": 1, "high": 2, "unit": "furlong"}}}, "unit"),
    ({"parameters": {"c": {"field": "dpu_clock_hz", "low": 0.1, "high": 2, "unit": "Hz"}}}, "outside"),
    ({"parameters": {"t": {"field": "link_topology", "choices": ["mesh"]}}}, "topology"),
    ({"parameters": {"m": {"choices": ["a", "b"], "sets": {"b": {"mul_stp": 0}}}}}, "mul_step"),
    ({"objective": [{"kind": "latency"}]}, "objective[1].kind must be one of"),
    ({"workloads": {"optimizers": ["adam"]}}, "admm"),
    ({"constraints": {"max_power_w": -1}}, "max_power_w"),
    ({"parameters": {}}, "empty"),
])
def test_bad_study_is_one_clear_error(change: dict, message: str) -> None:
    data = {**MINIMAL, **change}
    with pytest.raises(StudyError) as info:
        from_mapping(data, "t.toml")
    text = str(info.value)
    assert message in text and "\n" not in text
