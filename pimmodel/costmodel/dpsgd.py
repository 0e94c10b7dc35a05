"""Decentralized SGD (D-PSGD, adapt then combine): every DPU takes a local step on its own model, then mixes it
with its gossip neighbours' over direct links; no host averaging, no host in the loop.

One launch per epoch runs every local step (the MA-SGD step: zero the accumulators, per-sample dot product, error
and gradient, the local update), each followed by a gossip round: every DPU sends its model (and, dense, its
int64 bias) to each of its k neighbours (ring: k = 2; 2-D torus, or all-to-all links gossiping on the torus:
k = 4) and mixes ``w <- (w >> 1) + sum (w_n >> log2 2k)`` (``kernels/exchange.py``). Rounds per epoch R = rows per
DPU / b. The model evaluated is the average of the DPUs' models (one average after training; not timed, as no
optimizer's evaluation is).
"""

from __future__ import annotations

import sympy

from ..specs.optimizers import gossip_neighbours
from .common import WL, EquationSet, dpu_sections, model_bytes
from .interconnect import dpu_mix_section, gossip_op
from .terms import Terms


def equations(model: str, layout: str, kernels: str = "study", topology: str = "none") -> EquationSet:
    k = gossip_neighbours(topology)
    t = Terms()
    rounds = t.define("R", sympy.ceiling(WL.rows_per_dpu / WL.local_batch), "gossip rounds per epoch: every local "
                      "step ends in a mix with the neighbours (the largest shard's last batch may be partial)")
    sections = dpu_sections(t, model, layout, samples=WL.rows_per_dpu, steps=rounds, launches=sympy.Integer(1),
                            update=True, admm=False, kernels=kernels)
    vector = model_bytes(layout) + (8 if layout == "dense" else 0)
    return EquationSet(t, (*sections, dpu_mix_section(layout, k, rounds)), rounds=rounds,
                       launches=sympy.Integer(1), calls_per_round=(),
                       link_ops=((rounds, gossip_op(vector, topology)),))
