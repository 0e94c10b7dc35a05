"""Issue 27, items 2-3: the NUMA placement term and the host-mediated collectives, each by hand, and both leaving
today's pricing exactly as it was at their defaults."""

from __future__ import annotations

import pytest
from support import model_inputs

from pimmodel import primitives as P
from pimmodel.costmodel.compile import compiled
from pimmodel.kernels.study import PROFILE as K
from pimmodel.specs import load_hardware
from pimmodel.specs.placement import PLACEMENTS, placement_of, with_placement

MIB = 2**20


@pytest.fixture(scope="module")
def hw():  # type: ignore[no-untyped-def]
    return load_hardware("upmem-2556")


def test_placement_factor_by_hand(hw) -> None:  # type: ignore[no-untyped-def]
    f = hw.remote_transfer_factor
    assert f == 1.7 and hw.ranks_per_socket == 20 and hw.host_sockets == 2
    assert P.placement_factor(2048, hw) == 1.0  # the default: every buffer local
    assert P.placement_factor(2048, with_placement(hw, "remote")) == pytest.approx(1.7, rel=1e-15)
    assert P.placement_factor(2048, with_placement(hw, "interleaved")) == pytest.approx(1 + 0.5 * 0.7, rel=1e-15)
    # one node: 2,048 DPUs = 32 ranks, the 12 beyond the first socket's 20 are remote: 1 + 12/32 * 0.7 = 1.2625
    one = with_placement(hw, "one-node")
    assert P.placement_factor(2048, one) == pytest.approx(1.2625, rel=1e-15)
    assert P.placement_factor(1024, one) == 1.0  # 16 ranks: all on the first socket
    assert P.placement_factor(1344, one) == pytest.approx(1 + 1 / 21 * 0.7, rel=1e-15)  # 21 ranks, one remote


def test_placement_scales_the_bytes_not_the_call(hw) -> None:  # type: ignore[no-untyped-def]
    remote = with_placement(hw, "remote")
    call = hw.transfer_call_overhead_s
    for mode in ("parallel", "broadcast"):
        local_s = P.host_transfer_s(MIB, 2048, hw, True, mode)
        assert P.host_transfer_s(MIB, 2048, remote, True, mode) == pytest.approx(call + 1.7 * (local_s - call),
                                                                                 rel=1e-12)
    pull_call = call + hw.pull_call_extra_s
    local_s = P.host_transfer_s(MIB, 2048, hw, False, "parallel")
    assert P.host_transfer_s(MIB, 2048, remote, False, "parallel") == pytest.approx(
        pull_call + 1.7 * (local_s - pull_call), rel=1e-12)
    # serial: 64 DPUs one after another, each its call and 1 MiB at PrIM's one-DPU rate, the bytes 1.7x
    serial = 64 * (call + 1.7 * MIB / hw.serial_to_pim_bytes_per_s)
    assert P.host_transfer_s(MIB, 64, remote, True, "serial") == pytest.approx(serial, rel=1e-12)
    # a WRAM symbol goes through the control interfaces: no host buffer bandwidth, no placement term
    assert P.host_transfer_s(64, 2048, remote, True, "parallel", "wram") == P.host_transfer_s(64, 2048, hw, True,
                                                                                               "parallel", "wram")


def test_placement_names_round_trip(hw) -> None:  # type: ignore[no-untyped-def]
    assert placement_of(hw) == "local"
    for name in PLACEMENTS:
        assert placement_of(with_placement(hw, name)) == name
    assert with_placement(hw, "local") == hw  # the default spec is the local placement


def test_host_collectives_by_hand(hw) -> None:  # type: ignore[no-untyped-def]
    d, n, threads = 4096 * 4, 2048, 16
    gather = P.host_transfer_s(d, n, hw, False, "parallel")
    broadcast = P.host_transfer_s(d, n, hw, True, "identical")
    assert P.host_gather_s(d, n, hw) == gather and P.host_broadcast_s(d, n, hw) == broadcast
    assert P.host_scatter_s(d, n, hw) == P.host_transfer_s(d, n, hw, True, "parallel")
    # reduce: N x d int32 (2,048 x 16 KiB = 32 MiB) through min(16 threads, cores) at the thread rate, capped by
    # the memory bandwidth, plus 16 pthread create/join
    rate = min(min(threads, hw.host_cores) * hw.host_thread_bytes_per_s, hw.host_memory_bytes_per_s)
    reduce = n * d / rate + threads * hw.thread_start_s
    assert P.host_reduction_s(n * d, threads, 1, hw) == pytest.approx(reduce, rel=1e-15)
    assert P.host_allreduce_s(d, n, threads, hw) == pytest.approx(gather + reduce + broadcast, rel=1e-15)
    faster = hw.replace(host_collective_time_factor=0.25)  # a 4x faster collective implementation
    assert P.host_allreduce_s(d, n, threads, faster) == pytest.approx((gather + reduce + broadcast) / 4, rel=1e-12)


def test_ma_sgd_round_is_one_host_allreduce(hw) -> None:  # type: ignore[no-untyped-def]
    """Sparse MA-SGD (no bias calls): its per-round host_to_pim + pim_to_host + host_aggregate is the named
    collective, and the collective knob scales exactly those three phases in the compiled model."""
    m = compiled("ma-sgd", "lr", "sparse", "none", "study")
    values = model_inputs(dpus=2048.0, tasklets=16.0, rows_per_dpu=4096.0, local_batch=32.0, sync_every=1.0,
                          torus_rows=32.0)
    out = m(values)
    rounds = float(out["rounds"])
    per_round = float(out["host_to_pim"] + out["pim_to_host"] + out["host_aggregate"]) / rounds
    d = int(values["features"]) * 4
    expected = P.host_allreduce_s(d, 2048, K.host_threads("sparse"), hw, passes=K.ma_host_passes)
    assert per_round == pytest.approx(expected, rel=1e-12)
    half = m({**values, "host_collective_time_factor": 0.5})
    for phase in ("host_to_pim", "pim_to_host", "host_aggregate"):
        assert float(half[phase]) == pytest.approx(float(out[phase]) / 2, rel=1e-12)
    assert float(half["dpu_compute"]) == float(out["dpu_compute"])
