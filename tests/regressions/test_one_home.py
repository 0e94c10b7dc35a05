"""Three outputs that copies of one concept got wrong (issue "one home per concept"); each test fails on the code
before the fix (commit 35e6d39)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from support import run_emulation

from pimmodel.api import predict, predict_interval
from pimmodel.specs import YFCC, HyperParams, Workload, load_hardware
from pimmodel.specs.hardware import to_toml


def test_interval_uses_the_link_topology_of_the_hardware() -> None:
    """pim-next-hypothetical has in-rank links: the interval used to be evaluated on the host path (2.33-2.35 s
    around a point of 2.15 s). The point must lie inside its own interval."""
    hw = load_hardware("pim-next-hypothetical")
    assert hw.link_topology == "in-rank"
    w = Workload(YFCC, "svm", "ga-sgd", 2048)
    point = predict(w, hw).per_epoch_total_s
    low, high = predict_interval(w, hw)["per_epoch_s"]["total"]
    assert low <= point <= high
    assert high - low < 0.05 * point


def test_admm_task_epochs_multiply_the_local_work() -> None:
    """task_epochs local passes per launch: the DPU side scales by the number of passes, the host side does not
    (one round per epoch either way)."""
    hw = load_hardware("upmem-2556")
    w1 = Workload(YFCC, "lr", "admm", 2048)
    w3 = w1.with_(hyper=replace(w1.hp, task_epochs=3))
    one, three = predict(w1, hw).per_epoch_s, predict(w3, hw).per_epoch_s
    # every DPU section runs per sample or per local step, except the launch's two barriers and bias DMAs:
    # 3 x (one epoch's compute) minus 2 x the launch section's share, which is below 1e-6 of the total
    assert three["dpu_compute"] == pytest.approx(3 * one["dpu_compute"], rel=1e-6)
    for phase in ("host_to_pim", "pim_to_host", "host_aggregate", "launch"):
        assert three[phase] == one[phase]


def test_emulated_admm_task_epochs_match_the_model() -> None:
    hyper = HyperParams(batch_size=4, global_batch_size=16, learning_rate_shift=4, reg_shift=10, admm_alpha_shift=4,
                        task_epochs=3)
    run = run_emulation("synthetic-yfcc", 4, "lr", "admm", hyper, samples_per_dpu=8, features=512)
    events = run.trace["dpu_compute"]["events"]
    assert events["samples"]["max"] == 3 * 8 and events["steps"]["max"] == 3 * 8 / 4
    assert run.trace["seconds"]["wall"]["dpu_compute"] == pytest.approx(
        run.predicted["per_epoch_s"]["dpu_compute"], rel=1e-12)


def test_emulator_splits_dmas_at_the_hardware_limit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A hypothetical DPU whose DMAs stop at 512 B: a tasklet's 1,024-B X slice takes two DMAs in the model and
    in the emulator alike (the emulator used to hard-code 2,048 B)."""
    spec = tmp_path / "small-dma.toml"
    spec.write_text(to_toml(load_hardware("upmem-2556").replace(name="small-dma", dma_max_bytes=512)))
    hyper = HyperParams(batch_size=4, global_batch_size=16, learning_rate_shift=4, reg_shift=10)
    run = run_emulation("synthetic-yfcc", 4, "lr", "ma-sgd", hyper, samples_per_dpu=8, features=4096,
                        hardware=str(spec))
    by_size = {(d["direction"], d["bytes"]): d["count"]["max"] for d in run.trace["mram_wram_dma"]["by_size"]}
    assert ("read", 1024) not in by_size  # no DMA larger than the limit
    # per sample and tasklet: 2 X reads of 512 B + 2 w + 2 accumulator blocks of 512 B (8 samples x 16 tasklets);
    # per local step (2 of b = 4) and tasklet, the update reads 2 w + 2 accumulator blocks
    assert by_size[("read", 512)] == 8 * 16 * (2 + 2 + 2) + 2 * 16 * (2 + 2)
    assert run.trace["seconds"]["wall"]["mram_wram_dma"] == pytest.approx(
        run.predicted["per_epoch_s"]["mram_wram_dma"], rel=1e-12)


def test_synthetic_dense_partial_last_batch_is_sliced_like_array_shards() -> None:
    """Regression: a synthetic shard whose rows are not a multiple of the batch asked for rows past its end."""
    from pimmodel.emulator.data import SyntheticDense

    data = SyntheticDense(2, 100, 16, prefetch=False)
    x, y = data.rows(96, 128)
    assert x.shape == (2, 4, 16) and y.shape == (2, 4)
    whole, _ = data.rows(0, 100)
    assert (whole[:, 96:] == x).all()


def test_dense_accumulator_overflow_is_counted_and_defaults_stay_below_it(tmp_path) -> None:
    """Regression: on a small user dataset the adapted learning rate reached 2^-1, where a batch of 8 SVM terms of
    x >> 1 sums past the kernels' int32 accumulator and wraps to the wrong sign (test accuracy ~0.5 on separable
    data, silently). Now the adaptation stops at 2^-log2(b) and the emulator counts and reports every wrap."""
    import numpy as np

    from pimmodel.emulator.api import Options, emulate
    from pimmodel.specs import YFCC, resolve_hyperparams

    rng = np.random.default_rng(0)
    x = rng.random((400, 5))
    path = tmp_path / "separable.npy"
    np.save(path, np.column_stack([x, (x[:, 0] + x[:, 1] > 1).astype(float)]))
    forced = emulate(str(path), 4, "svm", "ma-sgd", {"learning_rate_shift": 1}, Options(kernels="corrected"))
    assert forced.trace.events["acc_overflow"].max() > 0
    assert any("int32 accumulator" in w and "--learning-rate-shift 4" in w for w in forced.warnings)
    adapted = emulate(str(path), 4, "svm", "ma-sgd", None, Options(kernels="corrected"))
    assert adapted.workload.hp.learning_rate_shift == 3  # log2 of the batch of 8
    assert "acc_overflow" not in adapted.trace.events or adapted.trace.events["acc_overflow"].max() == 0
    assert adapted.history[-1]["test_accuracy"] >= 0.8
    # the study's presets keep the study's shifts
    assert resolve_hyperparams(YFCC, "svm", "ma-sgd", 2048, "weak")[0].learning_rate_shift == 6
