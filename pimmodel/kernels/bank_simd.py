"""Can a workload run on bank-level SIMD PIM, and does it fit? The family's capacity check
(``specs.architectures``): the units have no gather (a sparse row's indices would need one), no links, and each
holds its shard, its model and its gradient in FP16 in its own banks."""

from __future__ import annotations

from typing import Any

from ..errors import CapacityError, SpecError
from ..specs.architectures import architecture_of, check_layout
from ..specs.bank_simd import VALUE_BYTES
from ..specs.optimizers import require_links
from ..units import MiB


def unit_bytes(w: Any) -> int:
    """Bank bytes one unit needs: its rows and labels, the model, the gradient and (ADMM) the duals, in FP16."""
    d = w.dataset.features
    vectors = 2 + (2 if w.info.keeps_duals else 0)
    return w.rows_per_dpu * (d + 1) * VALUE_BYTES + vectors * d * VALUE_BYTES


def check(w: Any, hw: Any) -> int:
    """Raise a one-line error for what ``hw`` cannot run or hold; return the bytes per unit otherwise."""
    info = architecture_of(hw)
    require_links(w.optimizer, hw.link_topology, hw.name)
    check_layout(w.dataset, hw)
    if w.dpus > hw.dpus_available:
        raise SpecError(f"--dpus {w.dpus} exceeds the {hw.dpus_available} {info.unit}s of {hw.name}; use at most "
                        f"{hw.dpus_available}")
    need = unit_bytes(w)
    if need > hw.unit_memory_bytes:
        rows = w.rows_per_dpu * w.dpus
        per_row = (w.dataset.features + 1) * VALUE_BYTES
        room = hw.unit_memory_bytes - (need - w.rows_per_dpu * per_row)
        fewest = -(-rows // max(1, room // per_row)) if room > 0 else None
        fix = (f"use --dpus {fewest} or more" if fewest is not None and fewest <= hw.dpus_available
               else "no unit count of this system fits")
        raise CapacityError(f"{need / MiB:.1f} MiB per {info.unit} but a {info.unit} of {hw.name} has "
                            f"{hw.unit_memory_bytes / MiB:.0f} MiB; {fix}")
    return need


# ---------------------------------------------------------------- memory-bound micro-kernels (the silicon checks)
def unit_stream_s_per_byte(hw: Any) -> float:
    """Seconds per byte one unit streams from its banks through its lanes: one command per ``lanes`` FP16 values,
    plus the exposed share of one all-bank activation per row."""
    return hw.command_s / (VALUE_BYTES * hw.lanes) + hw.activation_exposed * hw.row_cycle_s / hw.row_bytes


def channel_stream_bytes_per_s(hw: Any) -> float:
    """Bytes per second the units of one pseudo-channel stream together (they run the same command at once)."""
    return hw.units_per_channel / unit_stream_s_per_byte(hw)


def peak_internal_over_pins(hw: Any) -> float:
    """The units' command rate over the pins' rate, activations aside (ISSCC'21 states 4x for the device)."""
    return hw.units_per_channel * VALUE_BYTES * hw.lanes / hw.command_s / hw.channel_bytes_per_s


def streaming_speedup(hw: Any, host_fraction: float) -> float:
    """A large memory-bound kernel's (GEMV, vector ADD) speed-up on the units over a host that streams the same
    bytes at ``host_fraction`` of the pins' rate (mode switches and kernel calls amortised over a large size)."""
    return channel_stream_bytes_per_s(hw) / (host_fraction * hw.channel_bytes_per_s)
