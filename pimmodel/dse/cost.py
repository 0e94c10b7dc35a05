"""Hardware cost proxy: per-feature weights from ``pimmodel/data/dse_costs.toml`` (each with its source).

Cost is per DPU, relative to the baseline DPU (1.0 = the baseline system's DPU with its bank); it is
vectorized over design points like the cost model.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import StudyError
from ..resources import DATA_DIR
from ..specs.hardware import FIELD_BY_NAME, HardwareSpec

COSTS_FILE = DATA_DIR / "dse_costs.toml"
FORMS = ("ratio", "inverse", "native", "link")


@dataclass(frozen=True, slots=True)
class CostFeature:
    field: str
    form: str
    weight: float
    source: str
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class CostWeights:
    features: tuple[CostFeature, ...]
    link_ports: Mapping[str, float]

    def per_dpu(self, values: Mapping[str, np.ndarray], topology: np.ndarray, base: HardwareSpec) -> np.ndarray:
        """Cost per DPU of each design point (1.0 = ``base``)."""
        shape = np.shape(topology)
        cost = np.ones(shape)
        for f in self.features:
            v = np.asarray(values[f.field], dtype=float)
            b = float(getattr(base, f.field))
            if f.form == "ratio":
                cost = cost + f.weight * (v / b - 1.0)
            elif f.form == "inverse":
                cost = cost + f.weight * (b / np.maximum(v, 1e-30) - 1.0)
            elif f.form == "native":
                cost = cost + f.weight * ((v <= f.at) & (b > f.at))
            else:
                ports = np.array([self.link_ports.get(str(t), 0.0) for t in np.ravel(topology)]).reshape(shape)
                cost = cost + f.weight * ports * v / 1e9
        return np.maximum(cost, 0.05)


@lru_cache(maxsize=4)
def load_costs(path: str = str(COSTS_FILE)) -> CostWeights:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise StudyError(f"cannot read cost weights {path!r}: {exc}") from None
    features = []
    for item in data.get("feature", []):
        field, form = item.get("field"), item.get("form")
        if field not in FIELD_BY_NAME or form not in FORMS:
            raise StudyError(f"{path}: bad cost feature {item!r} (field must be a hardware field, form one of {FORMS})")
        features.append(CostFeature(field, form, float(item["weight"]), str(item.get("source", "")),
                                    float(item.get("at", 0.0))))
    ports = {k: float(v) for k, v in data.get("link_ports", {}).items() if k != "source"}
    return CostWeights(tuple(features), ports)
