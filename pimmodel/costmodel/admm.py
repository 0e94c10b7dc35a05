"""Consensus ADMM (one round per global epoch), as the study implemented it.

One launch per epoch runs E_local full local passes (the artifact's ``task_epochs``, 1 in the study) in
mini-batches of b: each local step is the MA-SGD step with the decay acting on w_k + c_k, c_k = u_k - z.
Per epoch the host pushes each DPU its own previous w_k and c_k (and, dense, the bias; distinct buffers, so
always a parallel push), pulls w_k (and the bias), and makes about six streams over the N x d values (means of
w and u, the u update, the c update).
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
    samples = t.define("S", WL.local_epochs * WL.rows_per_dpu, "samples per DPU per epoch: E_local passes "
                       "over the shard")
    steps = t.define("n_steps", WL.local_epochs * sympy.ceiling(WL.rows_per_dpu / WL.local_batch),
                     "local steps per DPU per epoch (the last batch of a pass may be partial)")
    sections = dpu_sections(t, model, layout, samples=samples, steps=steps, launches=sympy.Integer(1),
                            update=True, admm=True, kernels=kernels)
    push = [HostCall("w_k", model_bytes(layout), to_pim=True), HostCall("c_k", model_bytes(layout), to_pim=True),
            *bias_calls(layout, to_pim=True)]
    pull = [HostCall("w_k", model_bytes(layout), to_pim=False), *bias_calls(layout, to_pim=False)]
    consensus = t.define("t_consensus", host_reduce(K.admm_host_passes, 4, layout,
                                                    thread_rounds=K.admm_thread_rounds(layout)),
                         "host: z and the duals (5 reads, 2 write-backs and 1 write-allocate over N x d int32)")
    return EquationSet(t, sections, rounds=sympy.Integer(1), launches=sympy.Integer(1),
                       calls_per_round=(*push, *pull), host_aggregate_s=consensus, exchange=averaging(layout))


def averaging(layout: str) -> Exchange:
    """Over direct links: each DPU keeps its u_k; all-reduce w_k + u_k for z, then update u_k and c_k
    locally (two sweeps); nothing goes through the host."""
    return Exchange(model_bytes(layout) + (8 if layout == "dense" else 0), 4, update_passes=2)
