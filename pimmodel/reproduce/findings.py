"""What the model says about a figure, in sentences computed from the figure's numbers (never a fixed
conclusion): the line that stands beside the study's finding in the table, the JSON and the README."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..baselines.workload import optimizer_label as label
from ..phases import COMM_PHASES
from ..units import format_seconds

Row = Mapping[str, Any]


def _s(seconds: float) -> str:
    """Seconds as a reader takes them in: 360.1 s, 17,490 s (never 1.749e+04 s)."""
    return f"{seconds:,.0f} s" if seconds >= 1000 else format_seconds(seconds)


def _gb(n_bytes: float) -> str:
    value = n_bytes / 1e9
    return f"{value:,.0f} GB" if value >= 100 else f"{value:.3g} GB"


def _gbs(bytes_per_s: float) -> str:
    value = bytes_per_s / 1e9
    return f"{value:,.0f} GB/s" if value >= 100 else f"{value:.3g} GB/s"


def _times(ratio: float) -> str:
    """A ratio as people say it: 312x, 4.5x, 1.03x."""
    return f"{ratio:,.0f}x" if ratio >= 100 else (f"{ratio:.1f}x" if ratio >= 10 else f"{ratio:.2f}x")


def _faster(other_s: float, pim_s: float) -> str:
    """PIM against another platform: '3.20x faster' or '2.50x slower'."""
    return f"{_times(other_s / pim_s)} faster" if other_s >= pim_s else f"{_times(pim_s / other_s)} slower"


def _faster_ranged(other: Mapping[str, Any], pim_s: float) -> str:
    """``_faster`` with the range over the other run's assumption interval (the CPU's all-reduce latency)."""
    head = _faster(other["total_s"], pim_s)
    span = other.get("total_s_range")
    if not span:
        return head
    low, high = (t / pim_s for t in span)
    if max(low, high) / min(low, high) < 1.1:
        return f"{head} (hardly moved by the CPU's all-reduce latency: {_range_x(low, high)})"
    return f"{head} ({_range_x(low, high)}, decided by the CPU's all-reduce latency)"


def _range_x(low: float, high: float) -> str:
    """'1.5-13x faster', '2.0x slower-3.1x faster'."""
    def one(x: float) -> str:
        return f"{_times(x)} faster" if x >= 1 else f"{_times(1 / x)} slower"
    if (low >= 1) == (high >= 1):
        a, b = (low, high) if low >= 1 else (1 / high, 1 / low)
        return f"{_times(a).rstrip('x')}-{_times(b)} {'faster' if low >= 1 else 'slower'}"
    return f"from {one(low)} to {one(high)}"


def _share(fraction: float) -> str:
    """A share as a percentage, with the digits a small one needs (0.04 %, not 0 %)."""
    return f"{fraction:.0%}" if fraction >= 0.01 or fraction == 0 else f"{fraction:.2%}"


def _metric_name(record: Mapping[str, Any]) -> str:
    return "test accuracy" if record["metric"] == "accuracy" else "test AUC"


def _by_model(rows: Sequence[Row]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(r["model"], []).append(r)
    return out


def _prefix(model: str, several: bool) -> str:
    return f"{model.upper()}: " if several else ""


# ---------------------------------------------------------------- per kind
def _data_movement(record: Mapping[str, Any]) -> list[str]:
    out = []
    groups = _by_model(record["data"])
    for model, rows in groups.items():
        pre = _prefix(model, len(groups) > 1)
        ranked = sorted(rows, key=lambda r: r["host_pim_bytes"], reverse=True)
        least = ranked[-1]
        if least["host_pim_bytes"] > 0 and len(ranked) > 1:
            more = ", ".join(f"{_times(r['host_pim_bytes'] / least['host_pim_bytes'])} fewer than "
                             f"{label(r['optimizer'])} ({_gb(r['host_pim_bytes'])})" for r in ranked[:-1])
            out.append(f"{pre}{label(least['optimizer'])} moves the fewest bytes between host and PIM per epoch "
                       f"({_gb(least['host_pim_bytes'])}): {more}")
        host = [r["host_pim_bytes_per_s"] for r in rows if r["host_pim_bytes_per_s"]]
        dma = [r["mram_wram_bytes_per_s"] for r in rows if r["mram_wram_bytes_per_s"]]
        if host and dma:
            out.append(f"{pre}host<->PIM throughput is {_gbs(min(host))} to {_gbs(max(host))}, MRAM<->WRAM over all "
                       f"DPUs {_gbs(min(dma))} to {_gbs(max(dma))}: {_times(min(dma) / max(host))} to "
                       f"{_times(max(dma) / min(host))} higher")
        ratios = [(r, r["mram_wram_bytes"] / r["host_pim_bytes"]) for r in rows if r["host_pim_bytes"] > 0]
        if ratios:
            out.append(f"{pre}per epoch the DPUs move " + ", ".join(
                f"{_times(k)} ({label(r['optimizer'])})" for r, k in ratios) +
                " as many bytes between MRAM and WRAM as between host and PIM")
    return out


def _breakdown(record: Mapping[str, Any]) -> list[str]:
    out = []
    groups = _by_model(record["data"])
    for model, rows in groups.items():
        pre = _prefix(model, len(groups) > 1)
        shares = ", ".join(f"{_share(r['comm_sync_s'] / r['epoch_s'])} of {label(r['optimizer'])}'s "
                           f"{_s(r['epoch_s'])}" for r in rows if r["epoch_s"] > 0)
        out.append(f"{pre}comm./sync. with the parameter server is {shares} per epoch")
        compute_first = [r for r in rows if r["pim_compute_s"] >= r["pim_data_movement_s"]]
        dma_first = [r for r in rows if r["pim_compute_s"] < r["pim_data_movement_s"]]

        def ratio_list(group: list[Row], num: str, den: str) -> str:
            return ", ".join(f"{label(r['optimizer'])} {_times(r[num] / r[den])}" if r[den] > 0 else
                             label(r["optimizer"]) for r in group)

        parts = []
        if compute_first:
            parts.append("PIM compute exceeds PIM data movement for "
                         + ratio_list(compute_first, "pim_compute_s", "pim_data_movement_s"))
        if dma_first:
            parts.append("PIM data movement exceeds PIM compute for "
                         + ratio_list(dma_first, "pim_data_movement_s", "pim_compute_s"))
        out.append(pre + "; ".join(parts))
    return out


def _time_to_accuracy(record: Mapping[str, Any]) -> list[str]:
    out = []
    metric = _metric_name(record)
    groups = _by_model(record["data"])
    for model, rows in groups.items():
        pre = _prefix(model, len(groups) > 1)
        fastest = min(rows, key=lambda r: r["total_s"])
        pim = {r["optimizer"]: r for r in rows if r["platform"] == "pim"}
        cpu = {r["optimizer"]: r for r in rows if r["platform"] == "cpu"}
        sentence = (f"{pre}the shortest {fastest['epochs']} epochs: {fastest['label']} "
                    f"({_s(fastest['total_s'])})")
        versus = [f"{label(o)} {_faster_ranged(cpu[o], pim[o]['total_s'])}" for o in pim if o in cpu]
        if versus:
            sentence += "; PIM against the CPU with the same optimizer: " + ", ".join(versus)
        out.append(sentence)
        gpu = [r for r in rows if r["platform"] == "gpu"]
        if gpu and pim:
            best = min(pim.values(), key=lambda r: r["total_s"])
            out.append(f"{pre}the GPU's mini-batch SGD takes {_s(gpu[0]['total_s'])}; PIM's shortest "
                       f"({best['label']}) is {_faster(gpu[0]['total_s'], best['total_s'])}")
        top = max(rows, key=lambda r: r["final_metric"])
        low = min(rows, key=lambda r: r["final_metric"])
        out.append(f"{pre}final {metric} (stand-in, mean of the seeds) from {low['final_metric']:.3f} "
                   f"({low['label']}) to {top['final_metric']:.3f} ({top['label']})")
        verdicts = [f"{label(o)} {_accuracy_verdict(pim[o], cpu[o])}" for o in pim if o in cpu]
        if verdicts:
            out.append(f"{pre}PIM's final {metric} against the CPU's (a difference only where the seeds' ranges "
                       "do not overlap): " + ", ".join(verdicts))
    return out


def _accuracy_verdict(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """``a``'s final metric against ``b``'s: "higher by 0.031" / "lower by ..." where the seeds' final ranges do
    not overlap, else "within noise (seeds' ranges overlap)"; "within noise" too when a run has no spread."""
    lo_a, hi_a, lo_b, hi_b = (r.get(k) or [] for r, k in ((a, "per_epoch_metric_low"), (a, "per_epoch_metric_high"),
                                                           (b, "per_epoch_metric_low"), (b, "per_epoch_metric_high")))
    diff = a["final_metric"] - b["final_metric"]
    if lo_a and lo_b and (lo_a[-1] > hi_b[-1] or lo_b[-1] > hi_a[-1]):
        return f"{'higher' if diff > 0 else 'lower'} by {abs(diff):.3f}"
    return f"within noise ({diff:+.3f}, seeds' ranges overlap)" if lo_a and lo_b else "within noise (one seed)"


def _batch_sweep(record: Mapping[str, Any]) -> list[str]:
    out = []
    metric = _metric_name(record)
    panels: dict[str, list[Row]] = {}
    for r in record["data"]:
        panels.setdefault(r["panel"], []).append(r)
    for panel, rows in panels.items():
        series = {p: sorted((r for r in rows if r["platform"] == p), key=lambda r: r["batch_size"])
                  for p in dict.fromkeys(r["platform"] for r in rows)}
        parts = []
        for platform, pts in series.items():
            first, last = pts[0], pts[-1]
            change = _times(first["total_s"] / last["total_s"]) + " shorter" if last["total_s"] <= first["total_s"] \
                else _times(last["total_s"] / first["total_s"]) + " longer"
            parts.append(f"{platform.upper()} {_s(first['total_s'])} at {first['batch_size']:,} -> "
                         f"{_s(last['total_s'])} at {last['batch_size']:,} ({change})")
        out.append(f"{panel}: time of {rows[0]['epochs']} epochs " + "; ".join(parts))
        if "pim" in series and "cpu" in series:
            cpu = {r["batch_size"]: r for r in series["cpu"]}
            wins = [r["batch_size"] for r in series["pim"] if r["batch_size"] in cpu
                    and r["total_s"] < cpu[r["batch_size"]]["total_s"]]
            out.append(f"{panel}: PIM is faster than the CPU at {len(wins)} of {len(cpu)} batch sizes"
                       + (f" ({', '.join(f'{b:,}' for b in wins)})" if 0 < len(wins) < len(cpu) else ""))
        moves = ", ".join(f"{p.upper()} {pts[0]['final_metric']:.3f} -> {pts[-1]['final_metric']:.3f}"
                          for p, pts in series.items())
        out.append(f"{panel}: final {metric} (stand-in) from the smallest to the largest batch: {moves}")
    return out


def _comm_share(row: Row) -> float:
    phases = row["time_model"]["per_epoch_s"]
    return sum(phases[k] for k in COMM_PHASES) / phases["total"] if phases["total"] else 0.0


def _scaling(record: Mapping[str, Any]) -> list[str]:
    out = []
    metric = _metric_name(record)
    weak = record["configuration"]["scaling"] == "weak"
    groups = _by_model(record["data"])
    for model, rows in groups.items():
        pre = _prefix(model, len(groups) > 1)
        series: dict[str, list[Row]] = {}
        for r in rows:
            series.setdefault(r["optimizer"], []).append(r)
        lo_n, hi_n = min(r["dpus"] for r in rows), max(r["dpus"] for r in rows)
        ends = {o: (min(pts, key=lambda r: r["dpus"]), max(pts, key=lambda r: r["dpus"])) for o, pts in series.items()}
        if weak:
            growth = ", ".join(f"{label(o)} {_times(hi['total_s'] / lo['total_s'])}" for o, (lo, hi) in ends.items())
            out.append(f"{pre}time of {rows[0]['epochs']} epochs at {hi_n:,} against {lo_n:,} DPUs: {growth} (perfect "
                       "weak scaling: 1.00x)")
        else:
            speedup = ", ".join(f"{label(o)} {_times(lo['total_s'] / hi['total_s'])}" for o, (lo, hi) in ends.items())
            out.append(f"{pre}speedup from {lo_n:,} to {hi_n:,} DPUs: {speedup} (linear: {_times(hi_n / lo_n)})")
        shares = ", ".join(f"{label(o)} {_share(_comm_share(lo))} -> {_share(_comm_share(hi))}"
                           for o, (lo, hi) in ends.items())
        out.append(f"{pre}host transfers and aggregation as a share of the epoch, {lo_n:,} -> {hi_n:,} DPUs: {shares}")
        moves = ", ".join(f"{label(o)} {lo['final_metric']:.3f} -> {hi['final_metric']:.3f}"
                          for o, (lo, hi) in ends.items())
        out.append(f"{pre}final {metric} (stand-in), {lo_n:,} -> {hi_n:,} DPUs: {moves}")
    return out


KINDS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "data-movement": _data_movement, "breakdown": _breakdown, "time-to-accuracy": _time_to_accuracy,
    "batch-sweep": _batch_sweep, "scaling": _scaling,
}


def model_says(record: Mapping[str, Any]) -> list[str]:
    """Sentences computed from ``record["data"]`` (a figure record of ``figures.compute``)."""
    return KINDS[record["figure"]["kind"]](record)
