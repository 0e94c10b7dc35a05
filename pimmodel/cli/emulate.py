"""``pimmodel emulate``: train LR/SVM on emulated PIM hardware and compare its time with the cost model."""

from __future__ import annotations

import math
from typing import Annotated, Any

import typer

from ..errors import SpecError
from ..specs import DEFAULT_HARDWARE
from . import families as F
from . import options as O


def _class_weights(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        negative, positive = (float(part) for part in text.split(":"))
    except ValueError:
        raise SpecError(f"--class-weights takes NEGATIVE:POSITIVE, e.g. 1:1 or 0.5:15; got {text!r}") from None
    if not (0 < negative < math.inf and 0 < positive < math.inf):  # NaN fails too
        raise SpecError(f"--class-weights must be positive finite numbers, e.g. 1:1; got {text!r}")
    return negative, positive


def _summary(result: Any) -> str:
    """What ran, in one line: data, model, optimizer, DPUs, the batch each DPU takes and the rounds."""
    w = result.workload
    batch = (f"global batch {w.hp.global_batch_size:,} ({w.local_batch:,} per DPU)" if w.info.batch == "global"
             else f"batch {w.local_batch:,} per DPU")
    if "sync_every" in w.info.takes:
        batch += f" · H = {w.sync_every} steps between global averages"
    return (f"{w.dataset.name} · {w.model.upper()} · {w.optimizer} · {w.kernels} kernels · {w.dpus:,} DPUs x "
            f"{w.rows_per_dpu:,} rows (largest shard) · {batch} · {w.rounds_per_epoch:,} rounds per epoch · "
            f"{w.epochs} epochs")


def _ran(run: dict[str, Any]) -> str:
    """The engine and the memory pre-check, in one line."""
    memory = run.get("memory")
    text = f"ran on: {run.get('engine', 'serial')}"
    if memory:
        text += (f" · memory estimate {memory['estimate_bytes'] / 1e9:.2f} GB of {memory['available_bytes'] / 1e9:.1f}"
                 f" GB available ({memory['processes']} process{'es' if memory['processes'] > 1 else ''})")
    return text


def _judge_by(history: list[dict[str, Any]]) -> dict[str, Any]:
    """The metric to read the run by: AUC when the classes are imbalanced (as the study judges Criteo), else
    accuracy."""
    from ..emulator.api import IMBALANCED  # lazy imports keep the CLI's cold start fast

    majority = history[-1]["majority_baseline"] if history else 0.5
    if majority >= IMBALANCED:
        return {"metric": "auc", "why": f"the classes are imbalanced (majority {majority:.1%} of the test rows), so "
                "accuracy rewards predicting the majority and class weights trade it for AUC"}
    return {"metric": "accuracy", "why": f"the classes are balanced enough (majority {majority:.1%})"}


def _render(result: Any) -> None:
    # lazy imports keep the CLI's cold start fast
    from rich.table import Table

    from ..report.tables import stdout_console

    console = stdout_console()
    console.print(_summary(result))
    console.print(_ran(result.run))
    for note in result.workload.notes:
        console.print(f"chosen: {note}")
    epochs = Table(title="metrics after each epoch (test set unless marked train)")
    for col in ("epoch", "train acc", "test acc", "majority", "predicted +", "loss", "AUC", "emulated s (epoch)"):
        epochs.add_column(col, justify="right")
    for h in result.history:
        auc = "-" if h["auc"] != h["auc"] else f"{h['auc']:.4f}"  # NaN: one class in the test set
        epochs.add_row(str(h["epoch"]), f"{h['train_accuracy']:.4f}", f"{h['test_accuracy']:.4f}",
                       f"{h['majority_baseline']:.4f}", f"{h['positive_rate']:.1%}", f"{h['loss']:.4f}", auc,
                       f"{h['emulated_wall_s']:.4g}")
    console.print(epochs)
    judge = _judge_by(result.history)
    if judge["metric"] == "auc":
        console.print(f"judge by AUC: {judge['why']}")
    tr = result.trace
    epochs_run = max(1, tr["epochs"])
    phases = Table(title=f"time per epoch by phase (wall view; {tr['dpus']} DPUs, {tr['rounds'] // epochs_run} "
                         "rounds per epoch); events are totals over all epochs")
    for col in ("phase", "emulated s / epoch", "predicted s / epoch", "events (all epochs)"):
        phases.add_column(col, justify="right")
    pred = result.predicted.get("per_epoch_s", {})
    dma = tr["mram_wram_dma"]
    notes = {"dpu_compute": f"{sum(v['max'] for v in tr['dpu_compute']['instructions_parallel'].values()):.3g} instr",
             "mram_wram_dma": f"{dma['read']['count']['max'] + dma['write']['count']['max']:.3g} DMAs",
             "host_to_pim": f"{tr['host_to_pim']['bytes']:.3g} B", "pim_to_host": f"{tr['pim_to_host']['bytes']:.3g} B",
             "host_aggregate": f"{tr['host_aggregate']['element_passes']:.3g} elem-passes",
             "launch": f"{tr['launch']['launches']} launches"}
    for phase, secs in tr["seconds"]["wall"].items():
        p = pred.get(phase)
        phases.add_row(phase, f"{secs / epochs_run:.4g}", "-" if p is None else f"{p:.4g}", notes.get(phase, ""))
    console.print(phases)


def emulate_command(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Option("--dataset", help="synthetic-yfcc, synthetic-criteo, or a file: .npy "
                                         "(rows x (features + label), features in [0, 1]) or svmlight/LIBSVM "
                                         "(real values: the dense kernels; one value everywhere: the sparse "
                                         "ones).")] = "synthetic-yfcc",
    dpus: Annotated[int, typer.Option("--dpus", help="Number of DPUs.")] = 64,
    model: O.Model = "lr",
    optimizer: O.Optimizer = "ma-sgd",
    epochs: Annotated[int, typer.Option("--epochs", help="Global epochs (the study trains 10).")] = 10,
    samples_per_dpu: Annotated[int | None, typer.Option("--samples-per-dpu", help="Synthetic rows per DPU "
                                                        "(default 512; a file's rows come from the file).")] = None,
    features: Annotated[int | None, typer.Option("--features", help="Synthetic features (default 4,096 dense, "
                                                 "10^6 sparse).")] = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size", help="Per-DPU mini-batch b of MA-SGD and "
                                                   "ADMM, a power of two (default: the study's, at most a "
                                                   "shard).")] = None,
    global_batch_size: Annotated[int | None, typer.Option("--global-batch-size", help="Global batch B of "
                                                          "GA-SGD, a multiple of --dpus (default: derived from "
                                                          "the DPU count).")] = None,
    learning_rate_shift: Annotated[int | None, typer.Option("--learning-rate-shift", help="eta = 2^-l "
                                                            "(default: the study's).")] = None,
    reg_shift: Annotated[int | None, typer.Option("--reg-shift", help="lambda = 2^-r (default: the "
                                                  "study's).")] = None,
    alpha_shift: Annotated[int | None, typer.Option("--alpha-shift", help="ADMM alpha shift (default: the "
                                                    "study's).")] = None,
    sync_every: O.SyncEvery = None,
    kernels: Annotated[str | None, typer.Option("--kernels", help="study (the artifact bit for bit, quirks "
                                                "included) or corrected (widening casts, SVM margin 0.5, class "
                                                "weights 1:1); default: study for the synthetic presets, "
                                                "corrected for a file.")] = None,
    svm_margin: Annotated[float | None, typer.Option("--svm-margin", help="SVM margin in real units (default: "
                                                     "2^-15 study, 0.5 corrected).")] = None,
    class_weights: Annotated[str | None, typer.Option("--class-weights", help="NEGATIVE:POSITIVE gradient "
                                                      "weights of the sparse kernels (default: 0.5:15 study, 1:1 "
                                                      "corrected).")] = None,
    shuffle: Annotated[bool, typer.Option("--shuffle/--no-shuffle", help="Shuffle a file's rows before "
                                          "sharding (--no-shuffle: the file's order, as the study).")] = True,
    arithmetic: Annotated[str, typer.Option("--arithmetic", help="fixed (Q31, as the hardware) or "
                                            "float64.")] = "fixed",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the synthetic data, split and shuffle.")] = 0,
    hardware: Annotated[str, typer.Option("--hardware", envvar="PIMMODEL_HARDWARE", show_envvar=True,
                                          help="Hardware spec name or TOML file.")] = DEFAULT_HARDWARE,
    tasklets: Annotated[int, typer.Option("--tasklets", help="Tasklets per DPU.")] = 16,
    output: O.Output = None,
    engine: Annotated[str, typer.Option("--engine", help="Where the DPUs run: auto (worker processes on every "
                                        "core when the run is large enough, else this process), serial, process, "
                                        "or ray (Ray actors; a local Ray cluster unless --address). Every engine "
                                        "trains the same bits.")] = "auto",
    workers: Annotated[int | None, typer.Option("--workers", help="Worker processes or Ray actors (default: the "
                                                "usable cores, or the Ray cluster's CPUs).")] = None,
    address: Annotated[str | None, typer.Option("--address", help="Ray cluster to run on (e.g. HEAD_IP:6379 or "
                                                "auto), with --engine ray.")] = None,
    workload: F.Workload = "linear",
    points: F.Points = None,
    dims: F.Dims = None,
    clusters: F.Clusters = None,
    n_init: F.NInit = 1,
    json: Annotated[bool, typer.Option("--json", help="Print the record as JSON.")] = False,
) -> None:
    """Train on emulated PIM hardware; show what ran, the metrics after each epoch (with the majority-class
    baseline and the predicted-positive rate to read the accuracy against), and emulated vs predicted time per
    phase. Warnings (data the chosen kernels mishandle, saturated weights, one-class DPUs) go to stderr.

    --json prints {"run", "ran" (engine, memory estimate), "chosen", "warnings", "history", "trace", "predicted",
    "provenance"}.

    --workload kmeans --clusters K trains UPMEM's K-means (dpu_kmeans) in int16/int64 fixed point on --dataset
    blobs (with --points, --dims), iris, wine or a .npy file; --json prints {"emulated", "model", "inertia",
    "iterations", "restarts", "events", "provenance"}.
    """
    if not F.is_study_family(workload, ctx):
        F.emulate_family(workload, dataset, hardware, dpus, points, dims, clusters, n_init, seed, output, json)
        return
    O.check_output(output)
    O.hardware(hardware, "emulate")  # a family the emulator does not model is refused before any data is made
    with O.on_interrupt(lambda: "nothing was kept (emulate writes no file; the epochs run so far are discarded)"):
        result = _emulate(dataset, dpus, model, optimizer, epochs, {
            **{k: v for k, v in (("batch_size", batch_size), ("global_batch_size", global_batch_size),
                                 ("learning_rate_shift", learning_rate_shift), ("reg_shift", reg_shift),
                                 ("admm_alpha_shift", alpha_shift)) if v is not None},
            **O.check_sync_every(sync_every)},
            dict(samples_per_dpu=samples_per_dpu, features=features, arithmetic=arithmetic, seed=seed,
                 hardware=hardware, tasklets=tasklets, kernels=kernels, svm_margin=svm_margin,
                 class_weights=_class_weights(class_weights), shuffle=shuffle, engine=engine, workers=workers,
                 address=address))
        for warning in result.warnings:
            typer.echo(f"warning: {warning}", err=True)
    record = {"run": _summary(result), "ran": result.run, "chosen": list(result.workload.notes),
              "judge_by": _judge_by(result.history),
              "warnings": result.warnings,
              "history": [{k: v for k, v in h.items() if k != "emulated_wall_s"} for h in result.history],
              "trace": result.trace, "predicted": result.predicted, "provenance": result.provenance.to_record()}
    if not O.finish(record, output, "history", json):
        _render(result)


