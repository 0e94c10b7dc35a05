"""Options shared by several commands, and turning them into specs (no business logic)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import SpecError, check_known, suggest
from ..specs import (
    MODELS,
    OPTIMIZERS,
    REGISTRY,
    SCALINGS,
    DatasetSpec,
    HardwareSpec,
    Workload,
    load_dataset,
    load_hardware,
    resolve_hyperparams,
)

Hardware = Annotated[str, typer.Option("--hardware", envvar="PIMMODEL_HARDWARE", show_envvar=True,
                                       help="Hardware spec: a name in hardware_specs/ or a TOML file.")]
Placement = Annotated[str | None, typer.Option("--placement", help="NUMA placement of the host buffers: local (each "
                                              "rank's socket), remote (the other socket), interleaved (numactl "
                                              "--interleave=all), one-node (all on the first socket: the ranks "
                                              "beyond [platform] ranks_per_socket remote). Default: the spec's "
                                              "[platform] remote_buffer_share and buffers_on_one_node.")]
Dataset = Annotated[str, typer.Option("--dataset", help="yfcc100m-hnfc6, criteo-1tb, or a dataset TOML file.")]
Model = Annotated[str, typer.Option("--model", help="lr or svm.")]
Tasklets = Annotated[int, typer.Option("--tasklets", help="Tasklets (hardware threads) per DPU.")]
Scaling = Annotated[str, typer.Option("--scaling", help="weak (fixed rows per DPU) or strong (fixed dataset).")]
Epochs = Annotated[int, typer.Option("--epochs", help="Global epochs.")]
BatchSize = Annotated[int | None, typer.Option("--batch-size", help="Per-DPU mini-batch b of MA-SGD and ADMM "
                                                "(default: the study's).")]
GlobalBatch = Annotated[int | None, typer.Option("--global-batch-size", help="Global batch B of GA-SGD "
                                                  "(default: the study's).")]
View = Annotated[str, typer.Option("--view", help="wall (kernel wall time, launches included) or breakdown "
                                   "(the study's instrumented accounting).")]
Json = Annotated[bool, typer.Option("--json", help="Print the machine-readable record instead of a table.")]
Features = Annotated[int | None, typer.Option("--features", help="Custom dataset: model length d.")]
Nonzeros = Annotated[int | None, typer.Option("--nonzeros", help="Custom dataset: active features per row.")]
RowsPerDpu = Annotated[int | None, typer.Option("--rows-per-dpu", help="Custom dataset: rows per DPU (weak).")]
Layout = Annotated[str | None, typer.Option("--layout", help="Custom dataset: dense or sparse.")]
OPTIMIZER_HELP = ", ".join(OPTIMIZERS)
Optimizer = Annotated[str, typer.Option("--optimizer", help=f"{OPTIMIZER_HELP}.")]
Calibration = Annotated[Path | None, typer.Option("--calibration", help="Calibration file from `pimmodel calibrate` "
                                                  "(default: the shipped one; 'defaults' = unfitted).")]
SYNC_DEFAULTS = ", ".join(f"{n} {i.default_sync_every}" for n, i in REGISTRY.items() if "sync_every" in i.takes)
SyncEvery = Annotated[int | None, typer.Option("--sync-every", help="H: local steps between two global averages "
                                               f"(local-sgd, hier-sgd; default: {SYNC_DEFAULTS}).")]


def check_sync_every(sync_every: int | None) -> dict[str, int]:
    """``--sync-every`` as a hyper-parameter override (validated: a positive whole number)."""
    if sync_every is None:
        return {}
    if sync_every < 1:
        raise SpecError(f"--sync-every must be a positive whole number of local steps, got {sync_every}")
    return {"sync_every": sync_every}


def dataset_from_options(name: str, features: int | None, nonzeros: int | None, rows_per_dpu: int | None,
                         layout: str | None) -> DatasetSpec:
    ds = load_dataset(name)
    if features is None and nonzeros is None and rows_per_dpu is None and layout is None:
        return ds
    layout = layout or ds.layout
    features = features if features is not None else ds.features
    if nonzeros is None:
        nonzeros = features if layout == "dense" else min(ds.nonzeros_per_row, features)
    rows = rows_per_dpu if rows_per_dpu is not None else ds.rows_per_dpu_weak
    slots = features if layout == "dense" else max(nonzeros, ds.slots_per_row if ds.layout == "sparse" else nonzeros)
    try:
        return replace(ds, name=f"custom({ds.name})", layout=layout, features=features, nonzeros_per_row=nonzeros,
                       slots_per_row=slots, rows_per_dpu_weak=rows, strong_rows=rows * 256,
                       bias_index=ds.bias_index if (features, layout) == (ds.features, ds.layout) else None)
    except TypeError as exc:  # pragma: no cover - dataclass field mismatch
        raise SpecError(str(exc)) from None


def make_workload(ds: DatasetSpec, model: str, optimizer: str, dpus: int, tasklets: int, scaling: str,
                  epochs: int, batch_size: int | None, global_batch: int | None, kernels: str = "study",
                  sync_every: int | None = None) -> Workload:
    """A workload from the options; hyper-parameters the user did not give are the study's, adapted to the
    deployment (``specs.resolve_hyperparams``), and the record says what was chosen."""
    check_known("model", model, MODELS)
    check_known("optimizer", optimizer, OPTIMIZERS)
    check_known("scaling", scaling, SCALINGS)
    if dpus <= 0:
        raise SpecError(f"--dpus must be a positive whole number, got {dpus}")
    hyper, notes = resolve_hyperparams(ds, model, optimizer, dpus, scaling, batch_size, global_batch, epochs,
                                       **check_sync_every(sync_every))
    return Workload(ds, model, optimizer, dpus, tasklets, scaling, epochs, hyper, kernels, notes)


@dataclass(frozen=True)
class Deployment:
    """How the study's job is deployed (an option group, ``option_groups``): tasklets, scaling, epochs and the
    batches, each the study's when not given."""

    tasklets: Tasklets = 16
    scaling: Scaling = "weak"
    epochs: Epochs = 10
    batch_size: BatchSize = None
    global_batch_size: GlobalBatch = None

    def workload(self, ds: DatasetSpec, model: str, optimizer: str, dpus: int,
                 sync_every: int | None = None) -> Workload:
        """``make_workload`` of these options."""
        return make_workload(ds, model, optimizer, dpus, self.tasklets, self.scaling, self.epochs, self.batch_size,
                             self.global_batch_size, sync_every=sync_every)


