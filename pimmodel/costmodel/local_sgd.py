"""Local SGD: H local steps per launch, then the host averages the models (H = ``sync_every``; H = 1 is MA-SGD).

Per round, for every DPU: the host pushes the global model (and, dense, the int64 bias) as one buffer for all
DPUs, as MA-SGD; one launch runs H local steps on the next H x b local rows (each: zero the accumulators,
per-sample dot product, error and gradient, the local update); the host pulls every local model and averages them
with its threads. Steps per epoch S = rows per DPU / b; rounds R = S / H (the epoch's last round may be shorter,
so every epoch ends on an average). On link hardware the registry does the averaging over the links, as for
MA-SGD (``interconnect.linked``).
"""

from __future__ import annotations

import sympy

from .common import WL, EquationSet, dpu_sections
from .ma_sgd import averaging, host_average
from .terms import Terms


def equations(model: str, layout: str, kernels: str = "study", topology: str = "none") -> EquationSet:
    t = Terms()
    steps = t.define("n_steps", sympy.ceiling(WL.rows_per_dpu / WL.local_batch), "local steps per DPU per epoch "
                     "(the largest shard's last batch may be partial)")
    rounds = t.define("R", sympy.ceiling(steps / WL.sync_every), "rounds per epoch: one launch of H local steps, "
                      "then one average (the epoch's last round may be shorter)")
    sections = dpu_sections(t, model, layout, samples=WL.rows_per_dpu, steps=steps, launches=rounds,
                            update=True, admm=False, kernels=kernels)
    calls, average = host_average(t, layout)
    return EquationSet(t, sections, rounds=rounds, launches=rounds, calls_per_round=calls,
                       host_aggregate_s=rounds * average, exchange=averaging(layout))
