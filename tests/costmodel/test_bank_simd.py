"""The bank-simd family's event prices, each against a closed form written out by hand on a small design point,
and the family's refusals (what it cannot run)."""

from __future__ import annotations

from typing import Any

import pytest

from pimmodel.calibration.result import load_calibration
from pimmodel.costmodel import bank_simd as pricing
from pimmodel.costmodel.predict import predict
from pimmodel.errors import CapacityError, SpecError
from pimmodel.specs import HyperParams, Workload, load_dataset
from pimmodel.specs.bank_simd import from_mapping
from pimmodel.specs.workload import DatasetSpec

NS, US = 1e-9, 1e-6

SMALL: dict[str, Any] = {
    "name": "small-bank", "family": "bank-simd",
    "organisation": {"stacks": 1, "pim_channels_per_stack": 2, "units_per_channel": 8, "banks_per_unit": 2,
                     "bank_mib": 8, "lanes": 16, "grf_registers": 8, "srf_registers": 8, "crf_instructions": 32},
    "timing": {"command_ns": 1.0, "row_cycle_ns": 10.0, "row_bytes": 1024, "activation_exposed": 1.0,
               "channel_gb_per_s": 19.2,
               "mode_switch_ns": 100.0,
               "program_commands": 10},
    "host": {"write_gb_per_s": 1.0, "read_gb_per_s": 1.0, "reduce_gb_per_s": 1.0, "call_us": 1.0,
             "power_per_unit_w": 0.1},
}


def small(**changes: Any) -> Any:
    return from_mapping(SMALL, "test").replace(**changes)


def workload(optimizer: str = "ma-sgd", rows: int = 64, d: int = 256) -> Workload:
    ds = DatasetSpec("toy-dense", "dense", d, d, d, 4, rows, rows * 16)
    return Workload(ds, "lr", optimizer, 16, hyper=HyperParams(8, 128, 4, 10))


def phases(w: Workload, hw: Any) -> dict[str, float]:
    return pricing.evaluate_point(w, hw, load_calibration("defaults").coefficients_for(w))


def test_pim_commands_per_epoch_by_hand() -> None:
    # d = 256 over 16 lanes: D_L = 16 columns a row; 64 rows, b = 8: 8 steps and 8 updates (MA-SGD)
    # forward 16 + 16/8 = 18, backward 16 + ceil(16/8)/8 = 16.25 per row; 16 per step, 2 x 16 per update
    commands = 64 * (18 + 16.25) + 8 * 16 + 8 * 32
    assert phases(workload(), small())["dpu_compute"] == pytest.approx(commands * NS, rel=1e-12)


def test_row_activations_by_hand() -> None:
    # streamed: 2 B x 256 x (2 x 64 rows + 2 x 8 updates) + 2 B x 16 lanes x 8 steps = 73,984 B: 73 rows of 1 KiB
    assert phases(workload(), small())["mram_wram_dma"] == pytest.approx(73 * 10 * NS, rel=1e-12)


def test_hidden_activations_cost_nothing() -> None:
    assert phases(workload(), small(activation_exposed=0.25))["mram_wram_dma"] == pytest.approx(
        0.25 * 73 * 10 * NS, rel=1e-12)


def test_kernel_launches_by_hand() -> None:
    # 2 kernels per step x 8 steps, each: mode switch 100 ns + 10 program commands x 1 ns + one 1 us call
    assert phases(workload(), small())["launch"] == pytest.approx(16 * (100 + 10 + 1000) * NS, rel=1e-12)


