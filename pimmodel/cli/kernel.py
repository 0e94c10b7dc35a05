"""``pimmodel kernel``: predict the PrIM kernels of the real-hardware data set, list them, re-run the hardware fit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from . import options as O

Name = Annotated[str | None, typer.Option("--name", help="PrIM kernel (see --list), e.g. VA.")]
Dpus = Annotated[str, typer.Option("--dpus", help="DPU counts, comma-separated.")]
Size = Annotated[str | None, typer.Option("--size", help="Sizes, comma-separated: what the data set's "
                                          "data_prep_param means for the kernel (see --list).")]
ListKernels = Annotated[bool, typer.Option("--list", help="Name the kernels and what their size means.")]
Fit = Annotated[bool, typer.Option("--fit", help="Re-run the hardware fit on the real measurements "
                                   "(validation/upimulator-hw.csv) instead of predicting.")]
Output = Annotated[Path | None, typer.Option("--output", "-o", help="With --fit: write the calibration (JSON) "
                                             "here (the shipped one is data/calibration/hardware-upmem-2556.json)."
                                             " Otherwise: also write the record to a .json, .csv or .parquet file "
                                             "(one row per point or kernel).")]
NoCv = Annotated[bool, typer.Option("--no-cv", help="With --fit: skip the leave-one-kernel-out refits.")]
Cols = Annotated[int | None, typer.Option("--cols", help="GEMV and MLP: columns n; TRNS: n, columns of a block "
                                          "(see --list).")]
Rows = Annotated[int | None, typer.Option("--rows", help="TRNS: m, rows of a tile.")]
Blocks = Annotated[int | None, typer.Option("--blocks", help="TRNS: N_, column blocks (one per DPU per round).")]
Layers = Annotated[int | None, typer.Option("--layers", help="MLP: layers (one launch each).")]
QueryLength = Annotated[int | None, typer.Option("--query-length", help="TS: query length m, a multiple of 64.")]
Queries = Annotated[int | None, typer.Option("--queries", help="BS: query count (default: size / 8).")]
Elem = Annotated[str | None, typer.Option("--type", help="RED: element type, int32 or int64.")]
FitBandwidths = Annotated[bool, typer.Option("--fit-bandwidths", help="With --fit: also fit the one-DPU and "
                                             "full-rank push and pull bandwidths (PrIM's microbenchmark values "
                                             "otherwise stay).")]


def kernel_command(name: Name = None, dpus: Dpus = "1,4,16,64", size: Size = None, hardware: O.Hardware = "upmem-2556",
                   list_kernels: ListKernels = False, fit: Fit = False, output: Output = None, no_cv: NoCv = False,
                   fit_bandwidths: FitBandwidths = False, cols: Cols = None, rows: Rows = None, blocks: Blocks = None,
                   layers: Layers = None, query_length: QueryLength = None, queries: Queries = None,
                   elem: Elem = None, json: O.Json = False) -> None:
    """Predict a PrIM kernel's time and its host transfers for every DPU count x size.

    --json prints {"points": [{"kernel", "dpus", "size", "shape", "feasible", "reason", "kernel_ms", "low_ms",
    "high_ms", "cpu_to_dpu_ms", "dpu_to_cpu_ms"}]}: low_ms/high_ms bound the kernel time's 95 % interval (from
    leave-one-kernel-out residuals on the real measurements, widened outside the fitted DPU counts and sizes); a
    point whose data does not fit a DPU's memory is feasible=false with the reason and no times, the others are
    priced. DPU counts go up to the spec's DPUs. size means what the data set's data_prep_param means for the
    kernel, and the shape options (--cols, --rows, --blocks, --layers, --query-length, --queries, --type) set the
    PrIM build's other parameters (--list says which kernel takes which, with the PrIM source). --fit re-runs the
    hardware calibration: it fits the kernel-time constants (launch, DMA/compute overlap, barrier) and the host
    transfer constants (call overheads, WRAM-symbol transfers, extra per DPU of a transfer line) to the real
    measurements of every kernel but VA, GEMV and RED (the test kernels), prints the constants, the errors per
    kernel and their leave-one-kernel-out cross-validation (about 15 s), and with --output writes the calibration
    file; the spec's F constants come from the shipped one (data/calibration/hardware-upmem-2556.json).
    """
    if list_kernels:
        O.check_output(output)
        return _list(json, output)
    if fit:
        return _fit(hardware, output, not no_cv, fit_bandwidths, json)
    from ..errors import SpecError  # lazy imports keep the CLI's cold start fast

    if name is None or size is None:
        raise SpecError("pimmodel kernel needs --name and --size (or --list, or --fit), e.g. --name VA --size 524288")
    O.check_output(output)
    shape = {"cols": cols, "rows": rows, "blocks": blocks, "layers": layers, "query_length": query_length,
             "queries": queries, "elem": elem}
    _predict(name.upper(), O.parse_int_list(dpus, "--dpus"), O.parse_int_list(size, "--size"), hardware, json,
             output, {k: v for k, v in shape.items() if v is not None})


_OPTION = {"cols": "--cols", "rows": "--rows", "blocks": "--blocks", "layers": "--layers",
           "query_length": "--query-length", "queries": "--queries", "elem": "--type"}


def _predict(name: str, dpu_list: list[int], sizes: list[int], hardware: str, json: bool,
             output: Path | None = None, shape: dict[str, int | str] | None = None) -> None:
    from ..calibration.kernel_interval import predict_grid  # lazy imports keep the CLI's cold start fast
    from ..errors import SpecError
    from ..kernels.prim import check_shape, kernels

    hw = O.hardware(hardware, "kernel")
    shape = shape or {}
    if name in kernels():
        takes = {p.key for p in kernels()[name].shape}
        for key in shape:
            if key not in takes:
                options = ", ".join(_OPTION[k] for k in sorted(takes)) or "no shape options"
                raise SpecError(f"{_OPTION[key]}: {name} does not take it (it takes {options})")
    for n in dpu_list:
        if not 1 <= n <= hw.dpus_available:
            raise SpecError(f"--dpus: {n} is not in [1, {hw.dpus_available}] DPUs of {hw.name}")
    if name in kernels():
        check_shape(name, dict(shape))
    points = predict_grid(name, dpu_list, sizes, hw, shape)
    if O.finish({"points": points, "provenance": O.provenance(hw)}, output, "points", json):
        return
    where = ", ".join(f"{_OPTION[k]} {v}" for k, v in shape.items())
    _table(f"{name}{' (' + where + ')' if where else ''} on {hw.name}",
           ("DPUs", "size", "kernel ms", "95 % interval", "CPU->DPU ms", "DPU->CPU ms"),
           [(str(p["dpus"]), f"{p['size']:,}", f"{p['kernel_ms']:.4g}", f"{p['low_ms']:.4g}-{p['high_ms']:.4g}",
             f"{p['cpu_to_dpu_ms']:.4g}", f"{p['dpu_to_cpu_ms']:.4g}") if p["feasible"]
            else (str(p["dpus"]), f"{p['size']:,}", "infeasible", str(p["reason"]), "", "") for p in points])


def _list(json: bool, output: Path | None = None) -> None:
    from ..calibration.measurements import TEST_KERNELS  # lazy imports keep the CLI's cold start fast
    from ..kernels.prim import kernels

    rows = [{"kernel": k.name, "size": k.size, "test": k.name in TEST_KERNELS,
             "shape": [{"option": _OPTION[p.key], "key": p.key, "default": p.default, "meaning": p.meaning,
                        **({"choices": list(p.choices)} if p.choices else {})} for p in k.shape]}
            for k in kernels().values()]
    if O.finish({"kernels": rows, "provenance": O.provenance()}, output, "kernels", json):
        return
    _table("PrIM kernels of the real-hardware data set", ("kernel", "size (data_prep_param)", "role", "shape options"),
           [(str(r["kernel"]), str(r["size"]), "test (never fitted)" if r["test"] else "fitted",
             "; ".join(f"{p['option']} (default {p['default']}): {p['meaning']}" for p in r["shape"]))  # type: ignore
            for r in rows])


def _fit(hardware: str, output: Path | None, cross_validate: bool, bandwidths: bool, json: bool) -> None:
    from ..atomic import check_writable  # lazy imports keep the CLI's cold start fast
    from ..calibration.hardware import BANDWIDTH_CONSTANTS, HOST_CONSTANTS, calibrate_hardware
    from ..calibration.measurements import load_measurements

    if output is not None:
        check_writable(output, "calibration")
    hw = O.hardware(hardware, "kernel")
    _check_measured_machine(hw, BANDWIDTH_CONSTANTS + HOST_CONSTANTS)
    host = HOST_CONSTANTS + (BANDWIDTH_CONSTANTS if bandwidths else ())
    result = calibrate_hardware(hw, load_measurements(), cross_validate, host_constants=host,
                                label=f"{output.name if output else 'unsaved'} (hardware fit of {hw.name})")
    if output is not None:
        result.write(output)
    record = result.to_json()
    record["provenance"] = {**record.get("provenance", {}), **O.provenance(hw)}
    if json:
        from ..report.json import emit

        emit(record)
    else:
        _print_fit(record)
    if output is not None:
        typer.echo(f"hardware calibration written to {output}", err=True)


MEASURED_ON = "upmem-2556"
"""The spec of the system the real measurements (validation/upimulator-hw.csv) describe: its shipped hardware fit
is ``data/calibration/hardware-upmem-2556.json``."""


def _check_measured_machine(hw: Any, fitted: tuple[Any, ...]) -> None:
    """--fit fits constants of the machine the measurements were taken on: a spec whose other constants differ
    (another clock, DPU count, DMA or host link) would absorb the difference into degenerate fitted values."""
    from ..calibration.hardware import KERNEL_CONSTANTS  # lazy imports keep the CLI's cold start fast
    from ..errors import SpecError
    from ..specs import load_hardware

    names = {c.name for c in (*KERNEL_CONSTANTS, *fitted)}
    ours, measured = hw.numeric(), load_hardware(MEASURED_ON).numeric()
    differ = sorted(k for k in measured if k not in names and str(ours.get(k)) != str(measured[k]))
    if differ or hw.link_topology != load_hardware(MEASURED_ON).link_topology:
        shown = ", ".join(differ[:3]) + (f" and {len(differ) - 3} more" if len(differ) > 3 else "")
        raise SpecError(f"--fit fits the real measurements of {MEASURED_ON} (validation/upimulator-hw.csv); "
                        f"--hardware {hw.name} is another machine ({shown or 'its links'} differ), so its constants "
                        f"would be fitted to times it did not produce; use --hardware {MEASURED_ON}")


def _print_fit(record: dict[str, Any]) -> None:
    for group, fit in record["fits"].items():
        _table(f"{group} constants fitted on {len(fit['points'])} points (± standard error)",
               ("constant", "value", "std error", "start"),
               [(n, f"{c['value']:.4g}", f"{c['std_error']:.2g}", f"{c['start']:.4g}")
                for n, c in fit["constants"].items()])
    _table("error against real hardware per kernel, MAPE % (test kernels never fitted; CV: leave one kernel out)",
           ("kernel", "role", "kernel", "CV", "CPU->DPU", "CV", "DPU->CPU", "CV", "uPIMulator"),
           [(e["kernel"], e["role"], *(f"{e[k]:.1f}" for k in ("kernel_mape", "cv_kernel_mape", "cpu_to_dpu_mape",
                                                              "cv_cpu_to_dpu_mape", "dpu_to_cpu_mape",
                                                              "cv_dpu_to_cpu_mape", "upimulator_kernel_mape")))
            for e in record["errors"]])
    _table("over all points", ("quantity", "MAPE %"), [(k, f"{v:.1f}") for k, v in record["summary"].items()])


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    from rich.table import Table  # lazy imports keep the CLI's cold start fast

    from ..report.tables import stdout_console

    table = Table(title=title)
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*row)
    stdout_console().print(table)


def register(app: typer.Typer) -> None:
    app.command("kernel")(kernel_command)
