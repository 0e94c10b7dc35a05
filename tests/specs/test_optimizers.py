"""Workloads of the optimizers outside the study: rounds per epoch, H, what they borrow from the study, what they
need from the hardware (links, memory, power-of-two groups)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pimmodel.errors import SpecError
from pimmodel.kernels.capacity import check, footprint
from pimmodel.specs import CRITEO, YFCC, HyperParams, Workload, load_hardware, resolve_hyperparams


def test_rounds_per_epoch() -> None:
    """local-sgd averages every H = 8 (registry default) of YFCC's 416 steps (52) and Criteo's 96 (12); hier-sgd,
    dpsgd synchronise every step; allreduce-sgd takes GA-SGD's global batch (832 rounds)."""
    assert Workload(YFCC, "lr", "local-sgd", 2048).rounds_per_epoch == 52
    assert Workload(CRITEO, "svm", "local-sgd", 2048).rounds_per_epoch == 12
    assert Workload(YFCC, "lr", "hier-sgd", 2048).rounds_per_epoch == 416
    assert Workload(YFCC, "lr", "dpsgd", 2048).rounds_per_epoch == 416
    w = Workload(YFCC, "lr", "allreduce-sgd", 2048)
    assert (w.rounds_per_epoch, w.local_batch, w.hp.learning_rate_shift) == (832, 4, 4)  # GA-SGD's rates
    assert Workload(YFCC, "lr", "local-sgd", 2048, hyper=replace(w.hp, sync_every=3)).rounds_per_epoch == 139


def test_h_defaults_and_refusals() -> None:
    hyper, _ = resolve_hyperparams(YFCC, "lr", "local-sgd", 2048, "weak")
    assert hyper.sync_every == 8 and hyper.batch_size == 8 and hyper.learning_rate_shift == 6  # MA-SGD's rates
    hyper, _ = resolve_hyperparams(YFCC, "lr", "hier-sgd", 2048, "weak", sync_every=2)
    assert hyper.sync_every == 2
    assert Workload(YFCC, "lr", "ma-sgd", 2048).sync_every == 1
    with pytest.raises(SpecError, match="--sync-every applies to local-sgd and hier-sgd; admm"):
        resolve_hyperparams(YFCC, "lr", "admm", 2048, "weak", sync_every=4)
    with pytest.raises(SpecError, match="sync-every must be a positive whole number, got 0"):
        HyperParams(8, 8192, 6, 12, sync_every=0)


def test_link_needs(upmem) -> None:
    torus = load_hardware("pim-torus-hypothetical")
    assert torus.link_topology == "torus" and torus.dpus_available == upmem.dpus_available
    for optimizer in ("dpsgd", "allreduce-sgd"):
        check(Workload(YFCC, "lr", optimizer, 2048), torus)
        with pytest.raises(SpecError, match=f"{optimizer} needs direct links between all DPUs"):
            check(Workload(YFCC, "lr", optimizer, 2048), upmem)
    for optimizer in ("local-sgd", "hier-sgd"):
        check(Workload(YFCC, "lr", optimizer, 2048), upmem)
        check(Workload(YFCC, "lr", optimizer, 2048), torus)


def test_the_torus_spec_is_upmem_2556_plus_links(upmem) -> None:
    torus = load_hardware("pim-torus-hypothetical")
    assert torus.replace(name=upmem.name, description=upmem.description, link_topology="none",
                         link_bytes_per_s=upmem.link_bytes_per_s, link_latency_s=upmem.link_latency_s) == upmem
    assert (torus.link_bytes_per_s, torus.link_latency_s) == (1e9, 1e-6)


def test_exchange_buffers_reuse_the_accumulators(upmem) -> None:
    """dpsgd receives up to 4 neighbours' models (16 B per weight) into MRAM; the accumulators' 8 B (sparse) or
    4 B (dense) per weight are reused: Criteo needs 8 MB more than MA-SGD and still fits 64 MiB at 2,048 DPUs."""
    torus = load_hardware("pim-torus-hypothetical")
    ma, dp = footprint(Workload(CRITEO, "lr", "ma-sgd", 2048)), check(Workload(CRITEO, "lr", "dpsgd", 2048), torus)
    assert dp.mram_bytes - ma.mram_bytes == 8 * CRITEO.features and dp.mram_bytes < 64 * 2**20
    dense = (footprint(Workload(YFCC, "lr", "dpsgd", 2048)).mram_bytes
             - footprint(Workload(YFCC, "lr", "ma-sgd", 2048)).mram_bytes)
    assert dense == 12 * YFCC.features
    assert footprint(Workload(CRITEO, "lr", "allreduce-sgd", 2048)) == footprint(Workload(CRITEO, "lr", "ga-sgd", 2048))


def test_shift_divisions_need_powers_of_two() -> None:
    links = load_hardware("upmem-2556").replace(link_topology="in-rank")
    check(Workload(YFCC, "lr", "hier-sgd", 128), links)
    check(Workload(YFCC, "lr", "hier-sgd", 32), links)
    check(Workload(YFCC, "lr", "hier-sgd", 96), load_hardware("upmem-2556"))  # the host divides by anything
    with pytest.raises(SpecError, match="equal power-of-two groups of min"):
        check(Workload(YFCC, "lr", "hier-sgd", 96), links)
    torus = load_hardware("pim-torus-hypothetical")
    with pytest.raises(SpecError, match="global batch 8,160 with a shift"):
        check(Workload(YFCC, "lr", "allreduce-sgd", 2040), torus)


def test_an_enumerated_field_outside_its_choices_is_one_line_with_the_closest_choice() -> None:
    from pimmodel.errors import check_choice
    from pimmodel.kernels.vocabulary import HostCall
    from pimmodel.specs.optimizers import REGISTRY

    check_choice("memory", "wram", ("mram", "wram"))  # a choice passes
    with pytest.raises(ValueError, match=r"^memory must be one of mram, wram, got 'wrma' \(did you mean \"wram\"\?\)$"):
        HostCall("x", 8, True, memory="wrma")
    with pytest.raises(SpecError, match=r"^layout must be one of 1, 2, got 3$"):
        check_choice("layout", 3, (1, 2), SpecError)
    with pytest.raises(ValueError, match=r"^ga-sgd: sync must be one of .*, got 'nowhere'$"):
        replace(REGISTRY["ga-sgd"], sync="nowhere")
