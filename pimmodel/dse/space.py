"""Search spaces as data: a study file (``studies/*.toml``) loaded into frozen records.

A study names the baseline hardware, the workloads it scores, its objectives and constraints, and the
hardware parameters it searches. Each parameter is one table under ``[parameters]``::

    dpu_clock = { field = "dpu_clock_hz", low = 350, high = 1200, unit = "MHz", scale = "log" }
    tasklets = { field = "tasklets", low = 11, high = 24, type = "int" }
    multiplier = { choices = ["software", "native"],
                   sets = { native = { int32_mul_base_instructions = 1, mul_step_instructions = 0 } } }
    link_topology = { choices = ["none", "ring"] }

``field`` (default: the table key) is a numeric ``HardwareSpec`` field, ``link_topology``, or
``tasklets`` (the tasklets the kernels run; it also sets the hardware threads). ``unit`` converts the
bounds to SI (``MHz``, ``GB/s``, ``KiB``, ``us``...). A choice either picks a field's value or, with
``sets``, applies a set of field values (a hardware feature such as a native multiplier).
Algorithm and hardware are searched together with two more fields::

    optimizer = { choices = ["ma-sgd", "local-sgd", "dpsgd"] }     # the workloads' optimizers are then searched
    sync_every = { choices = [1, 4, 16] }                           # H of the optimizers that take it

An ``optimizer`` parameter replaces ``[workloads] optimizers``: each (dataset, model) is scored with the optimizer a
design point picks (a pick whose links the design lacks is infeasible: constraint ``links``).

Architecture families are searched together with a ``[families]`` table (family -> its baseline spec; the
``[study] baseline`` is its own family's) and a ``family`` parameter, the categorical axis::

    [families]
    bank-simd = "hbm-pim-aquabolt"
    [parameters]
    family = { choices = ["upmem-like", "bank-simd"] }
    lanes = { field = "lanes", family = "bank-simd", choices = [16, 32, 64] }

Every hardware parameter belongs to one family (``family``, default the baseline's) and names a numeric field of
that family's spec; a design point picks a family and only that family's parameters (``FamilyParameter``).
Every bad key or value is a one-line ``StudyError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from ..errors import SpecError, StudyError, suggest
from ..resources import data_dir
from ..specs import DATASETS, MODELS, OPTIMIZERS, SCALINGS, STUDY_OPTIMIZERS, TOPOLOGIES, load_hardware
from ..specs._toml import read_toml
from ..specs.architectures import FAMILIES, architecture, architecture_of, fields_of
from ..specs.hardware import FIELD_BY_NAME, Field

AXIS_SCALES = ("linear", "log")
"""How an axis is sampled: uniformly or uniformly in its logarithm."""
UNITS: dict[str, float] = {
    "": 1.0, "1": 1.0, "Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9, "s": 1.0, "ms": 1e-3, "us": 1e-6,
    "ns": 1e-9, "B": 1.0, "KiB": 1024.0, "MiB": 1024.0**2, "GiB": 1024.0**3, "B/s": 1.0, "MB/s": 1e6,
    "GB/s": 1e9, "W": 1.0, "cycles": 1.0, "instructions": 1.0, "cycles/B": 1.0,
}
Direction = Literal["minimize", "maximize"]
OBJECTIVES: dict[str, Direction] = {
    "time_per_epoch": "minimize", "strong_scaling_efficiency": "maximize", "weak_scaling_growth": "minimize",
    "speedup": "maximize", "energy_per_epoch": "minimize", "cost": "minimize",
    "speedup_over_cpu": "maximize", "speedup_over_gpu": "maximize", "time_to_target": "minimize",
}
"""Objective kinds and their directions."""
OBJECTIVE_UNITS = {"time_per_epoch": "s", "energy_per_epoch": "J", "cost": "x baseline DPU", "speedup": "x",
                   "speedup_over_cpu": "x", "speedup_over_gpu": "x", "time_to_target": "s",
                   "strong_scaling_efficiency": "", "weak_scaling_growth": "x"}
"""Units of the objective kinds (``objective.py``); '' is a plain ratio."""


def objective_label(name: str, kind: str, direction: str | None = None) -> str:
    """'time_per_epoch [s]', with ' (minimize)' when a direction is given: axis and column titles, and the
    metric names of a stored study (optuna-dashboard's axis titles)."""
    unit = OBJECTIVE_UNITS.get(kind, "")
    label = f"{name} [{unit}]" if unit else name
    return f"{label} ({direction})" if direction else label


SAMPLERS = ("nsga2", "tpe")
WORKLOAD_FIELD = "tasklets"
STRUCTURAL_FIELD = "link_topology"
OPTIMIZER_FIELD = "optimizer"
SYNC_FIELD = "sync_every"
ALGORITHM_FIELDS = (OPTIMIZER_FIELD, SYNC_FIELD)
FAMILY_FIELD = "family"
"""The architecture-family axis (a choice of ``[families]`` keys)."""
POWER_FIELDS = ("power_per_dpu_w", "dpu_clock_hz", "host_power_w")
"""The fields the energy objective and the power constraint read (a family without them cannot take either)."""


@dataclass(frozen=True, slots=True)
class Parameter:
    """One searched dimension, bounds in SI (``low``/``high``) and as written (``unit``)."""

    name: str
    field: str
    kind: str  # "float" | "int" | "choice"
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    unit: str = ""
    choices: tuple[Any, ...] = ()
    sets: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()
    """For feature choices: (choice, ((field, SI value), ...)); the first choice may set nothing."""

    @property
    def scale(self) -> float:
        return UNITS[self.unit]

    def set_for(self, choice: Any) -> dict[str, float]:
        return dict(next((fields for c, fields in self.sets if c == choice), ()))

    def values_of(self, field: str) -> list[float]:
        """The SI values this parameter can give hardware ``field`` (empty if it does not set it)."""
        from_sets = [v for _, fields in self.sets for name, v in fields if name == field]
        if self.field != field or self.sets:
            return from_sets
        if self.kind == "choice":
            return [float(c) * self.scale for c in self.choices]
        return [self.low * self.scale, self.high * self.scale]


@dataclass(frozen=True, slots=True)
class FamilyParameter(Parameter):
    """A hardware parameter of a study with a family axis: searched only at the design points of ``family`` (its
    own class: a study without the axis keeps the stored definition it had)."""

    family: str = ""


@dataclass(frozen=True, slots=True)
class WorkloadCase:
    dataset: str
    model: str
    optimizer: str

    @property
    def label(self) -> str:
        return f"{self.dataset.split('-')[0]}/{self.model}/{self.optimizer}"

    @property
    def slot(self) -> tuple[str, str]:
        """(dataset, model): the workload a searched optimizer is picked for."""
        return self.dataset, self.model


@dataclass(frozen=True, slots=True)
class Objective:
    kind: str
    dpus: int = 2048
    low_dpus: int = 256
    epochs: int = 1
    versus: str | None = None
    """speedup_over_cpu / speedup_over_gpu: the CPU or GPU spec (a name in hardware_specs/cpu|gpu or a TOML file;
    None: the study's EPYC 7742 pair or A100)."""
    target: float = 0.99
    """time_to_target: the fraction of MA-SGD's stand-in metric after the study's epochs to reach
    (``dse/convergence.py``)."""

    @property
    def direction(self) -> Direction:
        return OBJECTIVES[self.kind]

    @property
    def name(self) -> str:
        return self.kind

    @property
    def label(self) -> str:
        """The name with its unit: 'time_per_epoch [s]'."""
        return objective_label(self.name, self.kind)


@dataclass(frozen=True, slots=True)
class Constraints:
    fit_memory: bool = True
    max_power_w: float | None = None
    max_cost: float | None = None


@dataclass(frozen=True, slots=True)
class StudySpec:
    name: str
    description: str
    baseline: str
    sampler: str
    trials: int
    seed: int | None
    batch: int
    view: str
    workloads: tuple[WorkloadCase, ...]
    objectives: tuple[Objective, ...]
    constraints: Constraints
    parameters: tuple[Parameter, ...]
    path: str = ""
    families: tuple[tuple[str, str], ...] = ()
    """A family axis: (family, its baseline spec) for every family the axis picks, the baseline's first; () none."""

    @property
    def directions(self) -> list[Direction]:
        return [o.direction for o in self.objectives]

    @property
    def max_dpus(self) -> int:
        """The most DPUs any objective runs on."""
        return max(o.dpus for o in self.objectives)

    def highest(self, field: str) -> float | None:
        """The largest SI value the search gives hardware ``field``, None if no parameter sets it."""
        values = [v for p in self.parameters for v in p.values_of(field)]
        return max(values) if values else None

    @property
    def family_axis(self) -> Parameter | None:
        """The ``family`` parameter, None without one."""
        return next((p for p in self.parameters if p.field == FAMILY_FIELD), None)


# ---------------------------------------------------------------- loading
def study_names() -> list[str]:
    """The studies shipped with pimmodel (``pimmodel/data/studies/*.toml``), by name."""
    return sorted(p.stem for p in data_dir("studies").glob("*.toml"))


def load_study(path: str | Path) -> StudySpec:
    """Read and validate a study file, or a shipped study by name (one-line ``StudyError`` for anything wrong)."""
    p = Path(path)
    if not p.exists() and p.suffix != ".toml" and p.name == str(path) and str(path) in study_names():
        p = data_dir("studies") / f"{path}.toml"
    elif not p.exists() and p.suffix != ".toml" and p.name == str(path):
        raise StudyError(f"no study file {str(path)!r} and no shipped study of that name"
                         f"{suggest(str(path), study_names())}")
    try:
        data = read_toml(p, "study")
    except SpecError as exc:
        raise StudyError(str(exc)) from None
    return from_mapping(data, str(p))


def study_schema() -> Any:
    """The schema of a study file (``specs.schema``): its tables, their keys, types and ranges, the names they
    take (samplers, datasets, models, optimizers, objective kinds, units); what relates two keys (``low < high``, a
    parameter's field and its range) is checked by ``from_mapping``."""
    return _study_schema(tuple(OPTIMIZERS))


@lru_cache(maxsize=4)
def _study_schema(optimizers: tuple[str, ...]) -> Any:
    # lazy imports keep the CLI's cold start fast (msgspec is imported only when a file is validated)
    from typing import Annotated

    import msgspec

    from ..errors import SEED_MAX
    from ..specs.schema import literal

    def struct(name: str, fields: list[Any]) -> Any:
        return msgspec.defstruct(name, fields, forbid_unknown_fields=True, kw_only=True)

    def count(default: int, doc: str = "") -> tuple[Any, int]:
        return Annotated[int, msgspec.Meta(ge=1, description=doc or None)], default

    def names(values: Any) -> Any:
        return literal(values) | Annotated[list[literal(values)], msgspec.Meta(min_length=1)]  # type: ignore[misc]

    unset = msgspec.UNSET
    positive = Annotated[float, msgspec.Meta(gt=0)]
    head = struct("study", [
        ("name", Annotated[str, msgspec.Meta(min_length=1)]), ("description", str, ""),
        ("baseline", Annotated[str, msgspec.Meta(description="a shipped hardware spec or a TOML file")], "upmem-2556"),
        ("sampler", literal(SAMPLERS), "nsga2"), ("trials", *count(1000)),
        ("seed", Annotated[int, msgspec.Meta(ge=0, le=SEED_MAX)], unset), ("batch", *count(64, "trials per batch")),
        ("view", literal(("wall", "breakdown")), "wall")])
    workloads = struct("workloads", [("datasets", names(DATASETS), unset), ("models", names(MODELS), unset),
                                     ("optimizers", names(optimizers), unset)])
    objective = struct("objective", [
        ("kind", literal(OBJECTIVES)), ("dpus", *count(2048)), ("low_dpus", *count(256)), ("epochs", *count(1)),
        ("versus", Annotated[str, msgspec.Meta(min_length=1, description="a CPU or GPU spec (name or TOML file)")],
         unset), ("target", Annotated[float, msgspec.Meta(gt=0, le=1)], 0.99)])
    constraints = struct("constraints", [("fit_memory", bool, True), ("max_power_w", positive, unset),
                                         ("max_cost", positive, unset)])
    parameter = struct("parameter", [
        ("field", Annotated[str, msgspec.Meta(description="a numeric hardware field, tasklets, link_topology, "
                                                          "optimizer, sync_every or family (default: the key)")],
         unset),
        ("family", Annotated[literal(FAMILIES), msgspec.Meta(  # type: ignore[valid-type]
            description="the architecture family whose spec field it names (default: the baseline's)")], unset),
        ("low", float, unset), ("high", float, unset), ("unit", literal(UNITS), ""),
        ("scale", literal(AXIS_SCALES), "linear"), ("type", literal(("int", "float")), unset),
        ("choices", Annotated[list[str | int | float], msgspec.Meta(min_length=1)], unset),
        ("sets", dict[str, dict[str, float]], unset)])
    return struct("study_file", [
        ("study", head), ("workloads", workloads, unset),
        ("families", Annotated[dict[literal(FAMILIES), str], msgspec.Meta(  # type: ignore[valid-type,misc]
            description="a hardware family -> its baseline spec, for a family parameter")], unset),
        ("objective", objective | list[objective], unset),  # type: ignore[valid-type]
        ("constraints", constraints, unset), ("parameters", dict[str, parameter], unset)])  # type: ignore[valid-type]


def _table(data: Mapping[str, Any], key: str, origin: str) -> Mapping[str, Any]:
    value: Mapping[str, Any] = data.get(key, {})
    return value


def from_mapping(data: Mapping[str, Any], origin: str) -> StudySpec:
    # lazy imports keep the CLI's cold start fast
    from ..specs.schema import validate

    validate(data, study_schema(), origin, StudyError)
    head = _table(data, "study", origin)
    name = head["name"]
    sampler = str(head.get("sampler", "nsga2"))
    baseline = str(head.get("baseline", "upmem-2556"))
    try:
        base_spec = load_hardware(baseline)
    except SpecError as exc:
        raise StudyError(f"{origin}: baseline: {exc}") from None
    objectives = _objectives(data.get("objective"), origin)
    if len(objectives) > 1 and sampler == "tpe":
        sampler = "tpe"  # multi-objective TPE is supported by Optuna as well
    families = _families(_table(data, "families", origin), base_spec, origin)
    home = architecture_of(base_spec).name
    parameters = tuple(_parameter(k, v, origin, families, home)
                       for k, v in _table(data, "parameters", origin).items())
    parameters, pairs = _family_axis(parameters, families, home, origin)
    searched = next((p.choices for p in parameters if p.field == OPTIMIZER_FIELD), None)
    spec = StudySpec(
        name=name, description=str(head.get("description", "")), baseline=base_spec.name, sampler=sampler,
        trials=_int(head.get("trials", 1000), "trials", origin), seed=_opt_int(head.get("seed"), origin),
        batch=_int(head.get("batch", 64), "batch", origin), view=str(head.get("view", "wall")),
        workloads=_workloads(_table(data, "workloads", origin), origin, searched), objectives=objectives,
        constraints=_constraints(_table(data, "constraints", origin), origin), parameters=parameters, path=origin,
        families=pairs)
    if not spec.parameters:
        raise StudyError(f"{origin}: [parameters] is empty; give at least one hardware parameter to search")
    _check_dpus(spec, base_spec.dpus_available, origin)
    _check_families(spec, families, origin)
    return spec


def _fields(hw: Any) -> dict[str, Field]:
    """The numeric fields of ``hw``'s family's spec, by name."""
    return {f.name: f for f in fields_of(hw)}


def _families(table: Mapping[str, Any], base: Any, origin: str) -> dict[str, Any]:
    """family -> its baseline spec: the ``[study] baseline`` for its own family, ``[families]`` for the others."""
    home = architecture_of(base).name
    out = {home: base}
    for family, name in table.items():
        try:
            hw = load_hardware(str(name))
        except SpecError as exc:
            raise StudyError(f"{origin}: families.{family}: {exc}") from None
        if architecture_of(hw).name != family:
            raise StudyError(f"{origin}: families.{family} = {name!r} is a {architecture_of(hw).name} spec; name a "
                             f"spec of the {family} family")
        if family == home and hw.name != base.name:
            raise StudyError(f"{origin}: families.{family} = {name!r} but the {family} family's baseline is the "
                             f"study's baseline {base.name}; drop the line or change [study] baseline")
        out[family] = hw
    return out


def _family_axis(parameters: tuple[Parameter, ...], families: Mapping[str, Any], home: str, origin: str
                 ) -> tuple[tuple[Parameter, ...], tuple[tuple[str, str], ...]]:
    """With a ``family`` parameter: every hardware parameter as a ``FamilyParameter`` and the (family, baseline)
    pairs of the axis; without one, the parameters unchanged (one of another family is refused)."""
    axis = next((p for p in parameters if p.field == FAMILY_FIELD), None)
    tagged = [p for p in parameters if isinstance(p, FamilyParameter)]
    if axis is None:
        stray = next((p for p in tagged if p.family != home), None)
        if stray is not None:
            raise StudyError(f"{origin}: parameters.{stray.name} is a {stray.family} parameter but the study "
                             f"searches only {home} (its baseline's family); add family = {{ choices = "
                             f"[\"{home}\", \"{stray.family}\"] }} to [parameters]")
        return tuple(p if not isinstance(p, FamilyParameter) else _plain(p) for p in parameters), ()
    for c in axis.choices:
        if c not in families:
            raise StudyError(f"{origin}: parameters.{axis.name}: family {c!r} has no baseline spec; add "
                             f"[families] {c} = \"<spec>\"{suggest(str(c), FAMILIES)}")
    out = []
    for p in parameters:
        if isinstance(p, FamilyParameter) and p.family not in axis.choices:
            raise StudyError(f"{origin}: parameters.{p.name} is a {p.family} parameter but parameters.{axis.name} "
                             f"never picks {p.family}; add it to the choices or drop the parameter")
        if p.field in ALGORITHM_FIELDS or p is axis:
            out.append(p)
        else:
            family = p.family if isinstance(p, FamilyParameter) else home
            out.append(FamilyParameter(**{**_asdict(p), "family": family}))
    pairs = tuple((f, families[f].name) for f in dict.fromkeys((home, *map(str, axis.choices))))
    return tuple(out), pairs


def _asdict(p: Parameter) -> dict[str, Any]:
    return {name: getattr(p, name) for name in Parameter.__dataclass_fields__}


def _plain(p: Parameter) -> Parameter:
    return Parameter(**_asdict(p))


def _check_families(spec: StudySpec, families: Mapping[str, Any], origin: str) -> None:
    """Every family of the axis can run the workloads (their layouts), has the objectives' units and, for energy or
    power, the fields they read."""
    needs_power = spec.constraints.max_power_w is not None or any(o.kind == "energy_per_epoch"
                                                                  for o in spec.objectives)
    for family, _ in spec.families:
        hw, info = families[family], architecture(family)
        for case in spec.workloads:
            layout = DATASETS[case.dataset].layout
            if layout not in info.layouts:
                raise StudyError(f"{origin}: the {family} family cannot run {case.dataset} ({layout} rows: "
                                 f"{info.layout_note}); limit [workloads] datasets to {info.layouts[0]} ones or drop "
                                 f"{family} from the family choices")
        need = max((o.dpus for o in spec.objectives if o.kind != "cost"), default=1)  # cost is per unit
        if need > hw.dpus_available and family != spec.families[0][0]:
            raise StudyError(f"{origin}: an objective runs on {need:,} {info.unit}s but the {family} "
                             f"baseline {hw.name} has {hw.dpus_available:,}; lower the objective's dpus")
        lacking = [f for f in POWER_FIELDS if f not in _fields(hw)]
        if needs_power and lacking:
            raise StudyError(f"{origin}: the {family} family has no power model ({', '.join(lacking)}); a study "
                             "searching it takes neither energy_per_epoch nor max_power_w")


def _check_dpus(spec: StudySpec, baseline_dpus: int, origin: str) -> None:
    """The objectives' DPU count must exist: on the baseline, or in the searched ``dpus_available`` range."""
    need = spec.max_dpus
    searched = spec.highest("dpus_available")
    if searched is None and need > baseline_dpus:
        raise StudyError(f"{origin}: an objective runs on {need:,} DPUs but the baseline {spec.baseline} has "
                         f"{baseline_dpus:,}; use dpus <= {baseline_dpus:,}, or search dpus_available (e.g. dpus = "
                         f"{{ field = \"dpus_available\", low = {baseline_dpus}, high = {need} }})")
    if searched is not None and need > searched:
        raise StudyError(f"{origin}: an objective runs on {need:,} DPUs but the search gives dpus_available at most "
                         f"{searched:,.0f}; raise its upper bound to {need:,} or lower the objective's dpus")


def _int(value: Any, key: str, origin: str) -> int:
    return int(value)


def _opt_int(value: Any, origin: str) -> int | None:
    return None if value is None else int(value)


def _as_list(value: Any, key: str, allowed: tuple[str, ...] | list[str], origin: str) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [str(i) for i in items]


def _workloads(table: Mapping[str, Any], origin: str, searched: tuple[Any, ...] | None = None
               ) -> tuple[WorkloadCase, ...]:
    datasets = _as_list(table.get("datasets", list(DATASETS)), "dataset", list(DATASETS), origin)
    models = _as_list(table.get("models", list(MODELS)), "model", MODELS, origin)
    if searched is not None and "optimizers" in table:
        raise StudyError(f"{origin}: the optimizer is searched (parameters.optimizer); drop [workloads] optimizers")
    optimizers = [str(o) for o in searched] if searched is not None else _as_list(
        table.get("optimizers", list(STUDY_OPTIMIZERS)), "optimizer", tuple(OPTIMIZERS), origin)
    return tuple(WorkloadCase(d, m, o) for d in datasets for m in models for o in optimizers)


def _objectives(raw: Any, origin: str) -> tuple[Objective, ...]:
    if raw is None:
        return (Objective("time_per_epoch"),)
    items = raw if isinstance(raw, list) else [raw]
    out = []
    for item in items:
        kind = str(item["kind"])
        target = item.get("target", 0.99)
        obj = Objective(kind, _int(item.get("dpus", 2048), "dpus", origin),
                        _int(item.get("low_dpus", 256), "low_dpus", origin),
                        _int(item.get("epochs", 1), "epochs", origin), _versus(kind, item.get("versus"), origin),
                        float(target))
        if obj.low_dpus >= obj.dpus:
            raise StudyError(f"{origin}: objective {kind}: low_dpus must be below dpus")
        out.append(obj)
    if len({o.kind for o in out}) != len(out):
        raise StudyError(f"{origin}: each objective kind may appear once")
    return tuple(out)


def _versus(kind: str, value: Any, origin: str) -> str | None:
    if value is None:
        return None
    if not kind.startswith("speedup_over_"):
        raise StudyError(f"{origin}: objective {kind}: 'versus' names the CPU or GPU of speedup_over_cpu / "
                         "speedup_over_gpu only; remove it")
    return str(value)


def _constraints(table: Mapping[str, Any], origin: str) -> Constraints:
    return Constraints(bool(table.get("fit_memory", True)), table.get("max_power_w"), table.get("max_cost"))


def _parameter(key: str, raw: Any, origin: str, families: Mapping[str, Any], home: str) -> Parameter:
    where = f"{origin}: parameters.{key}"
    target = str(raw.get("field", key))
    family = str(raw.get("family", home))
    if family not in families:
        raise StudyError(f"{where}: family = {family!r} has no baseline spec; add [families] {family} = \"<spec>\"")
    table = _fields(families[family])
    known = {*table, WORKLOAD_FIELD, STRUCTURAL_FIELD, *ALGORITHM_FIELDS, FAMILY_FIELD} if family == home else {*table}
    if "family" in raw and target in (*ALGORITHM_FIELDS, FAMILY_FIELD):
        raise StudyError(f"{where}: {target} is searched for every family; drop its family key")
    if "sets" not in raw and target not in known:
        other = next((f for f, hw in families.items() if f != family and target in _fields(hw)), None)
        if other is not None:
            raise StudyError(f"{where}: {target!r} is not a field of the {family} family ({families[family].name}) "
                             f"but of {other} ({families[other].name}); add family = \"{other}\"")
        raise StudyError(f"{where}: unknown hardware field {target!r} of the {family} family"
                         f"{suggest(target, known)}")
    made = _parameter_of(key, target, raw, where, table)
    return FamilyParameter(**{**_asdict(made), "family": family}) if "family" in raw else made


def _parameter_of(key: str, target: str, raw: Any, where: str, table: Mapping[str, Field]) -> Parameter:
    if "choices" in raw:
        return _choice(key, target, raw, where, table)
    unit = str(raw.get("unit", ""))
    low: Any = raw.get("low")
    high: Any = raw.get("high")
    if not (_number(low) and _number(high) and low < high):
        raise StudyError(f"{where}: needs numbers low < high, got low={low!r} high={high!r}")
    scale = str(raw.get("scale", "linear"))
    kind = str(raw.get("type", "int" if target in (WORKLOAD_FIELD,) or _is_int(target, table) else "float"))
    p = Parameter(key, target, kind, float(low), float(high), scale == "log", unit)
    _check_range(p, p.low * p.scale, where, table)
    _check_range(p, p.high * p.scale, where, table)
    return p


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_int(target: str, table: Mapping[str, Field] = FIELD_BY_NAME) -> bool:
    f = table.get(target)
    return bool(f and f.integer)


def _check_range(p: Parameter, si_value: float, where: str, table: Mapping[str, Field] = FIELD_BY_NAME) -> None:
    f = table.get(p.field)
    if f is not None and not f.low <= si_value <= f.high:
        raise StudyError(f"{where}: {si_value / p.scale:g} {p.unit} is outside the allowed range of {f.name} "
                         f"[{f.low / p.scale:g}, {f.high / p.scale:g}] {p.unit}".rstrip())


def _choice(key: str, target: str, raw: Mapping[str, Any], where: str,
            table: Mapping[str, Field] = FIELD_BY_NAME) -> Parameter:
    choices = raw["choices"]
    named = {FAMILY_FIELD: ("hardware family", FAMILIES), STRUCTURAL_FIELD: ("topology", TOPOLOGIES),
             OPTIMIZER_FIELD: ("optimizer", OPTIMIZERS)}
    if target in named:
        what, known = named[target]
        for c in choices:
            if c not in known:
                raise StudyError(f"{where}: unknown {what} {c!r}{suggest(str(c), known)}")
    if target == SYNC_FIELD:
        for c in choices:
            if isinstance(c, bool) or not isinstance(c, int) or c < 1:
                raise StudyError(f"{where}: sync_every choices must be positive whole numbers, got {c!r}")
    sets_raw = raw.get("sets", {})
    sets = []
    for choice, fields in sets_raw.items():
        if choice not in choices:
            raise StudyError(f"{where}: sets.{choice} is not one of the choices {choices}")
        for name, value in fields.items():
            if name not in table:
                raise StudyError(f"{where}: sets.{choice}: unknown field {name!r}{suggest(name, table)}")
            f = table[name]
            if isinstance(value, bool) or not isinstance(value, int | float) or not f.low <= value <= f.high:
                raise StudyError(f"{where}: sets.{choice}.{name} = {value!r} is outside [{f.low:g}, {f.high:g}]")
        sets.append((str(choice), tuple((n, float(v)) for n, v in fields.items())))
    if not sets and target not in table and target not in (STRUCTURAL_FIELD, *ALGORITHM_FIELDS, FAMILY_FIELD):
        raise StudyError(f"{where}: a choice needs a hardware field or 'sets'")
    if not sets and target in table:
        for c in choices:
            if isinstance(c, bool) or not isinstance(c, int | float):
                raise StudyError(f"{where}: choices of {target} must be numbers (SI), got {c!r}")
    return Parameter(key, target, "choice", choices=tuple(choices), sets=tuple(sets), unit=str(raw.get("unit", "")))


__all__ = ["OBJECTIVES", "SAMPLERS", "SCALINGS", "UNITS", "Constraints", "FamilyParameter", "Objective", "Parameter",
           "StudySpec", "WorkloadCase", "from_mapping", "load_study"]
