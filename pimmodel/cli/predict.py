"""``pimmodel predict``, ``pimmodel scale`` and ``pimmodel equations``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..specs.optimizers import STUDY_OPTIMIZERS
from . import families as F
from . import options as O


def _records(hw_name: str, dataset: str, model: str, optimizers: list[str], dpus: list[int],
             deployment: O.Deployment, view: str, custom: O.CustomDataset, calibration: Path | None = None,
             with_interval: bool = False, sync_every: int | None = None,
             mark_infeasible: bool = False, placement: str | None = None,
             given: tuple[str, ...] = ()) -> tuple[list[dict], dict[str, Any]]:
    """The prediction records, and the provenance they share (the hardware and calibration they were made
    with). ``mark_infeasible``: a DPU count whose data does not fit the DPUs' memory gives a record
    ``{"optimizer", "dpus", "feasible": false, "reason"}`` instead of refusing the whole request."""
    # lazy imports keep the CLI's cold start fast
    from ..api import predict, predict_interval, provenance
    from ..calibration.result import load_calibration
    from ..calibration.transfers import epoch_interval
    from ..errors import CapacityError
    from ..specs.architectures import architecture_of

    hw = O.hardware(hw_name, "predict", placement=placement, given=given)
    ds = custom.dataset(dataset)
    cal = load_calibration(calibration)
    records = []
    for optimizer in optimizers:
        for n in dpus:
            w = deployment.workload(ds, model, optimizer, n, sync_every=sync_every)
            try:
                record = predict(w, hw, view, cal).to_record()
            except CapacityError as exc:
                if not mark_infeasible:
                    raise
                records.append({"optimizer": optimizer, "dpus": n, "feasible": False, "reason": str(exc)})
                continue
            # the epoch's 95 % interval: transfer spread (fit files) and kernel residuals (fit rows), issue 17
            if architecture_of(hw).interval:
                record["low_s"], record["high_s"] = epoch_interval(record, hw)
            else:
                record["low_s"] = record["high_s"] = None
            if with_interval:
                record["interval"] = predict_interval(w, hw, view, cal)
            records.append(record)
    return records, provenance(hw, calibration).to_record()


def _finish(output: Path | None, records: list[dict], prov: dict[str, Any], json: bool) -> bool:
    """What ``predict`` and ``scale`` do with their records before the table: write them to ``--output``, print
    the notes (without --json) and, with --json, the whole ``{"provenance", "points"}`` record; True when that was
    printed (the caller prints its table otherwise)."""
    if output is not None:
        # lazy imports keep the CLI's cold start fast
        from ..report.records import write

        write(output, records, {"provenance": prov})
        if not json:
            typer.echo(f"records written to {output}", err=True)
    _print_notes(records, json)
    if json:
        # lazy imports keep the CLI's cold start fast
        from ..report.json import emit

        emit({"provenance": prov, "points": records})
    return json


Output = Annotated[Path | None, typer.Option("--output", "-o", help="Also write the records to a file: .csv (one "
                                             "row per record, nested fields as columns such as "
                                             "per_epoch_s.dpu_compute), .json (as --json prints) or .parquet "
                                             "(needs pandas and pyarrow). Written whole or not at all.")]


def predict_command(
    ctx: typer.Context,
    optimizer: Annotated[str | None, typer.Option("--optimizer", help=f"{O.OPTIMIZER_HELP}; omit to compare the "
                                                  "study's three (ma-sgd, ga-sgd, admm) side by side.")] = None,
    hardware: O.Hardware = "upmem-2556",
    placement: O.Placement = None,
    dataset: O.Dataset = "yfcc100m-hnfc6",
    model: O.Model = "lr",
    dpus: Annotated[int | None, typer.Option(
        "--dpus", help="Number of DPUs or PIM units (one count; `pimmodel scale --dpus 256,512` sweeps several; "
        "default: the study's 2,048, or the largest power of two a smaller system has).")] = None,
    deployment: O.Deployment = O.Deployment(),
    view: O.View = "wall",
    custom: O.CustomDataset = O.CustomDataset(),
    calibration: O.Calibration = None,
    interval: Annotated[bool, typer.Option("--interval", help="Add a 95 % interval per phase and total from the "
                                           "calibration's coefficient covariance.")] = False,
    sync_every: O.SyncEvery = None,
    family: F.FamilyOptions = F.FamilyOptions(),
    output: Output = None,
    json: O.Json = False,
) -> None:
    """Predict the time per epoch of each phase, its share, the total and the bottleneck.

    --workload kmeans --points 25.6M --dims 16 --clusters 16 predicts UPMEM's K-means (dpu_kmeans) instead: the
    six phases per Lloyd iteration, the one-off phases and the real runs' timers (--json: {"points": records,
    "provenance"}, each record with "per_iteration_s", "once_s", "run_s").

    Run bare, it compares MA-SGD, GA-SGD and ADMM for LR on YFCC100M-HNfc6 at 2,048 DPUs (weak scaling)
    on the upmem-2556 system. --json prints {"provenance": {"version", "git_commit", "git_dirty", "hardware",
    "hardware_sha256", "calibration", "calibration_sha256", "seed", "libraries", "command"}, "points": a list of
    records}.
    """
    if not F.is_study_family(family.workload, ctx):
        F.predict_family(family, hardware, [dpus if dpus is not None else 2048], output, json, placement=placement)
        return
    O.check_output(output)
    optimizers = [optimizer] if optimizer else list(STUDY_OPTIMIZERS)
    dpus = dpus if dpus is not None else O.default_units(hardware)
    records, prov = _records(hardware, dataset, model, optimizers, [dpus], deployment, view, custom, calibration,
                             interval, sync_every, placement=placement, given=F.given_options(ctx))
    if _finish(output, records, prov, json):
        return
    # lazy imports keep the CLI's cold start fast
    from ..report.tables import comparison_table, print_table

    print_table(comparison_table(records))
    for r in records if interval else []:
        lo, hi = r["interval"]["per_epoch_s"]["total"]
        typer.echo(f"{r['optimizer']}: 95 % interval of the epoch total {lo:.4g} .. {hi:.4g} s "
                   f"({r['interval']['method']})")


def _print_notes(records: list[dict], json: bool) -> None:
    """Every value chosen or clamped for the deployment (the records' ``chosen``), once each, on stderr (with
    --json the record carries them)."""
    if json:
        return
    seen: dict[str, None] = {}
    for r in records:
        seen.update(dict.fromkeys([*r.get("chosen", []), *([r["calibration_note"]] if "calibration_note" in r
                                                             else [])]))
    for note in seen:
        typer.echo(f"note: {note}", err=True)


def _scaling_metrics(records: list[dict]) -> list[dict[str, float]]:
    base = records[0]
    out = []
    for r in records:
        speedup = base["per_epoch_s"]["total"] / r["per_epoch_s"]["total"]
        ideal = r["dpus"] / base["dpus"]
        out.append({"speedup": speedup, "efficiency": speedup / ideal,
                    "time_growth": r["per_epoch_s"]["total"] / base["per_epoch_s"]["total"]})
    return out


def scale_command(
    ctx: typer.Context,
    optimizer: O.Optimizer = "ma-sgd",
    dpus: Annotated[str, typer.Option("--dpus", help="Comma-separated DPU counts.")] = "256,512,1024,2048",
    hardware: O.Hardware = "upmem-2556",
    dataset: O.Dataset = "yfcc100m-hnfc6",
    model: O.Model = "lr",
    deployment: O.Deployment = O.Deployment(),
    view: O.View = "wall",
    custom: O.CustomDataset = O.CustomDataset(),
    plot: Annotated[Path | None, typer.Option("--plot", help="Write stacked phases per DPU count "
                                              "(.png/.svg/.pdf).")] = None,
    calibration: O.Calibration = None,
    sync_every: O.SyncEvery = None,
    family: F.FamilyOptions = F.FamilyOptions(),
    output: Output = None,
    json: O.Json = False,
) -> None:
    """Scaling curve: phases per epoch at each DPU count, with speedup and efficiency (strong scaling) or
    time growth (weak scaling) relative to the first count that fits. --json prints {"provenance", "points": a
    list of records}; a DPU count whose data does not fit the DPUs' memory is a record {"optimizer", "dpus",
    "feasible": false, "reason"} and the others are still predicted (every record has "feasible").
    --workload kmeans (with --points, --dims, --clusters): K-means' phases per Lloyd iteration at each
    count (strong scaling: the points are fixed)."""
    counts = O.parse_int_list(dpus, "--dpus")
    if counts != sorted(set(counts)):
        from ..errors import SpecError  # lazy imports keep the CLI's cold start fast

        raise SpecError(f"--dpus {dpus} must be increasing without repeats (speedup and efficiency are relative to "
                        f"the first count); give {','.join(str(c) for c in sorted(set(counts)))}")
    if not F.is_study_family(family.workload, ctx):
        F.predict_family(family, hardware, counts, output, json, scaling=True)
        return
    O.check_plot(plot)
    O.check_output(output)
    records, prov = _records(hardware, dataset, model, [optimizer], counts, deployment, view, custom, calibration,
                             sync_every=sync_every, mark_infeasible=True, given=F.given_options(ctx))
    refused = [r for r in records if r.get("feasible") is False]
    if len(refused) == len(records):
        # lazy imports keep the CLI's cold start fast
        from ..errors import CapacityError

        raise CapacityError(refused[0]["reason"])
    fits = [r for r in records if r.get("feasible") is not False]
    metrics = _scaling_metrics(fits)
    for r, m in zip(fits, metrics, strict=True):
        r["feasible"] = True
        r["scaling_metrics"] = m
    if plot is not None:
        # lazy imports keep the CLI's cold start fast
        from ..report.plots import save, scaling_plot

        save(scaling_plot(fits), plot)
    if _finish(output, records, prov, json):
        return
    # lazy imports keep the CLI's cold start fast
    from ..report.tables import print_table, scaling_table

    print_table(scaling_table(fits, metrics))
    for r in refused:
        typer.echo(f"{r['dpus']:,} DPUs: infeasible: {r['reason']}")
    if plot is not None:
        typer.echo(f"plot written to {plot}", err=True)


def equations_command(
    optimizer: O.Optimizer = "ma-sgd",
    model: O.Model = "lr",
    dataset: O.Dataset = "yfcc100m-hnfc6",
    topology: Annotated[str | None, typer.Option("--topology", help="Direct inter-DPU links: none (UPMEM), in-rank, "
                                                 "ring, torus or all-to-all (default: none, or ring for an optimizer "
                                                 "that needs links).")] = None,
    latex: Annotated[bool, typer.Option("--latex", help="Print LaTeX (one display equation per line).")] = False,
    hardware: Annotated[str | None, typer.Option("--hardware", help="A hardware spec whose architecture family "
                                                 "prices the epoch (default: the UPMEM-like family's equations; "
                                                 "e.g. hbm-pim-aquabolt for bank-level SIMD PIM).")] = None,
    output: O.Output = None,
    json: O.Json = False,
) -> None:
    """The cost model's equations of one optimizer x model x layout, as the study would write them.

    Each phase is a short equation over named terms (rounds per epoch R, samples S, occurrences n_s, compute
    cycles C_s and DMA cycles M_s of each kernel section s, instructions per tasklet I_s, transfer times t_*),
    followed by the definitions it uses. Inputs are named like the hardware spec fields (dpu_clock_hz, ...),
    the workload (dpus, tasklets, rows_per_dpu, local_batch, features, nonzeros) and the fitted coefficients.
    --json prints {"phases": {phase: {"equation", "latex", "terms"}}, "terms": {name: {"definition",
    "latex", "doc"}}, "provenance": {"version", ...}}.
    """
    # lazy imports keep the CLI's cold start fast
    from ..costmodel.readable import equation_record
    from ..errors import check_known
    from ..report.equations import render_latex, render_text
    from ..specs import MODELS, OPTIMIZERS, TOPOLOGIES, load_dataset, optimizer_info, require_links

    check_known("optimizer", optimizer, OPTIMIZERS)
    check_known("model", model, MODELS)
    topology = topology or optimizer_info(optimizer).topologies[0]
    check_known("topology", topology, TOPOLOGIES)
    require_links(optimizer, topology, f"--topology {topology}",
                  fix=f"use --topology {' or '.join(optimizer_info(optimizer).topologies)}")
    O.check_output(output)
    pricing = None
    if hardware is not None:
        from ..costmodel.evaluate import family_pricing

        hw = O.hardware(hardware)
        pricing = family_pricing(hw)
        from ..specs.architectures import check_layout

        check_layout(load_dataset(dataset), hw)
    record = equation_record(optimizer, model, load_dataset(dataset).layout, topology, pricing=pricing)
    if hardware is not None:
        record["hardware"] = O.hardware(hardware).name
    if O.finish({**record, "provenance": O.provenance()}, output, None, json):
        return
    typer.echo(render_latex(record) if latex else render_text(record), nl=False)


def register(app: typer.Typer) -> None:
    app.command("predict")(O.option_groups(predict_command))
    app.command("scale")(O.option_groups(scale_command))
    app.command("equations")(equations_command)
