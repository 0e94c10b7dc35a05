"""The study's figures as data: ``studies/pim-opt/figNN.toml`` loaded into frozen, validated records.

A figure file says what the PIM-Opt study measured and with which configuration, so that ``pimmodel reproduce``
can compute the same figure from the models::

    [figure]
    id = "fig5"                        # figN, the study's figure number
    title = "..."                      # the PNG's title
    shows = "..."                      # one line for ``reproduce --list``
    kind = "time-to-accuracy"          # data-movement | breakdown | time-to-accuracy | batch-sweep | scaling
    source = "PIM-Opt Fig. 5"
    finding = "..."                    # the study's finding, one sentence
    finding_basis = "..."              # where that sentence comes from
    notes = ["..."]                    # what the model cannot know about this figure

    [workload]
    dataset = "yfcc100m-hnfc6"         # a preset (the study's data as stored on the DPUs)
    models = ["lr", "svm"]
    optimizers = ["ma-sgd", "ga-sgd", "admm"]
    dpus = [2048]                      # one count, or the counts a scaling figure sweeps
    scaling = "weak"
    epochs = 10
    view = "wall"                      # breakdown for the benchmark figures (data-movement, breakdown)
    batch_size = 8                     # MA-SGD and ADMM: rows per DPU per local step
    global_batch_size = 4096           # GA-SGD: rows per round over all DPUs
    platforms = ["pim", "cpu", "gpu"]

    [[sweep]]                          # batch-sweep figures only: one panel each
    model = "svm"
    optimizer = "ma-sgd"
    batch_sizes = [8, 16, 32, 64]      # per DPU (MA-SGD, ADMM) or global (GA-SGD)

Every bad key or value is a one-line ``StudyError`` naming the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import PimModelError, StudyError, suggest
from ..phases import VIEWS
from ..resources import data_dir
from ..specs import DATASETS, MODELS, OPTIMIZERS, SCALINGS, Workload, optimizer_info
from ..specs._toml import read_toml
from ..specs.workload import resolve_hyperparams

KINDS = ("data-movement", "breakdown", "time-to-accuracy", "batch-sweep", "scaling")
"""What a figure plots: the benchmark builds' bytes and throughput, their per-epoch time split, a metric over
time per platform, a batch-size sweep (time and metric, CPU vs PIM), a DPU-count sweep (time and metric)."""
BENCHMARK_KINDS = ("data-movement", "breakdown")
"""Kinds drawn from the study's instrumented benchmark builds: the breakdown view, PIM only, no training."""
PLATFORMS = ("pim", "cpu", "gpu")
FOLDER = "pim-opt"
_ID = re.compile(r"^(?:fig(?:ure)?[ _-]?)?0*([1-9][0-9]*)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Sweep:
    """One panel of a batch-size figure: a model and optimizer over batch sizes (per DPU for MA-SGD and ADMM,
    global for GA-SGD)."""

    model: str
    optimizer: str
    batch_sizes: tuple[int, ...]

    @property
    def label(self) -> str:
        return f"{self.model.upper()} {optimizer_info(self.optimizer).label}"


@dataclass(frozen=True, slots=True)
class FigureSpec:
    """One figure of the study: what it shows, its configuration, the study's finding and the model's limits."""

    id: str
    number: int
    title: str
    shows: str
    kind: str
    source: str
    finding: str
    finding_basis: str
    notes: tuple[str, ...]
    dataset: str
    models: tuple[str, ...]
    optimizers: tuple[str, ...]
    dpus: tuple[int, ...]
    scaling: str
    epochs: int
    view: str
    batch_size: int | None
    global_batch_size: int | None
    platforms: tuple[str, ...]
    sweeps: tuple[Sweep, ...] = ()
    path: str = ""

    @property
    def layout(self) -> str:
        return DATASETS[self.dataset].layout

    @property
    def metric(self) -> str:
        """``accuracy`` (dense data) or ``auc`` (sparse data), as the study reports them."""
        return "accuracy" if self.layout == "dense" else "auc"

    @property
    def trains(self) -> bool:
        """Whether the figure needs accuracy curves (stand-in training)."""
        return self.kind not in BENCHMARK_KINDS

    def workload(self, model: str, optimizer: str, dpus: int, batch: int | None = None) -> Workload:
        """The PIM workload of one point: the figure's batches, or ``batch`` (a sweep's value: per DPU for
        MA-SGD and ADMM, global for GA-SGD) for the optimizer it applies to."""
        b, big_b = self.batch_size, self.global_batch_size
        is_global = optimizer_info(optimizer).batch == "global"
        if batch is not None:
            b, big_b = (b, batch) if is_global else (batch, big_b)
        ds = DATASETS[self.dataset]
        hyper, notes = resolve_hyperparams(ds, model, optimizer, dpus, self.scaling, batch_size=b,
                                           global_batch_size=big_b if is_global else None,
                                           epochs=self.epochs)
        return Workload(ds, model, optimizer, dpus, scaling=self.scaling, epochs=self.epochs, hyper=hyper,
                        notes=notes)

    def points(self) -> list[tuple[str, str, int, int | None]]:
        """Every (model, optimizer, DPUs, swept batch or None) the figure computes, in drawing order."""
        if self.kind == "batch-sweep":
            return [(s.model, s.optimizer, self.dpus[0], v) for s in self.sweeps for v in s.batch_sizes]
        return [(m, o, n, None) for m in self.models for o in self.optimizers for n in self.dpus]


# ---------------------------------------------------------------- finding and loading
def folder() -> Path:
    """Where the shipped figure files live (``studies/pim-opt``; ``$PIMMODEL_STUDIES_DIR/pim-opt`` if set)."""
    return data_dir("studies") / FOLDER


def figure_paths() -> list[Path]:
    """The shipped figure files, in figure order."""
    return sorted(folder().glob("fig*.toml"), key=lambda p: _number(p.stem) or 0)


def _number(name: str) -> int | None:
    match = _ID.match(name.strip())
    return int(match.group(1)) if match else None


def resolve(name: str) -> Path:
    """The file of figure ``name`` (``fig5``, ``5``, ``fig05``) or a figure file's path."""
    if name.endswith(".toml") or "/" in name:
        return Path(name)
    number = _number(name)
    shipped = {(_number(p.stem) or 0): p for p in figure_paths()}
    if number is None or number not in shipped:
        valid = [f"fig{n}" for n in sorted(shipped)]
        raise StudyError(f"unknown figure {name!r}{suggest(name, valid)}; `pimmodel reproduce --list` lists them")
    return shipped[number]


def load_figure(name_or_path: str | Path) -> FigureSpec:
    """Read and validate one figure file (by figure id or path); one-line ``StudyError`` for anything wrong."""
    path = name_or_path if isinstance(name_or_path, Path) else resolve(name_or_path)
    try:
        data = read_toml(path, "figure")
    except PimModelError as exc:
        raise StudyError(str(exc)) from None
    return from_mapping(data, str(path))


def load_all() -> list[FigureSpec]:
    """Every shipped figure, in figure order."""
    return [load_figure(p) for p in figure_paths()]


# ---------------------------------------------------------------- validation
def figure_schema() -> Any:
    """The schema of a figure file (``specs.schema``): its tables, keys, types and the names they take; what a
    kind needs and whether every point is a workload is checked by ``from_mapping``."""
    return _figure_schema(tuple(OPTIMIZERS))


@lru_cache(maxsize=4)
def _figure_schema(optimizers: tuple[str, ...]) -> Any:
    # lazy imports keep the CLI's cold start fast (msgspec is imported only when a file is validated)
    from typing import Annotated

    import msgspec

    from ..specs.schema import literal

    def struct(name: str, fields: list[Any]) -> Any:
        return msgspec.defstruct(name, fields, forbid_unknown_fields=True, kw_only=True)

    text = Annotated[str, msgspec.Meta(pattern=r"\S")]
    count = Annotated[int, msgspec.Meta(ge=1)]
    counts = Annotated[list[count], msgspec.Meta(min_length=1)]

    def names(values: Any) -> Any:
        return Annotated[list[literal(values)], msgspec.Meta(min_length=1)]  # type: ignore[misc]

    unset = msgspec.UNSET
    figure = struct("figure", [
        ("id", Annotated[str, msgspec.Meta(pattern=r"^fig[1-9][0-9]*$", description="'fig' and the study's "
                                                                                    "figure number")]),
        ("title", text), ("shows", text), ("kind", literal(KINDS)), ("source", text), ("finding", text),
        ("finding_basis", text), ("notes", list[text], unset)])
    workload = struct("workload", [
        ("dataset", literal(DATASETS)), ("models", names(MODELS), unset), ("optimizers", names(optimizers), unset),
        ("dpus", counts), ("scaling", literal(SCALINGS)), ("epochs", count), ("view", literal(VIEWS)),
        ("batch_size", count, unset), ("global_batch_size", count, unset), ("platforms", names(PLATFORMS), unset)])
    sweep = struct("sweep", [("model", literal(MODELS)), ("optimizer", literal(optimizers)),
                             ("batch_sizes", counts)])
    return struct("figure_file", [("figure", figure), ("workload", workload),
                                  ("sweep", list[sweep], unset)])  # type: ignore[valid-type]


def _table(data: Mapping[str, Any], key: str, origin: str) -> Mapping[str, Any]:
    value: Mapping[str, Any] = data[key]
    return value


def _text(table: Mapping[str, Any], key: str, where: str) -> str:
    return " ".join(str(table[key]).split())


def _count(value: Any, key: str, where: str) -> int:
    return int(value)


def _names(value: Any, key: str, allowed: tuple[str, ...], where: str) -> tuple[str, ...]:
    if value is None:
        raise StudyError(f"{where}: {key} is missing (a non-empty list, e.g. {list(allowed)})")
    if len(set(value)) != len(value):
        raise StudyError(f"{where}: {key} lists a value twice: {value}")
    return tuple(value)


def _counts(value: Any, key: str, where: str) -> tuple[int, ...]:
    out = tuple(int(v) for v in value)
    if list(out) != sorted(set(out)):
        raise StudyError(f"{where}: {key} must be ascending without repeats, got {list(out)}")
    return out


def _choice(table: Mapping[str, Any], key: str, allowed: tuple[str, ...], where: str) -> str:
    return str(table[key])


def _sweeps(raw: Any, origin: str) -> tuple[Sweep, ...]:
    if raw is None:
        return ()
    out = []
    for k, item in enumerate(raw, 1):
        where = f"{origin}: sweep[{k}]"
        model = _choice(item, "model", MODELS, where)
        optimizer = _choice(item, "optimizer", tuple(OPTIMIZERS), where)
        out.append(Sweep(model, optimizer, _counts(item.get("batch_sizes"), "batch_sizes", where)))
    return tuple(out)


def from_mapping(data: Mapping[str, Any], origin: str) -> FigureSpec:
    """A figure from parsed TOML (``origin`` names it in errors)."""
    # lazy imports keep the CLI's cold start fast
    from ..specs.schema import validate

    validate(data, figure_schema(), origin, StudyError)
    head, work = _table(data, "figure", origin), _table(data, "workload", origin)
    fid = _text(head, "id", f"{origin}: figure")
    number = _number(fid) or 0
    notes = head.get("notes", [])
    where = f"{origin}: workload"
    kind = _choice(head, "kind", KINDS, f"{origin} [figure]")
    dataset = _choice(work, "dataset", tuple(DATASETS), where)
    sweeps = _sweeps(data.get("sweep"), origin)
    if kind == "batch-sweep":
        if not sweeps:
            raise StudyError(f"{origin}: a batch-sweep figure needs at least one [[sweep]] panel")
        for key in ("models", "optimizers", "batch_size", "global_batch_size"):
            if key in work:
                raise StudyError(f"{where}: {key} is set by the [[sweep]] panels of a batch-sweep figure; remove it")
        models = tuple(dict.fromkeys(s.model for s in sweeps))
        optimizers = tuple(dict.fromkeys(s.optimizer for s in sweeps))
    else:
        if sweeps:
            raise StudyError(f"{origin}: [[sweep]] belongs to batch-sweep figures, not {kind}")
        models = _names(work.get("models"), "models", MODELS, where)
        optimizers = _names(work.get("optimizers"), "optimizers", tuple(OPTIMIZERS), where)
    platforms = _names(work.get("platforms", ["pim"]), "platforms", PLATFORMS, where)
    batch = work.get("batch_size")
    big_batch = work.get("global_batch_size")
    spec = FigureSpec(
        id=fid, number=number, title=_text(head, "title", f"{origin} [figure]"),
        shows=_text(head, "shows", f"{origin} [figure]"), kind=kind,
        source=_text(head, "source", f"{origin} [figure]"), finding=_text(head, "finding", f"{origin} [figure]"),
        finding_basis=_text(head, "finding_basis", f"{origin} [figure]"),
        notes=tuple(" ".join(n.split()) for n in notes), dataset=dataset, models=models, optimizers=optimizers,
        dpus=_counts(work.get("dpus"), "dpus", where), scaling=_choice(work, "scaling", SCALINGS, where),
        epochs=_count(work.get("epochs"), "epochs", where), view=_choice(work, "view", VIEWS, where),
        batch_size=None if batch is None else _count(batch, "batch_size", where),
        global_batch_size=None if big_batch is None else _count(big_batch, "global_batch_size", where),
        platforms=platforms, sweeps=sweeps, path=origin)
    _check_consistency(spec, where)
    return spec


def _check_consistency(spec: FigureSpec, where: str) -> None:
    """What a kind needs, and every point buildable as a workload (batches that fit the shards and DPUs)."""
    if "pim" not in spec.platforms:
        raise StudyError(f"{where}: platforms must include 'pim'")
    benchmark = spec.kind in BENCHMARK_KINDS
    if benchmark and (spec.view != "breakdown" or spec.platforms != ("pim",)):
        raise StudyError(f"{where}: a {spec.kind} figure shows the benchmark builds: view = \"breakdown\" and "
                         "platforms = [\"pim\"]")
    if not benchmark and spec.view != "wall":
        raise StudyError(f"{where}: a {spec.kind} figure times production runs: view = \"wall\"")
    if spec.kind == "scaling" and len(spec.dpus) < 2:
        raise StudyError(f"{where}: a scaling figure needs at least two DPU counts, got {list(spec.dpus)}")
    if spec.kind != "scaling" and len(spec.dpus) != 1:
        raise StudyError(f"{where}: a {spec.kind} figure runs on one DPU count, got {list(spec.dpus)}")
    if spec.kind != "batch-sweep":
        local = [optimizer_info(o).label for o in spec.optimizers if optimizer_info(o).batch == "local"]
        whole = [optimizer_info(o).label for o in spec.optimizers if optimizer_info(o).batch == "global"]
        if spec.batch_size is None and local:
            raise StudyError(f"{where}: batch_size (rows per DPU per local step of {' and '.join(local)}) is "
                             "missing")
        if spec.global_batch_size is None and whole:
            raise StudyError(f"{where}: global_batch_size ({' and '.join(whole)}'s rows per round) is missing")
    for model, optimizer, dpus, batch in spec.points():
        try:
            spec.workload(model, optimizer, dpus, batch)
        except PimModelError as exc:
            what = f"{model} {optimizer} at {dpus:,} DPUs" + ("" if batch is None else f", batch {batch:,}")
            raise StudyError(f"{where}: {what}: {exc}") from None
