"""The emulator's MRAM<->WRAM DMA counts and bytes equal the cost model's closed forms exactly, for every
optimizer x model x layout, and so do the control-flow-determined instruction counts (serial section,
barriers, and for LR, where no count depends on the data, the whole DPU compute time) and the wall view's
exposed DMA (DMA hidden behind compute only inside a parallel section, ``kernels.study.SECTIONS``).

Small configurations: the sparse cases use 20,000 hashed features (model length 20,480, bias slot 20,000,
so the update sweep stops inside the last tasklet's slice as in Criteo) and a local batch that is not a
multiple of the label block, so every ceiling in the closed forms is exercised.

Every optimizer of the registry is covered (``CASES`` is built from it): each on the topologies its emulator
trains on (``emulated_topologies``). The optimizers outside the study run on hardware whose ranks hold 2 DPUs
(``RANK``), so hier-sgd's per-rank and global averages (and the host's cross-rank step over in-rank links) differ,
with H = 2 over 5 (dense) or 3 (sparse) local steps, so the epoch's last round is shorter."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import pytest
import sympy
from support import emulated_topologies, hardware_file, raw_floats, run_emulation

from pimmodel.costmodel.coefficients import COEFFICIENT_DEFAULTS
from pimmodel.costmodel.common import error_section
from pimmodel.costmodel.symbols import HW, WL
from pimmodel.costmodel.terms import Terms
from pimmodel.emulator.timing import section_cycles
from pimmodel.emulator.trace import Trace
from pimmodel.emulator.trainers import model_length
from pimmodel.kernels import pricing
from pimmodel.kernels.study import PROFILE as K
from pimmodel.kernels.study import SAMPLE, SECTIONS, ZERO, is_parallel
from pimmodel.specs import (
    CRITEO,
    REGISTRY,
    STUDY_OPTIMIZERS,
    YFCC,
    DatasetSpec,
    HyperParams,
    Workload,
    load_hardware,
)

DPUS = 4
RANK = 2
FEATURES = {"dense": 512, "sparse": 20_000}
ROWS = {"dense": 8, "sparse": 64}
NEW_ROWS = {"dense": 20, "sparse": 96}
CASES = [(layout, m, o, t) for o in REGISTRY for t in emulated_topologies(o) for layout in ("dense", "sparse")
         for m in ("lr", "svm")]


def _rows(layout: str, optimizer: str) -> int:
    return (ROWS if optimizer in STUDY_OPTIMIZERS else NEW_ROWS)[layout]


def _run(layout: str, model: str, optimizer: str, topology: str = "none"):
    return _cached_run(layout, model, optimizer, topology, str(hardware_file(
        topology, dpus_per_rank=None if optimizer in STUDY_OPTIMIZERS else RANK)))


@functools.cache
def _cached_run(layout: str, model: str, optimizer: str, topology: str, hardware: str):
    dense = layout == "dense"
    hyper = HyperParams(batch_size=4 if dense else 32, global_batch_size=4 * DPUS if dense else 8 * DPUS,
                        learning_rate_shift=4, reg_shift=10, admm_alpha_shift=4, sync_every=2)
    rows = _rows(layout, optimizer)
    res = run_emulation("synthetic-yfcc" if dense else "synthetic-criteo", DPUS, model, optimizer, hyper, epochs=1,
                        samples_per_dpu=rows, features=FEATURES[layout], hardware=hardware)
    w = Workload(_spec(layout, rows), model, optimizer, DPUS, 16, "weak", 1, hyper)
    hw = load_hardware(hardware)
    assert Path(hardware).stem == hw.name and hw.link_topology == topology
    return res.trace, w, hw, raw_floats(w, hw, coefficients=_coefficients(res.trace, model, layout))


def _spec(layout: str, rows: int) -> DatasetSpec:
    """The dataset spec ``api.emulate`` predicts with for the synthetic data."""
    f = FEATURES[layout]
    if layout == "dense":
        return replace(YFCC, name="synthetic-yfcc", features=f, nonzeros_per_row=f, slots_per_row=f,
                       rows_per_dpu_weak=rows)
    return replace(CRITEO, name="synthetic-criteo", features=model_length(f, 16), bias_index=f,
                   rows_per_dpu_weak=rows)


def _coefficients(tr: dict, model: str, layout: str) -> dict[str, float]:
    """The data-dependent coefficients as measured by the run (means over DPUs and samples)."""
    events = {k: v["mean"] for k, v in tr["dpu_compute"]["events"].items()}
    coef = dict(COEFFICIENT_DEFAULTS)
    if model == "svm":
        coef["svm_hit_fraction"] = events["margin_hits"] / events["samples"]
    if layout == "sparse":
        attempted = events["acc_writes"] + events.get("acc_skipped", 0.0)
        coef["sparse_write_fraction"] = events["acc_writes"] / attempted if attempted else 1.0
    return coef


@pytest.mark.parametrize("layout,model,optimizer,topology", CASES)
def test_dma_counts_and_bytes_equal_cost_model(layout, model, optimizer, topology) -> None:
    tr, _, _, raw = _run(layout, model, optimizer, topology)
    dma = tr["mram_wram_dma"]
    # reads never depend on the data: every DPU issues exactly the closed-form count
    assert dma["read"]["count"]["max"] == dma["read"]["count"]["mean"] == raw["dmas_read"]
    assert DPUS * dma["read"]["bytes"]["mean"] == raw["bytes_mram_to_wram"]
    if layout == "sparse":  # write-backs skipped by the -1 guards / the margin: equal on the mean
        assert dma["write"]["count"]["mean"] == pytest.approx(raw["dmas_write"], rel=1e-12)
        assert DPUS * dma["write"]["bytes"]["mean"] == pytest.approx(raw["bytes_wram_to_mram"], rel=1e-12)
    else:
        assert dma["write"]["count"]["max"] == dma["write"]["count"]["mean"] == raw["dmas_write"]
        assert DPUS * dma["write"]["bytes"]["mean"] == raw["bytes_wram_to_mram"]


@pytest.mark.parametrize("layout,model,optimizer,topology", CASES)
def test_control_flow_instruction_counts_equal_cost_model(layout, model, optimizer, topology) -> None:
    tr, w, hw, raw = _run(layout, model, optimizer, topology)
    events = {k: v["max"] for k, v in tr["dpu_compute"]["events"].items()}
    update = w.info.batch == "local"
    launches = tr["launch"]["launches"]
    # one launch: the fixed part, per DPU, and per rank beyond the first (the SDK's polling sweep, issue 17)
    one = hw.launch_overhead_s + hw.launch_per_dpu_s * w.dpus + hw.launch_per_rank_s * (hw.ranks(w.dpus) - 1)
    assert raw["launch"] == pytest.approx(launches * one, rel=1e-12)
    assert tr["rounds"] == raw["rounds"] == w.rounds_per_epoch
    assert events["barriers"] == (w.rows_per_dpu * K.barriers_per_sample
                                  + w.steps_per_epoch * K.step_barriers(layout, update)
                                  + launches * K.barriers_per_launch)
    # the serial section of tasklet 0 (reduction + sigmoid or margin test), in cycles per epoch
    terms = Terms()
    section = error_section(terms, model, sympy.Integer(1))
    cycles = terms.expand(pricing.compute_cycles(section.work, section.parallel, WL.tasklets, HW))
    values = {getattr(HW, k): v for k, v in hw.numeric().items()} | {WL.tasklets: 16}
    barriers = K.barriers_per_sample * 16 * hw.barrier_instructions_per_tasklet * hw.revolver_interval_cycles
    serial = sum(v["max"] for v in tr["dpu_compute"]["instructions_serial"].values())
    assert serial * hw.revolver_interval_cycles == pytest.approx(
        w.rows_per_dpu * (float(cycles.subs(values)) - barriers), rel=1e-12)
    if model == "lr":  # no LR instruction stream depends on the data: the whole DPU compute time is equal
        assert tr["seconds"]["wall"]["dpu_compute"] == pytest.approx(raw["dpu_compute"], rel=1e-12)
        # and so is the benchmark builds' accounting (breakdown view): compute without barrier waits, DMA with the
        # barriers timed inside it
        assert tr["seconds"]["breakdown"]["dpu_compute"] == pytest.approx(raw["dpu_compute_instrumented"], rel=1e-12)
        if layout == "dense":  # sparse LR writes back what the -1 guards let through (the mean DPU's count)
            assert tr["seconds"]["breakdown"]["mram_wram_dma"] == pytest.approx(raw["mram_wram_dma_instrumented"],
                                                                               rel=1e-12)


@pytest.mark.parametrize("layout,model,optimizer,topology", CASES)
def test_host_and_link_traffic_equal_cost_model(layout, model, optimizer, topology) -> None:
    """Host transfers (bytes and seconds), the host's aggregation and the exchanges over links (seconds and bytes)
    of the emulated run equal the closed forms: the same calls, link operations and host streams, priced once."""
    tr, _, _, raw = _run(layout, model, optimizer, topology)
    assert tr["host_to_pim"]["bytes"] == pytest.approx(raw["bytes_host_to_pim"], rel=1e-12, abs=0)
    assert tr["pim_to_host"]["bytes"] == pytest.approx(raw["bytes_pim_to_host"], rel=1e-12, abs=0)
    for phase in ("host_to_pim", "pim_to_host", "host_aggregate", "launch"):
        assert tr["seconds"]["wall"][phase] == pytest.approx(raw[phase], rel=1e-12, abs=1e-18)
    assert tr["links"]["seconds"] == pytest.approx(raw["link"], rel=1e-12, abs=0)
    assert tr["links"]["bytes"] == pytest.approx(raw["bytes_link"], rel=1e-12, abs=0)
    assert (raw["link"] > 0) == (topology != "none") == bool(tr["links"]["exchanges"])


def test_tail_ops_charge_the_busier_tasklets() -> None:
    """39 slots over 16 tasklets: 2 slots with all 16 issuing, the 3rd slot of 7 tasklets at 1 per 11."""
    hw = load_hardware("upmem-2556")
    tr = Trace(1, 16)
    tr.add("ops", "bookkeeping", 39, SAMPLE)
    tr.add("tail_ops", ("bookkeeping", 7), 7, SAMPLE)
    _, compute, _ = section_cycles(tr, hw)[SAMPLE]
    assert compute[0] == pytest.approx(32 + 7 / 7 * max(hw.revolver_interval_cycles, 7))


def _exposed_mean_s(tr: dict) -> float:
    """The wall view's exposed DMA of the mean DPU: summed over the sections."""
    return sum(s["mram_wram_dma_exposed_s"]["mean"] for s in tr["sections"].values())


