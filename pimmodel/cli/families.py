"""The training families on the command line: ``--workload kmeans --points 25.6M --dims 16 --clusters 16`` for
``predict``, ``scale`` and ``emulate`` (the options are declared here once; ``--workload linear``, the default, is
the study's LR/SVM family and its own options)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ..specs.families import FAMILIES

Workload = Annotated[str, typer.Option("--workload", help=f"Training workload family: {', '.join(FAMILIES)} "
                                       "(linear: the study's LR/SVM with --optimizer, --dataset, --model).")]
Points = Annotated[str | None, typer.Option("--points", help="K-means: points (e.g. 25.6M, 100k).")]
Dims = Annotated[int | None, typer.Option("--dims", help="K-means: features per point.")]
Clusters = Annotated[int | None, typer.Option("--clusters", help="K-means: clusters k.")]
Iterations = Annotated[int | None, typer.Option("--iterations", help="K-means: Lloyd iterations (default: the "
                                                "emulator's count on a synthetic sample).")]
NInit = Annotated[int, typer.Option("--n-init", help="K-means: restarts (dpu_kmeans' default 10 in its "
                                    "benchmarks; each restart repeats the iterations).")]


@dataclass(frozen=True)
class FamilyOptions:
    """``--workload`` and the K-means sizes of ``predict`` and ``scale`` (an option group,
    ``options.option_groups``)."""

    workload: Workload = "linear"
    points: Points = None
    dims: Dims = None
    clusters: Clusters = None
    iterations: Iterations = None
    n_init: NInit = 1


def _sizes(points: str | None, dims: int | None, clusters: int | None) -> tuple[int, int, int]:
    # lazy imports keep the CLI's cold start fast
    from ..errors import SpecError
    from ..specs.families import parse_count

    missing = [f for f, v in (("--points", points), ("--dims", dims), ("--clusters", clusters)) if v is None]
    if missing:
        raise SpecError(f"--workload kmeans needs {', '.join(missing)}, e.g. --points 25.6M --dims 16 --clusters 16")
    assert points is not None and dims is not None and clusters is not None
    if dims < 1 or clusters < 1:
        raise SpecError("--dims and --clusters must be positive")
    return parse_count(points, "--points"), dims, clusters


def is_study_family(workload: str, ctx: typer.Context | None = None) -> bool:
    """Whether ``workload`` is the study's own family (its optimizers' pipeline runs it; every other family runs
    through ``predict_family`` / ``emulate_family``), after ``check_workload``'s refusals."""
    from ..specs.families import family_info

    return family_info(check_workload(workload, ctx)).study


def given_options(ctx: typer.Context | None) -> tuple[str, ...]:
    """The options (Python names) the command line or their environment variables gave, not their defaults."""
    if ctx is None:
        return ()
    names = [p.name for p in ctx.command.params if p.name]
    sources = {n: ctx.get_parameter_source(n) for n in names}
    return tuple(n for n, src in sources.items() if src is not None and src.name in ("COMMANDLINE", "ENVIRONMENT"))


def check_workload(workload: str, ctx: typer.Context | None = None) -> str:
    """The family's name; an option given on the command line (or by its environment variable) that this family
    does not read in the running command is refused with one line (``specs.families.refused_options``)."""
    # lazy imports keep the CLI's cold start fast
    from ..errors import SpecError
    from ..specs.families import family_info, refused_options

    name = family_info(workload).name
    if ctx is None or ctx.info_name is None:
        return name
    flags = {p.name: p.opts[0] for p in ctx.command.params if p.name}
    refused = refused_options(name, ctx.info_name, list(given_options(ctx)))
    if refused:
        option, owners = refused[0]
        where = " or ".join(f"--workload {f}" for f in owners) or "no workload of this command"
        more = f" (also refused: {', '.join(flags[o] for o, _ in refused[1:])})" if len(refused) > 1 else ""
        raise SpecError(f"{flags[option]} does not apply to --workload {name} in {ctx.info_name}: only {where} "
                        f"reads it; drop it{more}")
    return name


def predict_family(family: FamilyOptions, hardware: str, dpus: list[int], output: Path | None, json: bool,
                   scaling: bool = False, placement: str | None = None) -> None:
    """``predict`` / ``scale`` of a family other than ``linear`` (``placement``: ``--placement``)."""
    # lazy imports keep the CLI's cold start fast
    from ..errors import SpecError
    from ..families import predict_kmeans
    from . import options as O

    n, d, k = _sizes(family.points, family.dims, family.clusters)
    if family.iterations is not None and family.iterations < 1:
        raise SpecError("--iterations must be at least 1")
    if family.n_init < 1:
        raise SpecError("--n-init must be at least 1")
    O.check_output(output)
    hw = O.hardware(hardware, "predict", workload="kmeans", placement=placement)
    records = [predict_kmeans(n, d, k, c, hw, family.iterations, family.n_init) for c in dpus]
    if scaling:
        base = records[0]["per_iteration_s"]["total"]
        for r in records:
            speedup = base / r["per_iteration_s"]["total"]
            r["scaling_metrics"] = {"speedup": speedup, "efficiency": speedup / (r["dpus"] / records[0]["dpus"])}
    record = {"points": records, "provenance": O.provenance(hw)}
    if O.finish(record, output, "points", json):
        return
    _table(records, scaling)