def test_host_transfers_by_hand() -> None:
    # MA-SGD per round: w (FP16: 512 B) and the bias (4 B) written once per pseudo-channel (2 of them: identical
    # buffers), both read from each of the 16 units; per epoch the errors (2 B a row) and the lane partials
    # (16 lanes x 2 B a row) of the split kernel, one call per step each way
    push = 8 * ((US + 2 * 512 / 1e9) + (US + 2 * 4 / 1e9)) + (8 * US + 16 * 128 / 1e9)
    pull = 8 * ((US + 16 * 512 / 1e9) + (US + 16 * 4 / 1e9)) + (8 * US + 16 * 2048 / 1e9)
    got = phases(workload(), small())
    assert got["host_to_pim"] == pytest.approx(push, rel=1e-12)
    assert got["pim_to_host"] == pytest.approx(pull, rel=1e-12)


def test_hier_sgd_pushes_its_rank_and_global_averages_by_hand() -> None:
    # hier-sgd, H = 4: R = 64 / 8 = 8 rounds, R_H = 2 global averages (identical buffers: written once per
    # pseudo-channel, 2 of them) and 6 rank averages (a buffer per rank: written to each of the 16 units); w in
    # FP16 512 B and the bias 4 B each time; the split kernel's errors as in MA-SGD. (The pricing once read
    # only the per-round calls, so hier-sgd, whose pushes are counted per epoch, wrote no model at all.)
    w = Workload(workload().dataset, "lr", "hier-sgd", 16, hyper=HyperParams(8, 128, 4, 10, sync_every=4))
    push = (6 * ((US + 16 * 512 / 1e9) + (US + 16 * 4 / 1e9)) + 2 * ((US + 2 * 512 / 1e9) + (US + 2 * 4 / 1e9))
            + (8 * US + 16 * 128 / 1e9))
    got = phases(w, small())
    assert got["host_to_pim"] == pytest.approx(push, rel=1e-12)
    assert got["bytes_host_to_pim"] == 8 * 16 * (512 + 4) + 16 * 128  # every unit receives every average


def test_hier_sgd_averaging_every_step_globally_is_ma_sgd() -> None:
    w = Workload(workload().dataset, "lr", "hier-sgd", 16, hyper=HyperParams(8, 128, 4, 10, sync_every=1))
    hier, ma = phases(w, small()), phases(workload(), small())
    assert {k: pytest.approx(v, rel=1e-12) for k, v in ma.items()} == hier


def test_host_aggregation_streams_every_byte_once() -> None:
    sent = 8 * 16 * (512 + 4) + 16 * 128
    received = 8 * 16 * (512 + 4) + 16 * 2048
    got = phases(workload(), small())
    assert got["bytes_host_to_pim"] == sent and got["bytes_pim_to_host"] == received
    assert got["host_aggregate"] == pytest.approx((sent + received) / 1e9, rel=1e-12)


def test_ga_sgd_updates_on_the_host() -> None:
    # GA-SGD: no update on the PIM side, so the 2 x 16 update commands of each of the 8 steps go
    w = workload("ga-sgd")
    got = phases(w, small())
    rows, steps = w.rows_per_dpu, -(-w.rows_per_dpu // w.local_batch)
    assert got["dpu_compute"] == pytest.approx((rows * (18 + 16.25) + steps * 16) * NS, rel=1e-12)


def test_more_lanes_fewer_commands() -> None:
    assert phases(workload(), small(lanes=32))["dpu_compute"] < phases(workload(), small())["dpu_compute"]


def test_sparse_rows_are_refused_with_the_reason() -> None:
    w = Workload(load_dataset("criteo-1tb"), "lr", "ma-sgd", 16)
    with pytest.raises(SpecError, match="no gather"):
        predict(w, small(), load_calibration("defaults").coefficients_for(w))


def test_a_shard_larger_than_a_unit_is_refused_with_the_count_that_fits() -> None:
    w = workload(rows=5000, d=4096)  # 5,000 rows x 4,097 values x 2 B = 39 MiB > 16 MiB per unit
    with pytest.raises(CapacityError, match="16 MiB"):
        predict(w, small(), load_calibration("defaults").coefficients_for(w))


def test_links_are_refused() -> None:
    with pytest.raises(SpecError, match="no direct links"):
        small(link_topology="ring")
