"""Hierarchical SGD: every local step ends in an average of the models inside each rank; every H steps
(``sync_every``, and after the epoch's last step) the average is of all DPUs' models.

Without links (UPMEM) the host does both: every step it pulls every local model (and, dense, the bias) and
averages them (one pass over N x d), per rank or of all N; it pushes each DPU its rank's average (a parallel push:
the buffers differ per rank) or the global one (one buffer for all DPUs). Launches = steps, as MA-SGD.

With links (any topology but none) each rank averages over its links: every DPU pre-scales its model by 1/G
(G = min(N, DPUs per rank), a power of two: a shift), the rank all-reduces it with 4-B partial sums (a ring inside
the rank; one step per half on all-to-all links), and no host is involved. At a global step the host joins between
the reduce-scatter and the all-gather, as ``interconnect``'s in-rank topology does: it pulls every DPU's shard of
its rank's average (4 ceil(d/G) bytes, dense + 8 for the bias), averages the ranks' shards and pushes the result
back (no host work with a single rank). One launch runs the H steps between two global averages.
"""

from __future__ import annotations

import sympy

from .. import primitives as P
from ..kernels.study import PROFILE as K
from ..kernels.vocabulary import HostCall, LinkOp
from .common import HW, WL, EquationSet, dpu_sections, host_reduce, host_threads, model_bytes
from .interconnect import cross_rank_aggregate_s, dpu_exchange_section
from .ma_sgd import averaging, model_pulls
from .terms import Terms


def equations(model: str, layout: str, kernels: str = "study", topology: str = "none") -> EquationSet:
    t = Terms()
    rounds = t.define("R", sympy.ceiling(WL.rows_per_dpu / WL.local_batch), "rounds per epoch: every local step "
                      "ends in an average (the largest shard's last batch may be partial)")
    global_rounds = t.define("R_H", sympy.ceiling(rounds / WL.sync_every), "global averages per epoch: every H "
                             "steps and after the epoch's last step")
    if topology == "none":
        return _through_host(t, model, layout, kernels, rounds, global_rounds)
    ex = averaging(layout)
    group = t.define("G", sympy.Min(WL.dpus, HW.dpus_per_rank), "DPUs averaged together over in-rank links")
    sections = dpu_sections(t, model, layout, samples=WL.rows_per_dpu, steps=rounds, launches=global_rounds,
                            update=True, admm=False, kernels=kernels)
    op = LinkOp("allreduce", "all-to-all" if topology == "all-to-all" else "ring", ex.vector_bytes, group)
    cross = sympy.Min(1, P.ranks(WL.dpus, HW) - 1)  # no host step with a single rank
    shard = 4 * sympy.ceiling(WL.features / group) + (8 if layout == "dense" else 0)
    calls = (HostCall("shard", shard, to_pim=False, calls=global_rounds * cross),
             HostCall("shard", shard, to_pim=True, calls=global_rounds * cross))
    return EquationSet(t, (*sections, dpu_exchange_section(ex, group, rounds)), rounds=rounds,
                       launches=global_rounds, calls_per_round=(), epoch_calls=calls,
                       host_aggregate_s=global_rounds * cross_rank_aggregate_s(ex, host_threads(layout)),
                       link_ops=((rounds, op),))


def _through_host(t: Terms, model: str, layout: str, kernels: str, rounds: sympy.Expr, global_rounds: sympy.Expr
                  ) -> EquationSet:
    sections = dpu_sections(t, model, layout, samples=WL.rows_per_dpu, steps=rounds, launches=rounds,
                            update=True, admm=False, kernels=kernels)
    in_rank = rounds - global_rounds
    push = [HostCall("w", model_bytes(layout), to_pim=True, calls=in_rank),
            HostCall("w", model_bytes(layout), to_pim=True, mode="identical", calls=global_rounds)]
    if layout == "dense":
        push += [HostCall("bias", sympy.Integer(K.bias_bytes), to_pim=True, calls=in_rank),
                 HostCall("bias", sympy.Integer(K.bias_bytes), to_pim=True, mode="identical", calls=global_rounds)]
    average = t.define("t_average", host_reduce(K.ma_host_passes, 4, layout),
                       "host: average the N local models per rank or all together (one pass over N x d int32, "
                       "threads created and joined)")
    return EquationSet(t, sections, rounds=rounds, launches=rounds, calls_per_round=model_pulls(layout),
                       epoch_calls=tuple(push), host_aggregate_s=rounds * average)
