"""``pimmodel compare``: one workload on PIM, the study's CPU and its GPU, side by side."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import SpecError
from . import options as O
from .logs import Rate

if TYPE_CHECKING:
    from ..specs import Workload

NONE = "none"


def _sweep_values(text: str | None, axis: str, default: list[int]) -> list[int]:
    values = O.parse_int_list(text, "--sweep") if text else default
    if any(v < 1 for v in values):
        raise SpecError(f"--sweep takes positive {'DPU counts' if axis == 'dpus' else 'batch sizes'}, got {text}")
    return values


def compare_command(
    optimizer: Annotated[str | None, typer.Option("--optimizer", help="ma-sgd, ga-sgd or admm; omit for all three.")]
    = None,
    hardware: O.Hardware = "upmem-2556",
    dataset: O.Dataset = "yfcc100m-hnfc6",
    model: O.Model = "lr",
    dpus: Annotated[int, typer.Option("--dpus", help="DPUs of the PIM run.")] = 2048,
    deployment: O.Deployment = O.Deployment(),
    cpu: Annotated[str, typer.Option("--cpu", help="CPU spec (name in hardware_specs/cpu or a TOML file), or "
                                     "'none'.")] = "amd-epyc-7742-2s",
    gpu: Annotated[str, typer.Option("--gpu", help="GPU spec (name in hardware_specs/gpu or a TOML file), or "
                                     "'none'.")] = "nvidia-a100-pcie-80gb",
    target: Annotated[float | None, typer.Option("--target", help="Accuracy (dense) or AUC (sparse) to reach; "
                                                 "default: the highest every run reaches.")] = None,
    divisor: Annotated[int | None, typer.Option("--stand-in-divisor", help="Train the accuracy stand-ins on 1/k "
                                                "of each worker's rows (default 16 dense, 64 sparse; 1 = every "
                                                "local step, slow).")] = None,
    axis: Annotated[str, typer.Option("--break-even", help="Sweep for the break-even point: dpus, batch or "
                                      "none.")] = "dpus",
    sweep: Annotated[str | None, typer.Option("--sweep", help="Comma-separated values to sweep (default: powers "
                                              "of two up to the spec's DPUs, or the batch x 1/4..8).")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write the metric-over-time and break-even figure "
                                              "(.png/.svg/.pdf).")] = None,
    calibration: O.Calibration = None,
    output: O.Output = None,
    json: O.Json = False,
) -> None:
    """Is PIM faster than the CPU or GPU for this training job, and when?

    Time per epoch from the models (PIM cost model; the study's 128-process CPU baseline; its single-A100 GPU
    baseline, unvalidated), accuracy or AUC per epoch from training reduced stand-ins for real, "reaches X at
    T s" for every run, and the DPU count (or batch size) from which PIM's epoch is the shorter. Each PIM-against-
    CPU/GPU line leads with the ratio of times to the target (what a user waits for) and names the per-epoch
    ratio after it: a faster epoch that needs more epochs can still be slower to the target.
    --json prints {"workload", "hardware", "metric", "target", "runs": [...], "break_even", "speedups":
    [{"pim", "other", "time_to_target": {"target", "pim_s", "other_s", "speedup"}, "per_epoch": {"speedup",
    "range"?}, "text"}], "accuracy_differences", "stand_in", "notes", "provenance"}.
    """
    # lazy imports keep the CLI's cold start fast
    from ..baselines import load_cpu, load_gpu
    from ..comparison import StandIn, break_even, compare
    from ..errors import unknown
    from ..specs.optimizers import STUDY_OPTIMIZERS
    from ..specs.workload import OPTIMIZERS

    if optimizer is not None and optimizer not in OPTIMIZERS:
        raise unknown("optimizer", optimizer, OPTIMIZERS)
    if optimizer is not None and optimizer not in STUDY_OPTIMIZERS:  # the CPU and GPU baselines run the study's
        raise SpecError(f"compare covers the study's optimizers ({', '.join(STUDY_OPTIMIZERS)}), which the CPU and "
                        f"GPU baselines also run; for {optimizer}'s time to accuracy use python -m "
                        "pimmodel.dse.codesign (studies/README.md)")
    if axis not in ("dpus", "batch", NONE):
        raise SpecError(f"--break-even must be dpus, batch or none, got {axis!r}")
    if divisor is not None and divisor < 1:
        raise SpecError(f"--stand-in-divisor must be a positive whole number, got {divisor}")
    if target is not None and not 0.0 < target < 1.0:
        raise SpecError(f"--target {target:g} must be between 0 and 1 (a test accuracy or an AUC), e.g. 0.85")
    O.check_plot(plot)
    O.check_output(output)
    hw = O.hardware(hardware, "compare")
    ds = O.dataset_from_options(dataset, None, None, None, None)
    cpu_spec = None if cpu == NONE else load_cpu(cpu)
    gpu_spec = None if gpu == NONE else load_gpu(gpu)
    optimizers = [optimizer] if optimizer else list(STUDY_OPTIMIZERS)
    workloads = [deployment.workload(ds, model, o, dpus) for o in optimizers]
    stand_in = StandIn() if divisor is None else StandIn().with_divisor(divisor)

    be = None
    if axis != NONE and (cpu_spec or gpu_spec):
        if axis == "dpus":
            top = hw.dpus_available
            counts = _sweep_values(sweep, axis, sorted({*(1 << k for k in range(6, top.bit_length())), dpus, top}))
            values_of: Callable[[str], list[int]] = lambda _o: counts  # noqa: E731
            make: Callable[[str, int], Workload] = lambda o, n: deployment.workload(ds, model, o, n)  # noqa: E731
        else:
            base = {w.optimizer: (w.hp.global_batch_size if w.info.batch == "global" else w.hp.batch_size)
                    for w in workloads}
            is_global = {w.optimizer: w.info.batch == "global" for w in workloads}
            given = O.parse_int_list(sweep, "--sweep") if sweep else None
            values_of = lambda o: given or [max(1, base[o] * 2**k // 4) for k in range(6)]  # noqa: E731
            make = lambda o, v: replace(  # noqa: E731
                deployment, batch_size=None if is_global[o] else v, global_batch_size=v if is_global[o] else None
            ).workload(ds, model, o, dpus)
        be = break_even(axis, make, optimizers, values_of, hw, cpu_spec, gpu_spec, calibration)

    import time

    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from ..comparison.compare import untrained
    from .logs import Task, estimate_text, measured_rate, record_rate

    what = f"comparing {', '.join(w.optimizer for w in workloads)} on {ds.name}"
    epochs = untrained(workloads, cpu_spec, gpu_spec, stand_in)
    rate_key, base_key = f"compare:stand-in-epoch:{ds.layout}", "compare:cached"
    fixed = measured_rate(base_key)
    estimate = estimate_text([(epochs, "uncached stand-in seed-epochs", measured_rate(
        rate_key, COMPARE_EPOCH_DEFAULTS.get(ds.layout)))],
        None if fixed is None else (fixed.s_per_unit, f"for the comparison itself ({fixed.measured})"))
    start = time.perf_counter()
    with Task(what, epochs or None, (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn()), label="training stand-ins", unit="seed-epochs",
              estimate=estimate) as task:
        done = [0.0]

        def say(text: str) -> None:
            task.update(description=f"training the {text} stand-in (cached after the first time)", say=True)

        def steps(n: int, per_epoch: int) -> None:  # the emulator's steps, counted in epochs
            done[0] += n / max(per_epoch, 1)
            task.update(completed=min(int(done[0] + 1e-9), epochs))

        with O.on_interrupt(lambda: "the stand-in curves trained so far are cached; nothing else was written"):
            result = compare(workloads, hw, cpu_spec, gpu_spec, stand_in, target, calibration, be, say, steps)
    elapsed = time.perf_counter() - start
    if epochs:
        rest = 0.0 if fixed is None else fixed.s_per_unit
        record_rate(rate_key, max(elapsed - rest, 1e-3), epochs)
    else:
        record_rate(base_key, elapsed, 1)
    record = {**result.to_record(), "provenance": O.provenance(hw, calibration)}
    if plot is not None:
        from ..report.comparison import comparison_plot

        comparison_plot(record, plot)
    if O.finish(record, output, "runs", json):
        return
    from ..report.comparison import break_even_table, runs_table
    from ..report.tables import print_table

    print_table(runs_table(record))
    for r in result.runs:
        typer.echo(r.reaches(result.target))
    for sp in record["speedups"]:
        typer.echo(f"{sp['pim']} against {sp['other']}: {sp['text']}")
    for d in record["accuracy_differences"]:
        verdict = d["verdict"] if d["verdict"] == "within noise" else f"{d['verdict']} by {abs(d['difference']):.3f}"
        typer.echo(f"{d['pim']} final {record['metric']} against {d['other']}: {verdict} (seeds' ranges "
                   f"{d['spread_a']:.3f} and {d['spread_b']:.3f})")
    if be is not None:
        print_table(break_even_table(record))
        for line in be.sentences():
            typer.echo(line)
        for line in be.skipped:
            typer.echo(f"skipped {line}", err=True)
    for note in record["notes"]:
        typer.echo(f"note: {note}", err=True)
    if plot is not None:
        typer.echo(f"wrote {plot}", err=True)


COMPARE_EPOCH_DEFAULTS = {"sparse": Rate(1.47, 90, "measured on a 2-core Intel Xeon, 2026-12-07: criteo-1tb LR MA-SGD "
                                                "cold, 132 s for 90")}
"""Seconds per stand-in seed-epoch before this machine has measured its own (a cold run of `pimmodel compare
--dataset criteo-1tb --model lr --optimizer ma-sgd` with an empty $PIMMODEL_CACHE_DIR)."""


def register(app: typer.Typer) -> None:
    app.command("compare")(O.option_groups(compare_command))