def _table(records: list[dict[str, Any]], scaling: bool) -> None:
    # lazy imports keep the CLI's cold start fast
    from rich import box
    from rich.table import Table

    from ..phases import PHASE_LABELS, PHASES
    from ..report.tables import stdout_console

    r0 = records[0]
    table = Table(title=f"K-means (dpu_kmeans) · {r0['points']:,} points x {r0['dims']} dims · k = {r0['clusters']} · "
                  f"{r0['iterations']:g} iterations ({r0['iterations_from']}) · {r0['hardware']}",
                  title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("DPUs", justify="right")
    for p in PHASES:
        table.add_column(PHASE_LABELS[p] + " ms", justify="right")
    table.add_column("per iter. ms", justify="right")
    table.add_column("run s", justify="right")
    if scaling:
        table.add_column("speedup", justify="right")
    for r in records:
        row = [f"{r['dpus']:,}"] + [f"{1e3 * r['per_iteration_s'][p]:.3g}" for p in PHASES]
        row += [f"{1e3 * r['run_s']['per_iteration']:.4g}", f"{r['run_s']['total']:.4g}"]
        if scaling:
            row.append(f"{r['scaling_metrics']['speedup']:.2f}")
        table.add_row(*row)
    stdout_console().print(table)


def load_points(dataset: str, points: str | None, dims: int | None, clusters: int, seed: int) -> Any:
    """K-means data for ``emulate``: ``blobs`` (synthetic, --points and --dims), ``iris`` or ``wine``
    (scikit-learn's bundled data sets) or a .npy file of shape (points, dims)."""
    # lazy imports keep the CLI's cold start fast
    import numpy as np

    from ..emulator.kmeans import blobs
    from ..errors import DataError, SpecError
    from ..specs.families import parse_count

    if dataset in ("blobs", "synthetic-yfcc"):
        if points is None or dims is None:
            raise SpecError("--workload kmeans --dataset blobs needs --points and --dims")
        return blobs(parse_count(points, "--points"), dims, clusters, seed)
    if dataset in ("iris", "wine"):
        try:
            from sklearn import datasets
        except ImportError:
            raise DataError(f"--dataset {dataset} needs scikit-learn: pip install 'pimmodel[sklearn]'") from None
        return getattr(datasets, f"load_{dataset}")().data
    path = Path(dataset)
    if path.suffix == ".npy" and path.is_file():
        return np.load(path)
    raise SpecError(f"--workload kmeans --dataset takes blobs, iris, wine or a .npy file, got {dataset!r}")


def emulate_family(workload: str, dataset: str, hardware: str, dpus: int, points: str | None, dims: int | None,
                   clusters: int | None, n_init: int, seed: int, output: Path | None, json: bool) -> None:
    """``emulate`` of a family other than ``linear``: train in the emulator, its phases beside the model's."""
    # lazy imports keep the CLI's cold start fast
    from ..errors import SpecError
    from ..families import emulate_kmeans
    from . import options as O

    if clusters is None or clusters < 1:
        raise SpecError("--workload kmeans needs --clusters (a positive count)")
    O.check_output(output)
    hw = O.hardware(hardware, "emulate", workload="kmeans")
    data = load_points(dataset, points, dims, clusters, seed)
    from .logs import Task

    with O.on_interrupt(lambda: "nothing was kept (emulate writes no file)"), \
            Task(f"emulating K-means (k = {clusters}) on {dpus:,} DPUs", n_init, label="K-means",
                 unit="restarts") as task:

        def progress(restarts: int, iterations: int) -> None:
            task.update(completed=restarts, description=f"restart {restarts + 1} of {n_init}: {iterations} Lloyd "
                                                        "iterations")

        result = emulate_kmeans(data, clusters, dpus, hw, n_init=n_init, seed=seed, progress=progress)
        task.update(completed=n_init)
    record = {**result, "provenance": O.provenance(hardware, seed=seed)}
    if O.finish(record, output, None, json):
        return
    e, m = result["emulated"], result["model"]
    typer.echo(f"K-means emulated on {dpus:,} DPUs: {e['points']:,} points x {e['dims']}, k = {clusters}, "
               f"{result['iterations']} iterations, inertia {result['inertia']:.6g}")
    typer.echo("per iteration (ms)   emulator     model   (consistency, not evidence about hardware)")
    for p in e["per_iteration_s"]:
        typer.echo(f"  {p:<18} {1e3 * e['per_iteration_s'][p]:9.4g} {1e3 * m['per_iteration_s'][p]:9.4g}")
