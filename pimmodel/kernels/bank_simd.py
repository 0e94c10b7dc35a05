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
