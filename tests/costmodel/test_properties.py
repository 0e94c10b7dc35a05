"""Properties of the cost model over random hardware and workloads (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import raw

from pimmodel.api import predict
from pimmodel.calibration.result import load_calibration
from pimmodel.phases import COMM_PHASES, EXPOSED_DMA, INSTRUMENTED_COMPUTE, INSTRUMENTED_DMA, PHASES, in_view
from pimmodel.specs import CRITEO, YFCC, Workload

CONFIGS = [(ds, m, o) for ds in (YFCC, CRITEO) for m in ("lr", "svm") for o in ("ma-sgd", "ga-sgd", "admm")]
SPEEDUP_FIELDS = ["dpu_clock_hz", "push_bytes_per_s_per_rank", "pull_bytes_per_s_per_rank", "host_thread_bytes_per_s",
                  "host_memory_bytes_per_s"]
SLOWDOWN_FIELDS = ["dma_read_latency_cycles", "dma_read_cycles_per_byte", "launch_overhead_s",
                   "transfer_call_overhead_s", "double_div_instructions", "int64_mul_base_instructions"]
config = st.sampled_from(CONFIGS)
dpus = st.sampled_from([256, 512, 1024, 2048])


def _total(w, values, view="wall"):
    phases = in_view(raw(w, values), view)
    return sum(phases[p] for p in PHASES)


@settings(max_examples=60, deadline=None)
@given(config, dpus, st.sampled_from(SPEEDUP_FIELDS), st.floats(1.0, 16.0), st.sampled_from(["wall", "breakdown"]))
def test_more_bandwidth_or_clock_is_never_slower(upmem, cfg, n, field, factor, view) -> None:
    w = Workload(cfg[0], cfg[1], cfg[2], n)
    base = upmem.numeric()
    faster = {**base, field: base[field] * factor}
    assert _total(w, faster, view) <= _total(w, base, view) * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(config, dpus, st.sampled_from(SLOWDOWN_FIELDS), st.floats(1.0, 16.0))
def test_costlier_events_are_never_faster(upmem, cfg, n, field, factor) -> None:
    w = Workload(cfg[0], cfg[1], cfg[2], n)
    base = upmem.numeric()
    assert _total(w, {**base, field: base[field] * factor}) >= _total(w, base) * (1 - 1e-12)


@settings(max_examples=60, deadline=None)
@given(config, dpus, st.lists(st.floats(0.05, 20.0), min_size=6, max_size=6), st.sampled_from(["wall", "breakdown"]))
def test_every_phase_is_non_negative(upmem, cfg, n, factors, view) -> None:
    w = Workload(cfg[0], cfg[1], cfg[2], n)
    base = upmem.numeric()
    fields = SPEEDUP_FIELDS + SLOWDOWN_FIELDS
    values = {**base, **{f: base[f] * x for f, x in zip(fields, factors, strict=False)}}
    phases = in_view(raw(w, values), view)
    assert all(float(phases[p]) >= 0 for p in PHASES)


@pytest.mark.parametrize("ds", [YFCC, CRITEO], ids=lambda d: d.name)
@pytest.mark.parametrize("model", ["lr", "svm"])
@pytest.mark.parametrize("n", [256, 2048])
def test_admm_moves_fewer_host_bytes(upmem, ds, model, n) -> None:
    host = {o: predict(Workload(ds, model, o, n), upmem).per_epoch_bytes for o in ("ma-sgd", "ga-sgd", "admm")}
    total = {o: b["host_to_pim"] + b["pim_to_host"] for o, b in host.items()}
    assert total["admm"] < total["ma-sgd"] and total["admm"] < total["ga-sgd"]


def test_breakdown_view_charges_the_instrumented_accounting(upmem, study_workload) -> None:
    """What ``predict(..., "breakdown")`` returns, phase by phase, against the equations' raw outputs: compute and
    DMA are the instrumented counts, launches are excluded, the host phases are the wall view's; the epoch count
    multiplies the per-epoch total."""
    coefficients = load_calibration(None).coefficients_for(study_workload)
    out = raw(study_workload, upmem, coefficients=coefficients)
    breakdown = predict(study_workload, upmem, "breakdown").to_record()
    wall = predict(study_workload, upmem, "wall").to_record()
    b, w = breakdown["per_epoch_s"], wall["per_epoch_s"]
    assert b["dpu_compute"] == pytest.approx(float(out[INSTRUMENTED_COMPUTE]), rel=1e-12)
    assert b["mram_wram_dma"] == pytest.approx(float(out[INSTRUMENTED_DMA]), rel=1e-12)
    assert w["dpu_compute"] == pytest.approx(float(out["dpu_compute"]), rel=1e-12)
    assert w["mram_wram_dma"] == pytest.approx(float(out[EXPOSED_DMA]), rel=1e-12)
    assert b["launch"] == 0.0 and w["launch"] == pytest.approx(float(out["launch"]), rel=1e-12) and w["launch"] > 0
    for phase in COMM_PHASES:
        assert b[phase] == w[phase] == pytest.approx(float(out[phase]), rel=1e-12)
    assert breakdown["total_s"] == pytest.approx(study_workload.epochs * b["total"], rel=1e-12)


@pytest.mark.parametrize("ds", [YFCC, CRITEO], ids=lambda d: d.name)
def test_ma_sgd_host_bytes_closed_form(upmem, ds) -> None:
    """MA-SGD pushes the int32 model (and, dense, the int64 bias) to every DPU once per round and pulls every local
    model back: rounds x DPUs x (4 d + 8 dense) bytes each way, rounds = rows per DPU / local batch."""
    w = Workload(ds, "lr", "ma-sgd", 2048)
    rounds = -(-w.rows_per_dpu // w.local_batch)
    per_dpu_bytes = 4 * ds.features + (8 if ds.layout == "dense" else 0)
    record = predict(w, upmem, "breakdown").to_record()
    assert record["rounds_per_epoch"] == rounds
    assert record["per_epoch_bytes"]["host_to_pim"] == rounds * 2048 * per_dpu_bytes
    assert record["per_epoch_bytes"]["pim_to_host"] == rounds * 2048 * per_dpu_bytes


def test_vectorized_equals_scalar(upmem) -> None:
    w = Workload(YFCC, "lr", "ma-sgd", 1024)
    clocks = np.array([200e6, 350e6, 500e6])
    batch = raw(w, {**upmem.numeric(), "dpu_clock_hz": clocks})
    for i, clock in enumerate(clocks):
        single = raw(w, {**upmem.numeric(), "dpu_clock_hz": clock})
        assert batch["dpu_compute"][i] == pytest.approx(float(single["dpu_compute"]))


@pytest.mark.parametrize("ds", [YFCC, CRITEO], ids=lambda d: d.name)
def test_weak_scaling_ma_and_ga_grow_admm_stays_flat(upmem, ds) -> None:
    def epoch(o, n):
        return predict(Workload(ds, "lr", o, n), upmem).per_epoch_total_s

    for o in ("ma-sgd", "ga-sgd"):
        assert epoch(o, 2048) > epoch(o, 256)
    assert epoch("admm", 2048) / epoch("admm", 256) < 1.2


def test_strong_scaling_is_sub_linear(upmem) -> None:
    for o in ("ma-sgd", "ga-sgd", "admm"):
        t256 = predict(Workload(YFCC, "lr", o, 256, scaling="strong"), upmem).per_epoch_total_s
        t2048 = predict(Workload(YFCC, "lr", o, 2048, scaling="strong"), upmem).per_epoch_total_s
        assert 1 < t256 / t2048 < 8
