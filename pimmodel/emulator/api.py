"""One call for a whole emulation: data, training, metrics per epoch and the event trace, plus the
``Workload`` that describes what ran (so that a caller can put the cost model's prediction beside it: the
emulator itself never imports the cost model, it is the reference the model is checked against)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError, SpecError, unknown
from ..kernels.capacity import check as check_capacity
from ..specs import CRITEO, MODELS, OPTIMIZERS, YFCC, DatasetSpec, HardwareSpec, HyperParams, Workload, load_hardware
from .data import (
    CRITEO_ACTIVE,
    SyntheticDense,
    ell_from_rows,
    read_npy,
    read_svmlight_data,
    shard,
    synthetic_sparse,
    train_test_split,
)
from .fixedpoint import quantize_unit
from .metrics import decision, evaluate
from .timing import seconds
from .trace import Trace, merge
from .trainers import Progress, TrainConfig, model_length, train

METRIC_ROWS = 16384
"""Training metrics use the first rows of every shard, at most this many in total."""


@dataclass
class Emulation:
    """What one emulation produced: metrics per epoch, the merged trace of all epochs, and the workload and
    hardware it ran (for pricing the trace and for the cost model's prediction of the same configuration)."""

    history: list[dict[str, float]]
    trace: Trace
    workload: Workload
    hardware: HardwareSpec


SYNTHETIC = ("synthetic-yfcc", "synthetic-criteo")


def _synthetic_spec(dataset: str, samples_per_dpu: int, features: int | None, tasklets: int) -> DatasetSpec:
    """What the synthetic data will be on the DPUs, known before any row is generated (for the checks)."""
    if dataset == "synthetic-yfcc":
        d = features or 4096
        return replace(YFCC, name=dataset, features=d, nonzeros_per_row=d, slots_per_row=d,
                       rows_per_dpu_weak=samples_per_dpu)
    f = features or 1_000_000
    return replace(CRITEO, name=dataset, features=model_length(f, tasklets), bias_index=f,
                   rows_per_dpu_weak=samples_per_dpu)


def _synthetic_data(dataset: str, dpus: int, samples_per_dpu: int, features: int | None, seed: int
                    ) -> tuple[Any, Any, Any]:
    test_rows = max(1024, min(65536, dpus * samples_per_dpu // 4))
    if dataset == "synthetic-yfcc":
        d = features or 4096
        test = SyntheticDense(1, test_rows, d, seed, stream=1)
        xt, yt = test.rows(0, test_rows)
        return SyntheticDense(dpus, samples_per_dpu, d, seed), xt[0], yt[0]
    f = features or 1_000_000
    idx, y = synthetic_sparse(dpus * samples_per_dpu + test_rows, f, seed)
    n = dpus * samples_per_dpu
    return shard(idx[:n], y[:n], dpus, "sparse", f), idx[n:], y[n:]


def _file_data(path: Path, dpus: int, seed: int, tasklets: int) -> tuple[Any, Any, Any, DatasetSpec]:
    if not path.exists():
        raise DataError(f"dataset {str(path)!r} is neither synthetic-yfcc, synthetic-criteo nor an existing file")
    rng = np.random.default_rng(seed)
    if path.suffix == ".npy":
        return _dense_shards(path, *read_npy(path), dpus, rng, tasklets)
    data = read_svmlight_data(path)
    if not data.binary:  # real-valued features: the dense kernels, Q1.31 after a range check
        if data.features > MAX_DENSE_FEATURES:
            raise DataError(f"{path}: {data.features:,} real-valued features; the dense kernels take at most "
                            f"{MAX_DENSE_FEATURES:,} (binary data, one value everywhere, takes the sparse kernels)")
        return _dense_shards(path, quantize_unit(data.dense()), data.labels, dpus, rng, tasklets)
    data.check_ell(CRITEO_ACTIVE)
    ell = ell_from_rows(data.rows)
    tr, te = train_test_split(ell.shape[0], 0.2, rng)
    sh = shard(ell[tr], data.labels[tr], dpus, "sparse", data.features)
    return sh, ell[te], data.labels[te], replace(CRITEO, name=path.stem, features=model_length(sh.features, tasklets),
                                                 rows_per_dpu_weak=sh.rows_per_dpu, bias_index=sh.features)


MAX_DENSE_FEATURES = 1 << 16
"""Largest real-valued feature count the dense kernels are emulated with (a dense row must fit MRAM)."""


def _dense_shards(path: Path, xq: Any, y: Any, dpus: int, rng: np.random.Generator, tasklets: int
                  ) -> tuple[Any, Any, Any, DatasetSpec]:
    """Q1.31 rows split into a train part sharded over the DPUs and a test part."""
    tr, te = train_test_split(xq.shape[0], 0.2, rng)
    sh = shard(xq[tr], y[tr], dpus, "dense", xq.shape[1], pad_multiple=tasklets * 128)
    spec = replace(YFCC, name=path.stem, features=sh.features, nonzeros_per_row=sh.features,
                   slots_per_row=sh.features, rows_per_dpu_weak=sh.rows_per_dpu)
    return sh, xq[te], y[te], spec


def emulate(dataset: str, dpus: int, model: str, optimizer: str, hyper: HyperParams, epochs: int = 1,
            samples_per_dpu: int = 512, features: int | None = None, arithmetic: str = "fixed", seed: int = 0,
            hardware: str = "upmem-2556", tasklets: int = 16, progress: Progress | None = None) -> Emulation:
    _check_arguments(dpus, model, optimizer, epochs, samples_per_dpu, arithmetic)
    hw = load_hardware(hardware)
    if dataset in SYNTHETIC:  # every check before a row is generated
        spec = _synthetic_spec(dataset, samples_per_dpu, features, tasklets)
        check_capacity(Workload(spec, model, optimizer, dpus, tasklets, "weak", epochs, hyper), hw)
        shards, x_test, y_test = _synthetic_data(dataset, dpus, samples_per_dpu, features, seed)
    else:
        shards, x_test, y_test, spec = _file_data(Path(dataset), dpus, seed, tasklets)
        spec = replace(spec, rows_per_dpu_weak=shards.rows_per_dpu)
    cfg = TrainConfig(model=model, optimizer=optimizer, batch_size=hyper.batch_size,
                      global_batch_size=hyper.global_batch_size, learning_rate_shift=hyper.learning_rate_shift,
                      reg_shift=hyper.reg_shift, alpha_shift=hyper.admm_alpha_shift, epochs=epochs,
                      arithmetic=arithmetic, tasklets=tasklets, task_epochs=hyper.task_epochs,
                      dma_max_bytes=hw.dma_max_bytes)
    workload = Workload(spec, model, optimizer, dpus, tasklets, "weak", epochs, hyper)
    check_capacity(workload, hw)
    k = max(1, min(shards.rows_per_dpu, METRIC_ROWS // dpus))
    xm, ym = shards.rows(0, k)
    xm, ym = xm.reshape(-1, xm.shape[-1]), ym.reshape(-1)
    history: list[dict[str, float]] = []

    def on_epoch(epoch: int, weights: Any, tr: Any) -> None:
        train_m = evaluate(decision(xm, shards.layout, weights.coef, weights.intercept), ym, model)
        test_m = evaluate(decision(x_test, shards.layout, weights.coef, weights.intercept), y_test, model)
        history.append({"epoch": epoch, "train_accuracy": train_m["accuracy"], "test_accuracy": test_m["accuracy"],
                        "loss": test_m["loss"], "auc": test_m["auc"], "emulated_wall_s": seconds(tr, hw)["total"]})

    result = train(shards, cfg, on_epoch=on_epoch, progress=progress)
    return Emulation(history, merge(result.traces), workload, hw)


ARITHMETICS = ("fixed", "float64")


def _check_arguments(dpus: int, model: str, optimizer: str, epochs: int, samples_per_dpu: int,
                     arithmetic: str) -> None:
    """One-line errors for bad arguments, before any data is made."""

    for name, value in (("--dpus", dpus), ("--epochs", epochs), ("--samples-per-dpu", samples_per_dpu)):
        if value <= 0:
            raise SpecError(f"{name} must be a positive whole number, got {value}")
    if model not in MODELS:
        raise unknown("model", model, MODELS)
    if optimizer not in OPTIMIZERS:
        raise unknown("optimizer", optimizer, OPTIMIZERS)
    if arithmetic not in ARITHMETICS:
        raise unknown("arithmetic", arithmetic, ARITHMETICS)
