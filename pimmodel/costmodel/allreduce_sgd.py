"""All-reduce SGD: GA-SGD with the gradient sum all-reduced over direct DPU links and the update done on every
DPU; no host in the loop.

One launch per epoch runs every round: each DPU accumulates the eta-scaled gradient of b = B/N local rows (the
GA-SGD kernel), the DPUs all-reduce the accumulators as exact int64 partial sums (dense: plus the int64 bias
gradient) over the links (ring, 2-D torus or all-to-all; ``interconnect.py``), and every DPU applies the host's
GA-SGD update ``w <- clamp(w - mean(A) - D(w >> (l + r)))`` (one sweep). The sum is the host's sum exactly, so the
trained model is GA-SGD's bit for bit. Rounds per epoch R = rows per DPU / b.
"""

from __future__ import annotations

import sympy

from ..kernels.study import PROFILE as K
from .common import WL, EquationSet, Exchange, dpu_sections
from .interconnect import allreduce_op, dpu_exchange_section
from .terms import Terms


def equations(model: str, layout: str, kernels: str = "study", topology: str = "none") -> EquationSet:
    t = Terms()
    rounds = t.define("R", sympy.ceiling(WL.rows_per_dpu / WL.local_batch), "rounds per epoch: b = B/N rows per "
                      "DPU per round, then an all-reduce (the largest shard's last batch may be partial)")
    sections = dpu_sections(t, model, layout, samples=WL.rows_per_dpu, steps=rounds, launches=sympy.Integer(1),
                            update=False, admm=False, kernels=kernels)
    ex = gradient_exchange(layout)
    return EquationSet(t, (*sections, dpu_exchange_section(ex, WL.dpus, rounds)), rounds=rounds,
                       launches=sympy.Integer(1), calls_per_round=(),
                       link_ops=((rounds, allreduce_op(ex, topology)),))


def gradient_exchange(layout: str) -> Exchange:
    """int64 partial sums of the d accumulators (dense: and of the bias gradient); one update sweep."""
    return Exchange(WL.features * K.sparse_acc_bytes + (8 if layout == "dense" else 0), K.sparse_acc_bytes,
                    update_passes=1)