@pytest.mark.parametrize("layout,model,optimizer,topology", CASES)
def test_wall_view_exposed_dma_equals_cost_model(layout, model, optimizer, topology) -> None:
    tr, _, _, raw = _run(layout, model, optimizer, topology)
    sections = tr["sections"]
    assert set(sections) <= set(SECTIONS) and all(s["parallel"] == is_parallel(n) for n, s in sections.items())
    # the sections partition the breakdown: compute and DMA summed over them are the phase totals
    for phase in ("dpu_compute", "mram_wram_dma"):
        assert sum(s[f"{phase}_s"]["mean"] for s in sections.values()) == pytest.approx(raw[phase], rel=1e-12)
    # exposed DMA on the mean DPU (SVM: the margin hits and write-backs are the measured coefficients)
    assert _exposed_mean_s(tr) == pytest.approx(raw["mram_wram_dma_exposed"], rel=1e-12)
    if model == "lr":  # every DPU does the same work: the wall view itself equals the closed form
        assert tr["seconds"]["wall"]["mram_wram_dma"] == pytest.approx(raw["mram_wram_dma_exposed"], rel=1e-12)
    # serial sections hide nothing, parallel ones hide what their compute covers, up to the hardware's
    # DMA/compute overlap (the share of the shorter of the two that 16 tasklets manage to hide)
    overlap = load_hardware("upmem-2556").dma_compute_overlap
    for s in sections.values():
        dma, exposed = s["mram_wram_dma_s"]["mean"], s["mram_wram_dma_exposed_s"]["mean"]
        if s["parallel"]:
            compute = s["dpu_compute_s"]["mean"]
            hidden_short = max(0.0, dma - compute) + (1 - overlap) * min(compute, dma)
            assert exposed == pytest.approx(hidden_short, rel=1e-12, abs=1e-18)
        else:
            assert exposed == dma


