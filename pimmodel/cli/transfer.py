"""``pimmodel transfer``: one host<->PIM transfer call priced as the SDK's host side does it, with its 95 % interval
(the machine-to-machine spread of the upmem-scale fit files), for every point of a cross product; ``--fit`` re-runs
the per-machine fit."""

from __future__ import annotations

from typing import Annotated

import typer

from . import options as O

DIRECTIONS = ("to-dpu", "from-dpu")
MODES = ("parallel", "serial", "broadcast")
MEMORIES = ("mram", "wram")

Direction = Annotated[str, typer.Option("--direction", help="to-dpu or from-dpu (comma-separated for both).")]
BytesPerDpu = Annotated[str, typer.Option("--bytes-per-dpu", help="Bytes per DPU, comma-separated; KiB, MiB, GiB "
                                          "suffixes allowed, e.g. 8,65536,1MiB.")]
Dpus = Annotated[str, typer.Option("--dpus", help="DPU counts, comma-separated (up to the spec's DPUs).")]
Mode = Annotated[str, typer.Option("--mode", help="parallel (dpu_push_xfer), serial (one DPU per call) or "
                                   "broadcast (dpu_broadcast_to, to-dpu only).")]
Memory = Annotated[str, typer.Option("--memory", help="mram or wram (a __host symbol).")]
Fit = Annotated[bool, typer.Option("--fit", help="Re-run the per-machine fit on the upmem-scale fit files and "
                                   "print the constant sets and their errors (about 10 s).")]

