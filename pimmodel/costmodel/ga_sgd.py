"""GA-SGD (mini-batch SGD with gradient averaging over a global batch B), as the study implemented it.

Per round, for every DPU: the host pushes w (and, dense, the bias), the same buffer to all DPUs (parallel
push or broadcast, as MA-SGD); one launch zeroes the accumulators and accumulates the eta-scaled
gradient terms of b = B/N local rows (no update on the DPU); the host pulls the accumulators (dense:
d x int32 plus the int64 bias gradient; sparse: d x int64), sums them over the DPUs and updates w.
Rounds per epoch R = m / B = rows per DPU / b.
"""

from __future__ import annotations

import sympy

from ..kernels import pricing
from ..kernels.study import PROFILE as K
from ..kernels.vocabulary import HostCall
from .common import (
    HW,
    WL,
    EquationSet,
    Exchange,
    bias_calls,
    dpu_sections,
    host_reduce,
    host_threads,
    model_bytes,
)
from .terms import Terms


def equations(model: str, layout: str, kernels: str = "study", topology: str = "none") -> EquationSet:
    """The host-path equations; on link hardware the registry replaces the averaging (``averaging``)."""
    t = Terms()
    rounds = t.define("R", sympy.ceiling(WL.rows_per_dpu / WL.local_batch), "rounds per epoch: b = B/N rows per "
                      "DPU per round; the largest shard's last batch may be partial")
    sections = dpu_sections(t, model, layout, samples=WL.rows_per_dpu, steps=rounds, launches=rounds,
                            update=False, admm=False, kernels=kernels)
    gradient_bytes = _gradient_bytes(layout)
    push = [HostCall("w", model_bytes(layout), to_pim=True, mode="identical"),
            *bias_calls(layout, to_pim=True, mode="identical")]
    pull = [HostCall("gradient", WL.features * gradient_bytes, to_pim=False), *bias_calls(layout, to_pim=False)]
    reduce = t.define("t_reduce", host_reduce(K.ga_host_passes, gradient_bytes, layout),
                      "host: sum the N gradients (one pass over N x d, threads created and joined)")
    update = t.define("t_update", pricing.host_reduce_s(K.ga_host_update_bytes_per_weight * WL.features,
                                                        host_threads(layout), 0, HW),
                      "host: update w from the summed gradient (read the sum and w, write w)")
    return EquationSet(t, sections, rounds=rounds, launches=rounds, calls_per_round=(*push, *pull),
                       host_aggregate_s=rounds * (reduce + update), exchange=averaging(layout))


def averaging(layout: str) -> Exchange:
    """Over direct links: all-reduce the gradients (and bias gradient); every DPU updates w (one sweep)."""
    gradient_bytes = _gradient_bytes(layout)
    return Exchange(WL.features * gradient_bytes + (8 if layout == "dense" else 0), gradient_bytes,
                    update_passes=1)


def _gradient_bytes(layout: str) -> int:
    """Accumulators the host pulls: int32 for the dense kernels, int64 for the sparse ones."""
    return 4 if layout == "dense" else K.sparse_acc_bytes
