"""``pimmodel baseline measure`` and ``pimmodel baseline predict``: the study's CPU and GPU baselines."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from . import options as O

baseline_app = typer.Typer(help="CPU and GPU baselines of the PIM-Opt study: predict their epochs, and validate "
                                "the CPU model by real training on this machine.", no_args_is_help=True,
                           rich_markup_mode=None)


@baseline_app.command("measure")
def measure_command(
    quick: Annotated[bool, typer.Option("--quick", help="Two small sizes, LR only, one pass (~15 s): a smoke "
                                        "test, not a validation.")] = False,
    torch: Annotated[bool | None, typer.Option("--torch/--no-torch", help="Also train with PyTorch + "
                                               "torch.distributed gloo on as many processes as the machine has "
                                               "(the study's stack; needs the torch extra; ~2 min; default: on "
                                               "unless --quick).")] = None,
    output: O.Output = None,
    json: O.Json = False,
) -> None:
    """Train MA-SGD, GA-SGD and ADMM (numpy, float32) for real with 1 and 2 processes at three data sizes,
    probe the machine's primitives, and print measured against predicted epoch for every case.

    With torch installed (extra ``torch``) it also trains the study's PyTorch loop with the gloo all-reduce,
    measures the all-reduce curve and reports measured (the median epoch a user sees) against predicted per
    case under "torch"; without torch it says so in one line and runs the numpy cases alone.
    --json prints {"machine": {...}, "cases": [{"optimizer", "model", "processes", "rows", "features",
    "measured_s", "predicted_s", "rel_error", ...}], "summary": {...}, "torch": {...} or null, "provenance"}.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from ..baselines.measure import run_measurement
    from .logs import Task

    O.check_output(output)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with O.on_interrupt(lambda: "nothing was written (baseline measure keeps no file)"), \
            Task("measuring this machine's CPU baselines", None, columns, label="starting", unit="cases") as task:

        def progress(message: str, done: int, total: int) -> None:
            task.update(description=message, completed=done, total=total)

        record = run_measurement(quick=quick, progress=progress)
        record["torch"] = None
        if torch or (torch is None and not quick):
            from ..baselines import torch_measure

            if torch_measure.available():
                task.update(description="training with PyTorch + gloo", say=True)
                record["torch"] = torch_measure.run_torch_measurement()
            else:
                typer.echo("torch is not installed: the PyTorch/gloo cases are skipped (pip install "
                           "'pimmodel[torch]')", err=True)
    record["provenance"] = O.provenance()
    if O.finish(record, output, "cases", json):
        return
    from ..baselines.tables import measure_table
    from ..report.tables import print_table

    print_table(measure_table(record))
    if record["torch"]:
        from ..baselines.tables import torch_table

        print_table(torch_table(record["torch"]))


def _predict_records(device: str, dataset: str, model: str, optimizers: list[str], spec: str | None, epochs: int,
                     batch_size: int | None, processes: int | None, data_on_gpu: bool) -> list[dict[str, Any]]:
    from dataclasses import replace

    from ..baselines import load_cpu, load_gpu, predict_cpu, predict_gpu, study_workload

    records = []
    for optimizer in optimizers:
        w = study_workload(dataset, model, optimizer, device, epochs)
        if batch_size is not None:
            w = replace(w, batch_size=batch_size)
        if processes is not None:
            w = replace(w, processes=processes)
        if device == "cpu":
            records.append(predict_cpu(w, load_cpu(spec or "amd-epyc-7742-2s")).to_record())
        else:
            records.append(predict_gpu(w, load_gpu(spec or "nvidia-a100-pcie-80gb"), data_on_gpu).to_record())
    return records


def predict_command(
    device: Annotated[str, typer.Option("--device", help="cpu (2x EPYC 7742, 128 processes) or gpu (A100).")] = "cpu",
    dataset: O.Dataset = "yfcc100m-hnfc6",
    model: O.Model = "lr",
    optimizer: Annotated[str | None, typer.Option("--optimizer", help="ma-sgd, ga-sgd or admm (CPU; omit for all "
                                                  "three side by side); the GPU runs sgd.")] = None,
    spec: Annotated[str | None, typer.Option("--spec", help="A spec name in hardware_specs/cpu or /gpu, or a TOML "
                                             "file (default: the study's machine).")] = None,
    epochs: O.Epochs = 10,
    batch_size: Annotated[int | None, typer.Option("--batch-size", help="Batch per process (default: the "
                                                   "study's).")] = None,
    processes: Annotated[int | None, typer.Option("--processes", help="CPU processes (default: the study's "
                                                  "128).")] = None,
    data_on_gpu: Annotated[bool, typer.Option("--data-on-gpu", help="GPU: data set resident in GPU memory "
                                              "(must fit) instead of streamed every epoch.")] = False,
    output: O.Output = None,
    json: O.Json = False,
) -> None:
    """Predict the time per epoch of each phase of the study's CPU or GPU baseline run.

    The defaults are the study's configurations (YFCC100M-HNfc6 or Criteo; CPU: 128 processes, batch 8 for
    MA-SGD and ADMM, 64 per process for GA-SGD (2,048 on Criteo); GPU: batch 4,096). --json prints
    {"points": a list of records, "provenance"}.
    """
    from ..baselines.workload import MULTI_PROCESS_OPTIMIZERS as CPU_OPTIMIZERS
    from ..baselines.workload import ONE_DEVICE_OPTIMIZERS, baseline_optimizer
    from ..errors import SpecError, unknown

    if device not in ("cpu", "gpu"):
        raise unknown("device", device, ("cpu", "gpu"))
    if device == "gpu":
        if optimizer is not None and optimizer not in ONE_DEVICE_OPTIMIZERS:
            raise SpecError(f"the study's GPU baseline is single-GPU mini-batch SGD; --optimizer {optimizer} "
                            "applies to --device cpu")
        optimizers = [o for o in ONE_DEVICE_OPTIMIZERS if baseline_optimizer(o).one_device]
    else:
        if optimizer is not None and optimizer not in CPU_OPTIMIZERS:
            raise unknown("optimizer", optimizer, CPU_OPTIMIZERS)
        optimizers = [optimizer] if optimizer else list(CPU_OPTIMIZERS)
    O.check_output(output)
    records = _predict_records(device, dataset, model, optimizers, spec, epochs, batch_size, processes, data_on_gpu)
    if O.finish({"points": records, "provenance": O.provenance()}, output, "points", json):
        return
    from ..baselines.tables import prediction_table
    from ..report.tables import print_table

    print_table(prediction_table(records))
    typer.echo(f"{len(records[0]['assumptions'])} assumptions behind these numbers: see --json "
               "(\"assumptions\") or hardware_specs/" + device + "/", err=True)


baseline_app.command("predict")(predict_command)


def register(app: typer.Typer) -> None:
    app.add_typer(baseline_app, name="baseline")