_UNITS = {"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "b": 1}


def parse_bytes(text: str, option: str = "--bytes-per-dpu") -> list[int]:
    """``8,65536,1MiB`` -> [8, 65536, 1048576]; a bad entry is a one-line error."""
    import math

    from ..errors import SpecError  # lazy imports keep the CLI's cold start fast

    parts = [p.strip() for p in text.split(",")]
    if "" in parts:
        raise SpecError(f"{option} {text!r} has an empty entry; separate the values with single commas, e.g. "
                        "8,65536,1MiB")
    out = []
    for part in parts:
        low = part.lower()
        unit = next((u for u in sorted(_UNITS, key=len, reverse=True) if low.endswith(u)), "")
        number = low[: len(low) - len(unit)] if unit else low
        try:
            value = float(number) * _UNITS.get(unit, 1)
        except ValueError:
            raise SpecError(f"{option} takes byte counts like 8,65536,1MiB; got {part!r}") from None
        if not math.isfinite(value) or value < 1 or value != int(value):
            raise SpecError(f"{option}: {part!r} is not a whole number of bytes of at least 1")
        out.append(int(value))
    return out


def transfer_command(direction: Direction = "to-dpu", bytes_per_dpu: BytesPerDpu = "65536",
                     dpus: Dpus = "64", mode: Mode = "parallel", memory: Memory = "mram",
                     hardware: O.Hardware = "upmem-2556", placement: O.Placement = None, fit: Fit = False,
                     output: O.Output = None, json: O.Json = False) -> None:
    """Predict one host<->PIM transfer call for every direction x bytes per DPU x DPU count.

    --json prints {"points": [{"direction", "mode", "memory", "dpus", "bytes_per_dpu", "seconds", "gb_per_s",
    "low_s", "high_s", "placement", "remote_share"}]}: gb_per_s is the bytes delivered (or read) over all DPUs per
    second; [low_s, high_s] is a 95 % interval from the spread between the machines fitted to the upmem-scale fit
    files and their fit residual, doubled outside the fitted range (1-2,560 DPUs, 64 KiB-8 MiB per DPU, MRAM
    parallel both ways and serial to the DPUs), widened by the assumed remote penalty's range where some host
    buffers are remote (--placement).
    """
    O.check_output(output)
    if fit:
        return _fit(hardware, json)
    from ..errors import SpecError  # lazy imports keep the CLI's cold start fast

    directions = O.parse_name_list(direction, "--direction", DIRECTIONS)
    modes = O.parse_name_list(mode, "--mode", MODES)
    memories = O.parse_name_list(memory, "--memory", MEMORIES)
    sizes = parse_bytes(bytes_per_dpu)
    counts = O.parse_int_list(dpus, "--dpus")
    hw = O.hardware(hardware, "transfer", placement=placement)
    for n in counts:
        if not 1 <= n <= hw.dpus_available:
            raise SpecError(f"--dpus: {n} is not in [1, {hw.dpus_available}] DPUs of {hw.name}")
    if "broadcast" in modes and "from-dpu" in directions:
        raise SpecError("--mode broadcast goes to the DPUs only; use --direction to-dpu")
    from ..calibration.transfers import check_call

    for mem in memories:
        for s in sizes:
            check_call(s, hw, mem, option="--bytes-per-dpu")
    rows = _points(hw, directions, modes, memories, counts, sizes)
    if O.finish({"points": rows, "provenance": O.provenance(hw)}, output, "points", json):
        return
    _table(f"{hw.name}, placement {rows[0]['placement']}", rows)


def _points(hw, directions, modes, memories, counts, sizes) -> list[dict]:  # type: ignore[no-untyped-def]
    # lazy imports keep the CLI's cold start fast
    from ..calibration.transfers import transfer_interval
    from ..primitives import remote_rank_share
    from ..specs.placement import placement_of

    rows = []
    where = placement_of(hw)
    for d in directions:
        for m in modes:
            for mem in memories:
                for n in counts:
                    for s in sizes:
                        seconds, low, high = transfer_interval(s, n, hw, d, m, mem)
                        rows.append({"direction": d, "mode": m, "memory": mem, "dpus": n, "bytes_per_dpu": s,
                                     "seconds": seconds, "gb_per_s": s * n / seconds / 1e9, "low_s": low,
                                     "high_s": high, "placement": where,
                                     "remote_share": float(remote_rank_share(n, hw))})
    return rows


def _table(name: str, rows: list[dict]) -> None:
    from rich.table import Table  # lazy imports keep the CLI's cold start fast

    from ..report.tables import stdout_console

    table = Table(title=f"host transfers on {name} (95 % interval)")
    for i, col in enumerate(("direction", "mode", "memory", "DPUs", "B/DPU", "ms", "GB/s", "low ms", "high ms")):
        table.add_column(col, justify="left" if i < 3 else "right")
    for r in rows:
        table.add_row(r["direction"], r["mode"], r["memory"], str(r["dpus"]), f"{r['bytes_per_dpu']:,}",
                      f"{1e3 * r['seconds']:.4g}", f"{r['gb_per_s']:.3g}", f"{1e3 * r['low_s']:.4g}",
                      f"{1e3 * r['high_s']:.4g}")
    stdout_console().print(table)


def _fit(hardware: str, as_json: bool) -> None:
    from ..calibration.transfers import fit_all  # lazy imports keep the CLI's cold start fast

    hw = O.hardware(hardware, "transfer")
    result = fit_all(hw)
    if as_json:
        from ..report.json import emit

        emit({**result, "provenance": O.provenance(hw)})
        return
    for machine, values in result["machines"].items():
        typer.echo(f"{machine}: " + ", ".join(f"{k} = {v:.4g}" for k, v in values.items()))
        for group, e in result["fit"][machine]["errors"].items():
            typer.echo(f"  {group}: MAPE {e['mape_pct']:.1f} % over {e['points']} points, DPUs {e['dpus']}")
    launch = result["launch"]
    typer.echo(f"launch_per_rank_s = {launch['launch_per_rank_s']:.3g} (standard error "
               f"{launch['standard_error_s']:.2g}) from {launch['rows']} rows of {launch['source']}")


def register(app: typer.Typer) -> None:
    app.command("transfer")(transfer_command)