def _emulate(dataset: str, dpus: int, model: str, optimizer: str, epochs: int, given: dict[str, int],
             options: dict[str, Any]) -> Any:
    """The emulation, behind a progress bar on stderr where it is a terminal and log lines where it is not."""
    # lazy imports keep the CLI's cold start fast
    import time

    from ..api import emulate
    from ..emulator.api import Options
    from .logs import Task, estimate_text, measured_rate, record_rate

    what = f"emulating {dataset} on {dpus:,} DPUs ({optimizer}, {epochs} epochs)"
    rows = options.get("samples_per_dpu")
    key = (f"emulate:{dataset}:{model}:{optimizer}:{'default' if rows is None else rows}-rows:"
           f"{options.get('engine')}")
    per = "DPU-epochs" + ("" if rows is None else f" of {rows:,} rows")
    start = time.perf_counter()
    with Task(what, label="emulating", unit="steps",
              estimate=estimate_text([(dpus * epochs, per, measured_rate(key))])) as task:

        def tick(n: int, per_epoch: int) -> None:
            task.update(advance=n, total=per_epoch * epochs)

        result = emulate(dataset, dpus, model, optimizer, given, Options(epochs=epochs, **options), progress=tick)
    record_rate(key, time.perf_counter() - start, dpus * epochs)
    return result


def register(app: typer.Typer) -> None:
    app.command("emulate")(emulate_command)
