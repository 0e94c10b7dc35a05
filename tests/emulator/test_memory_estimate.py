"""Issue 31: the emulator's memory estimate against the peak it then allocates (tracemalloc, which numpy reports
its arrays to), and the refusal of a run that cannot fit.

The estimate's bytes per (DPU, feature) and per sparse entry (``emulator.api``) were measured on one-epoch serial
runs at 64 and 1,024 DPUs (YFCC-like and Criteo-like LR, MA-SGD, GA-SGD, ADMM, one step an epoch), at 2,048
(Criteo MA-SGD's update; the dense step's temporaries on YFCC-like data of 512 features) and, for float64
arithmetic, on Criteo-like MA-SGD and ADMM at 64 DPUs and GA-SGD at 96. The runs checked here were not among
them: other DPU counts, several steps an epoch (the next step's rows generated ahead, local SGD's N distinct
models), a dense model of 2,048 features at 1,536 DPUs, float64 ADMM at 32 DPUs.
"""

from __future__ import annotations

import tracemalloc
from dataclasses import replace

import numpy as np
import pytest

from pimmodel.emulator import api
from pimmodel.emulator.api import Options
from pimmodel.emulator.data import CRITEO_ACTIVE, _draw_sparse, _sparse_model, distinct_share
from pimmodel.errors import SpecError

CASES = [  # dataset, DPUs, optimizer, options
    ("synthetic-criteo", 512, "ma-sgd", {}),  # the host's model shared by the DPUs: the batch kernel's chunks
    ("synthetic-criteo", 128, "admm", {}),  # N models, duals and corrections
    ("synthetic-criteo", 64, "local-sgd", {"samples_per_dpu": 4096}),  # 8 local steps: N distinct models
    ("synthetic-criteo", 256, "ma-sgd", {"samples_per_dpu": 2048}),  # a larger batch: fewer distinct indices
    ("synthetic-yfcc", 1536, "ma-sgd", {"features": 2048}),  # dense, the step's temporaries above the metric's
    ("synthetic-criteo", 32, "admm", {"arithmetic": "float64"}),  # float64 state: 8 B a weight, not 4
]


def _peak_and_estimate(dataset: str, dpus: int, optimizer: str, extra: dict) -> tuple[float, float]:
    o = Options(epochs=1, engine="serial", **extra)
    api.emulate(dataset, 2, "lr", optimizer, None, replace(o))  # imports and per-process caches, not the run's
    tracemalloc.start()
    try:
        run = api.emulate(dataset, dpus, "lr", optimizer, None, o)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return float(peak), run.memory.estimate_bytes - api.PROCESS_BYTES * run.memory.processes


@pytest.mark.slow
@pytest.mark.parametrize(("dataset", "dpus", "optimizer", "extra"), CASES)
def test_estimate_is_within_25_percent_of_the_measured_peak(dataset: str, dpus: int, optimizer: str,
                                                             extra: dict) -> None:
    peak, estimate = _peak_and_estimate(dataset, dpus, optimizer, extra)
    assert 0.75 <= estimate / peak <= 1.25, (dataset, dpus, optimizer, extra, estimate / 1e9, peak / 1e9)


def test_distinct_share_is_the_generators_law() -> None:
    """The share of distinct indices in one DPU's batch, against a count over the generator's own draws."""
    features = 1_000_000
    width = (features - 1) // CRITEO_ACTIVE
    theta, mult, offsets, _ = _sparse_model(0, features, 0.25)
    for rows in (64, 512, 2048):
        counts = [np.unique(_draw_sparse(np.random.default_rng([9, rows, k]), rows, width, offsets, mult,
                                         theta)[0]).size / (rows * CRITEO_ACTIVE) for k in range(8)]
        assert distinct_share(rows, features) == pytest.approx(np.mean(counts), rel=0.03), rows
    assert distinct_share(1, features) == pytest.approx(1.0)  # one row: its 39 fields are disjoint ranges


def test_a_run_that_cannot_fit_is_refused_with_what_would(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "_available_bytes", lambda: 10e9)
    with pytest.raises(SpecError) as caught:
        api.emulate("synthetic-criteo", 2048, "lr", "admm", None, Options(epochs=1, engine="serial"))
    message = str(caught.value)
    assert "more than the 8.0 GB" in message and "--engine ray --address" in message
    fits = int(message.split("--dpus ")[1].split(" or fewer")[0].replace(",", ""))
    o = Options(epochs=1, engine="serial")
    w = api._workload(api._synthetic_spec("synthetic-criteo", o), "lr", "admm", fits, None, o)
    assert api.memory_estimate_bytes(w, o) <= 8e9 < api.memory_estimate_bytes(replace(w, dpus=fits + 1), o)
    # N models of 10^6 int32 weights, duals, corrections, the new models and duals: 20 B per (DPU, weight)
    assert 300 < fits < 400
    machines = int(message.split("cluster of about ")[1].split(" ")[0])
    assert machines == -(-api.memory_estimate_bytes(replace(w, dpus=2048), o) // 8e9)
