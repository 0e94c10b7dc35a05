"""Hardware cost proxy: per-feature weights from ``pimmodel/data/dse_costs.toml`` (each with its source).

Cost is per DPU, relative to the baseline DPU (1.0 = the baseline system's DPU with its bank); it is
vectorized over design points like the cost model. Another architecture family has its own section
(``[family.<name>]``): the cost of its unit relative to one UPMEM DPU (``unit_cost``) and weights on its own fields;
a study searching several families counts every unit in its baseline family's unit (``per_unit``).
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import StudyError
from ..resources import DATA_DIR
from ..specs.architectures import DEFAULT_FAMILY, FAMILIES, architecture_of, resolve
from ..specs.architectures import architecture as family_entry
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
class FamilyCost:
    """One other family's cost: its unit against one UPMEM DPU, and its features (on its own fields)."""

    unit_cost: float
    source: str
    features: tuple[CostFeature, ...]


@dataclass(frozen=True, slots=True)
class CostWeights:
    features: tuple[CostFeature, ...]
    link_ports: Mapping[str, float]
    families: Mapping[str, FamilyCost] = dataclasses.field(default_factory=dict)

    def unit_cost(self, family: str) -> float:
        """One unit of ``family`` in UPMEM DPUs (the file's unit: 1.0 for the UPMEM-like family)."""
        own = self.families.get(family)
        return own.unit_cost if own is not None else 1.0

    def per_unit(self, values: Mapping[str, np.ndarray], topology: np.ndarray, base: Any, currency: Any = None
                 ) -> np.ndarray:
        """Cost per unit of each design point of ``base``'s family, in units of one baseline unit of ``currency``'s
        family (None: ``base``'s own, 1.0 = ``base``)."""
        family = architecture_of(base).name
        own = self.families.get(family)
        cost = (self.per_dpu(values, topology, base) if own is None
                else _priced(own.features, values, topology, base, self.link_ports))
        if currency is None:
            return cost
        return cost * (self.unit_cost(family) / self.unit_cost(architecture_of(currency).name))

    def per_dpu(self, values: Mapping[str, np.ndarray], topology: np.ndarray, base: HardwareSpec) -> np.ndarray:
        """Cost per DPU of each design point (1.0 = ``base``)."""
        return _priced(self.features, values, topology, base, self.link_ports)


def _priced(features: tuple[CostFeature, ...], values: Mapping[str, np.ndarray], topology: np.ndarray, base: Any,
            link_ports: Mapping[str, float]) -> np.ndarray:
    """1.0 plus each feature's term (the forms of ``dse_costs.toml``), at least 0.05."""
    shape = np.shape(topology)
    cost = np.ones(shape)
    for f in features:
        v = np.asarray(values[f.field], dtype=float)
        b = float(getattr(base, f.field))
        if f.form == "ratio":
            cost = cost + f.weight * (v / b - 1.0)
        elif f.form == "inverse":
            cost = cost + f.weight * (b / np.maximum(v, 1e-30) - 1.0)
        elif f.form == "native":
            cost = cost + f.weight * ((v <= f.at) & (b > f.at))
        else:
            ports = np.array([link_ports.get(str(t), 0.0) for t in np.ravel(topology)]).reshape(shape)
            cost = cost + f.weight * ports * v / 1e9
    return np.maximum(cost, 0.05)


@lru_cache(maxsize=4)
def load_costs(path: str = str(COSTS_FILE)) -> CostWeights:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise StudyError(f"cannot read cost weights {path!r}: {exc}") from None
    ports = {k: float(v) for k, v in data.get("link_ports", {}).items() if k != "source"}
    families = {}
    for family, table in data.get("family", {}).items():
        if family not in FAMILIES or family == DEFAULT_FAMILY:
            raise StudyError(f"{path}: [family.{family}] names no other hardware family (one of "
                             f"{', '.join(f for f in FAMILIES if f != DEFAULT_FAMILY)})")
        fields = {f.name for f in resolve(family_entry(family).spec.partition(":")[0]).FIELDS}
        families[family] = FamilyCost(float(table["unit_cost"]), str(table.get("source", "")),
                                      _features(table.get("feature", []), fields, f"{path} [family.{family}]"))
    return CostWeights(_features(data.get("feature", []), set(FIELD_BY_NAME), path), ports, families)


def _features(items: list[dict[str, Any]], fields: set[str], where: str) -> tuple[CostFeature, ...]:
    features = []
    for item in items:
        field, form = item.get("field"), item.get("form")
        if field not in fields or form not in FORMS:
            raise StudyError(f"{where}: bad cost feature {item!r} (field must be a hardware field of the family, "
                             f"form one of {FORMS})")
        features.append(CostFeature(field, form, float(item["weight"]), str(item.get("source", "")),
                                    float(item.get("at", 0.0))))
    return tuple(features)