def test_criteo_like_zeroing_sweep_is_exposed_in_the_wall_view() -> None:
    """1,000,000 hashed features: every local step zeroes 8 MB of int64 accumulators, far more DMA than the
    zeroing loop's compute, in a section of its own (between barriers), so no other section's compute hides it.
    The wall view charges it (the whole-run max(compute, DMA) per DPU used to report 0 exposed DMA here)."""
    hyper = HyperParams(batch_size=1024, global_batch_size=1024 * DPUS, learning_rate_shift=0, reg_shift=12,
                        admm_alpha_shift=6)
    res = run_emulation("synthetic-criteo", DPUS, "lr", "ma-sgd", hyper, epochs=1, samples_per_dpu=2048,
                  features=1_000_000)
    tr = res.trace
    spec = replace(CRITEO, name="synthetic-criteo", features=model_length(1_000_000, 16), bias_index=1_000_000,
                   rows_per_dpu_weak=2048)
    w = Workload(spec, "lr", "ma-sgd", DPUS, 16, "weak", 1, hyper)
    raw = raw_floats(w, load_hardware("upmem-2556"), coefficients=_coefficients(tr, "lr", "sparse"))
    wall, breakdown = tr["seconds"]["wall"], tr["seconds"]["breakdown"]
    assert wall["mram_wram_dma"] == pytest.approx(raw["mram_wram_dma_exposed"], rel=1e-12)
    assert breakdown["mram_wram_dma"] == pytest.approx(raw["mram_wram_dma_instrumented"], rel=1e-12)
    assert breakdown["mram_wram_dma"] < breakdown["dpu_compute"]  # the old whole-run overlap hid all of it
    assert wall["mram_wram_dma"] > 0.05 * wall["total"]
    zero = tr["sections"][ZERO]
    # the sweep's DMA beyond its compute is all exposed; it is the largest part of the run's exposed DMA (the
    # other sections expose only the share of min(compute, DMA) that the overlap leaves, 1 - dma_compute_overlap)
    assert zero["mram_wram_dma_exposed_s"]["max"] >= zero["mram_wram_dma_s"]["max"] - zero["dpu_compute_s"]["max"]
    assert zero["mram_wram_dma_exposed_s"]["max"] > 0.25 * wall["mram_wram_dma"]
    assert zero["mram_wram_dma_s"]["max"] > 10 * zero["dpu_compute_s"]["max"]
