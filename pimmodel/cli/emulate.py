"""``pimmodel emulate``: train LR/SVM on emulated PIM hardware and compare its time with the cost model."""

from __future__ import annotations

import json
from typing import Any

import typer

from ..specs import DEFAULT_HARDWARE, HyperParams


def _render(result: Any) -> None:
    # lazy imports keep the CLI's cold start fast
    from rich.table import Table

    # lazy imports keep the CLI's cold start fast
    from ..report.tables import stdout_console

    console = stdout_console()
    epochs = Table(title="metrics per epoch")
    for col in ("epoch", "train acc", "test acc", "loss", "AUC", "emulated s"):
        epochs.add_column(col, justify="right")
    for h in result.history:
        epochs.add_row(str(h["epoch"]), f"{h['train_accuracy']:.4f}", f"{h['test_accuracy']:.4f}",
                       f"{h['loss']:.4f}", f"{h['auc']:.4f}", f"{h['emulated_wall_s']:.4g}")
    console.print(epochs)
    tr = result.trace
    phases = Table(title=f"time per epoch by phase (wall view; {tr['dpus']} DPUs, {tr['rounds']} rounds)")
    for col in ("phase", "emulated s", "predicted s", "events"):
        phases.add_column(col, justify="right")
    pred = (result.predicted or {}).get("per_epoch_s", {})
    dma = tr["mram_wram_dma"]
    notes = {"dpu_compute": f"{sum(v['max'] for v in tr['dpu_compute']['instructions_parallel'].values()):.3g} instr",
             "mram_wram_dma": f"{dma['read']['count']['max'] + dma['write']['count']['max']:.3g} DMAs",
             "host_to_pim": f"{tr['host_to_pim']['bytes']:.3g} B", "pim_to_host": f"{tr['pim_to_host']['bytes']:.3g} B",
             "host_aggregate": f"{tr['host_aggregate']['element_passes']:.3g} elem-passes",
             "launch": f"{tr['launch']['launches']} launches"}
    for phase, secs in tr["seconds"]["wall"].items():
        p = pred.get(phase)
        phases.add_row(phase, f"{secs / max(1, tr['epochs']):.4g}", "-" if p is None else f"{p:.4g}",
                       notes.get(phase, ""))
    console.print(phases)


def register(app: typer.Typer) -> None:
    @app.command("emulate")
    def emulate_cmd(
        dataset: str = typer.Option("synthetic-yfcc", help="synthetic-yfcc, synthetic-criteo, or a .npy/svmlight file"),
        samples_per_dpu: int = typer.Option(512, help="synthetic rows per DPU"),
        features: int = typer.Option(0, help="synthetic features (0 = 4096 dense / 10^6 sparse)"),
        dpus: int = typer.Option(64, help="number of DPUs"),
        model: str = typer.Option("lr", help="lr or svm"),
        optimizer: str = typer.Option("ma-sgd", help="ma-sgd, ga-sgd or admm"),
        epochs: int = typer.Option(1, help="global epochs"),
        batch_size: int = typer.Option(8, help="per-DPU mini-batch b (MA-SGD, ADMM)"),
        global_batch_size: int = typer.Option(0, help="global batch B of GA-SGD (0 = 16 x DPUs)"),
        learning_rate_shift: int = typer.Option(6, help="eta = 2^-l"),
        reg_shift: int = typer.Option(12, help="lambda = 2^-r"),
        alpha_shift: int = typer.Option(4, help="ADMM alpha shift"),
        arithmetic: str = typer.Option("fixed", help="fixed (Q31, as the hardware) or float64"),
        seed: int = typer.Option(0, help="random seed"),
        hardware: str = typer.Option(DEFAULT_HARDWARE, help="hardware spec name or TOML file"),
        as_json: bool = typer.Option(False, "--json", help="print the record as JSON"),
    ) -> None:
        """Train on emulated PIM hardware; show accuracy per epoch and emulated vs predicted time per phase."""
        # lazy imports keep the CLI's cold start fast
        from rich.progress import Progress

        # lazy imports keep the CLI's cold start fast
        from ..api import emulate

        hyper = HyperParams(batch_size=batch_size, global_batch_size=global_batch_size or 16 * max(dpus, 1),
                            learning_rate_shift=learning_rate_shift, reg_shift=reg_shift, admm_alpha_shift=alpha_shift)
        console = _stderr_console()
        with Progress(transient=True, console=console, disable=not console.is_terminal) as bar:
            task = bar.add_task("emulating", total=None)

            def tick(n: int, per_epoch: int) -> None:
                bar.update(task, total=per_epoch * epochs, advance=n)

            result = emulate(dataset, dpus, model, optimizer, hyper, epochs, samples_per_dpu, features or None,
                             arithmetic, seed, hardware, progress=tick)
        if as_json:
            history = [{k: h[k] for k in ("epoch", "train_accuracy", "test_accuracy", "loss", "auc")}
                       for h in result.history]
            typer.echo(json.dumps({"history": history, "trace": result.trace, "predicted": result.predicted},
                                  default=float))
        else:
            _render(result)


def _stderr_console() -> Any:
    # lazy imports keep the CLI's cold start fast
    from rich.console import Console

    return Console(stderr=True)
