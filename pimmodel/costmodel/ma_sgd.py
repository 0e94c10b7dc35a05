"""MA-SGD (model averaging after every local step), as the study implemented it.

Per round, for every DPU: the host pushes the global model (and, dense, the int64 bias), one buffer for
all DPUs (a parallel push as in the study, or a broadcast: ``broadcast_identical_pushes``); one launch runs
one local step on the next b local rows (zero the accumulators, per-sample dot product, error and
gradient, then the local update); the host pulls every local model and averages them with its threads.
Rounds per epoch R = rows per DPU / b.
"""

from __future__ import annotations

import sympy

from ..kernels.study import PROFILE as K
from ..kernels.vocabulary import HostCall
from .common import WL, EquationSet, Exchange, bias_calls, dpu_sections, host_reduce, model_bytes
from .terms import Terms


def equations(model: str, layout: str, kernels: str = "study", topology: str = "none") -> EquationSet:
    """The host-path equations; on link hardware the registry replaces the averaging (``averaging``)."""
    t = Terms()
    rounds = t.define("R", sympy.ceiling(WL.rows_per_dpu / WL.local_batch), "rounds per epoch: one local step (and "
                      "one launch) per round; the largest shard's last batch may be partial")
    sections = dpu_sections(t, model, layout, samples=WL.rows_per_dpu, steps=rounds, launches=rounds,
                            update=True, admm=False, kernels=kernels)
    calls, average = host_average(t, layout)
    return EquationSet(t, sections, rounds=rounds, launches=rounds, calls_per_round=calls,
                       host_aggregate_s=rounds * average, exchange=averaging(layout))


def model_pulls(layout: str) -> tuple[HostCall, ...]:
    """The host pulls every DPU's local model (and, dense, its int64 bias)."""
    return (HostCall("w", model_bytes(layout), to_pim=False), *bias_calls(layout, to_pim=False))


def host_average(t: Terms, layout: str) -> tuple[tuple[HostCall, ...], sympy.Expr]:
    """One round of averaging through the host (MA-SGD, local SGD): push the global model (and bias) as one
    buffer for all DPUs, pull every local model, and the host's averaging time (defined as ``t_average``)."""
    push = (HostCall("w", model_bytes(layout), to_pim=True, mode="identical"),
            *bias_calls(layout, to_pim=True, mode="identical"))
    average = t.define("t_average", host_reduce(K.ma_host_passes, 4, layout),
                       "host: average the N local models (one pass over N x d int32, threads created and joined)")
    return (*push, *model_pulls(layout)), average


def averaging(layout: str) -> Exchange:
    """Over direct links: all-reduce the local models (and bias); every DPU then averages (one sweep)."""
    return Exchange(model_bytes(layout) + (8 if layout == "dense" else 0), 4, update_passes=1)