@dataclass(frozen=True)
class CustomDataset:
    """A dataset changed from the command line (an option group, ``option_groups``); none given: the named one."""

    features: Features = None
    nonzeros: Nonzeros = None
    rows_per_dpu: RowsPerDpu = None
    layout: Layout = None

    def dataset(self, name: str) -> DatasetSpec:
        """``dataset_from_options`` of these options."""
        return dataset_from_options(name, self.features, self.nonzeros, self.rows_per_dpu, self.layout)


def option_groups(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` as typer should read it: each parameter whose type is an option group (a frozen dataclass whose
    fields are ``Annotated`` typer options with defaults, such as ``Deployment``) stands for the group's options,
    in its place, and the command is called with the group built from them (typer has no option groups)."""
    signature = inspect.signature(command, eval_str=True)
    groups: dict[str, Any] = {p.name: p.annotation for p in signature.parameters.values()
                              if dataclasses.is_dataclass(p.annotation)}
    spread: list[inspect.Parameter] = []
    for p in signature.parameters.values():
        if p.name not in groups:
            spread.append(p)
            continue
        types = typing.get_type_hints(groups[p.name], include_extras=True)
        spread += [inspect.Parameter(f.name, p.kind, default=f.default, annotation=types[f.name])
                   for f in dataclasses.fields(groups[p.name])]

    @functools.wraps(command)
    def run(**options: Any) -> None:
        for name, group in groups.items():
            options[name] = group(**{f.name: options.pop(f.name) for f in dataclasses.fields(group)})
        command(**options)

    run.__signature__ = signature.replace(parameters=spread)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in spread}
    return run


def hardware(name: str, command: str = "", workload: str = "linear", placement: str | None = None,
             given: Sequence[str] = ()) -> HardwareSpec:
    """The spec ``--hardware`` names, refused (one line) when its architecture family does not take ``command``
    or the ``workload`` family (``ArchitectureInfo.commands``, ``workloads``) or an option of ``given`` (those
    the command line gave: ``ArchitectureInfo.ignores``); with its host buffers placed as ``--placement`` says
    (``specs.placement``) when given."""
    hw = load_hardware(name)
    from ..specs.architectures import check_command, check_options  # lazy imports keep the CLI's cold start fast

    check_command(hw, command, workload)
    check_options(hw, given)
    if placement is not None:
        from ..specs.placement import with_placement  # lazy imports keep the CLI's cold start fast

        hw = with_placement(hw, placement)
    return hw


def default_units(name: str) -> int:
    """``--dpus`` when it is not given: the study's 2,048, or the largest power of two a smaller system has."""
    from ..specs.architectures import study_units  # lazy imports keep the CLI's cold start fast

    return study_units(load_hardware(name))


def _list_parts(text: str, option: str, example: str) -> list[str]:
    """The comma-separated entries of a list option; an empty list or an empty entry (``256,,512``, a trailing
    comma) is an error, not silently dropped."""
    parts = [part.strip() for part in text.split(",")]
    if parts == [""]:
        raise SpecError(f"{option} needs at least one value, e.g. {example}")
    if "" in parts:
        raise SpecError(f"{option} {text!r} has an empty entry; separate the values with single commas, e.g. "
                        f"{example}")
    if len(set(parts)) != len(parts):
        repeated = next(p for p in parts if parts.count(p) > 1)
        raise SpecError(f"{option} {text!r} repeats {repeated}; give each value once, e.g. {example}")
    return parts


def parse_int_list(text: str, option: str) -> list[int]:
    """Whole numbers separated by commas (``--dpus 256,512,1024``)."""
    example = "256,512,1024"
    try:
        return [int(part) for part in _list_parts(text, option, example)]
    except ValueError:
        raise SpecError(f"{option} takes whole numbers separated by commas, e.g. {example}; got {text!r}") from None


def parse_name_list(text: str, option: str, choices: Sequence[str]) -> list[str]:
    """Names from ``choices`` separated by commas (``--group emulator,published``)."""
    names = _list_parts(text, option, ",".join(choices))
    for name in names:
        if name not in choices:
            raise SpecError(f"{option}: unknown value {name!r}{suggest(name, choices)}")
    return names


@contextlib.contextmanager
def on_interrupt(kept: Callable[[], str]) -> Iterator[None]:
    """Ctrl-C inside the block ends the command with one line saying what was kept (``kept()``, asked when it
    happens), exit code 130, instead of typer's silent exit."""
    try:
        yield
    except KeyboardInterrupt:
        # lazy imports keep the CLI's cold start fast (app imports the command modules)
        from .app import fail

        fail(f"interrupted; {kept()}", 130)
        raise


# ---------------------------------------------------------------- provenance and --output of every record
Output = Annotated[Path | None, typer.Option("--output", "-o", help="Also write the record to a file: .json (as "
                                             "--json prints it), .csv or .parquet (one row per item of the "
                                             "record, with the provenance columns; Parquet needs pandas and "
                                             "pyarrow). Written whole or not at all.")]


def check_output(output: Path | None) -> None:
    """A bad ``--output`` (or the ``--log-file`` itself) is one line before any work starts."""
    if output is not None:
        # lazy imports keep the CLI's cold start fast
        from ..report.records import check_output as check
        from .logs import not_the_log

        not_the_log(output, "--output")
        check(output)


def check_plot(plot: Path | None) -> None:
    """A bad ``--plot`` file (or the ``--log-file`` itself) is one line before any work starts."""
    if plot is not None:
        # lazy imports keep the CLI's cold start fast
        from ..report.plots import check_plot_path
        from .logs import not_the_log

        not_the_log(plot, "--plot")
        check_plot_path(plot)


def provenance(hardware: object = None, calibration: object = "none", seed: int | None = None) -> dict:
    """``api.provenance`` as a record (``calibration="none"``: the record used no calibration)."""
    # lazy imports keep the CLI's cold start fast
    from ..api import provenance as made

    if calibration == "none":
        return made(hardware, seed=seed).to_record()  # type: ignore[arg-type]
    return made(hardware, calibration, seed).to_record()  # type: ignore[arg-type]


def finish(record: dict, output: Path | None, rows: str | None, as_json: bool) -> bool:
    """Write ``record`` to ``--output`` (rows: the key of its list of items, None: one row) and print it as JSON
    with ``--json``; True when it was printed (the caller prints its table otherwise)."""
    if output is not None:
        # lazy imports keep the CLI's cold start fast
        from ..report.records import write_record

        write_record(output, record, rows)
        if not as_json:
            typer.echo(f"record written to {output}", err=True)
    if as_json:
        # lazy imports keep the CLI's cold start fast
        from ..report.json import emit

        emit(record)
    return as_json
