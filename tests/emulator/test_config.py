"""ONE builder of the emulator's configuration: ``emulator.config.train_config`` from (workload, options, hardware);
the fields a workload or a hardware spec decides have no defaults, and nothing else in the package builds one."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import pimmodel
from pimmodel.emulator.config import Options, TrainConfig, train_config
from pimmodel.specs import YFCC, Workload, load_hardware

DERIVED = {"model", "optimizer", "batch_size", "global_batch_size", "learning_rate_shift", "reg_shift", "alpha_shift",
           "task_epochs", "sync_every", "epochs", "tasklets", "kernels", "dma_max_bytes", "link_topology",
           "dpus_per_rank"}


def test_workload_and_hardware_fields_have_no_default() -> None:
    missing = dataclasses.MISSING
    fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    assert set(fields) >= DERIVED
    assert {n for n, f in fields.items() if f.default is missing and f.default_factory is missing} == DERIVED
    with pytest.raises(TypeError):
        TrainConfig(model="lr", optimizer="ma-sgd")  # type: ignore[call-arg]


def test_builder_takes_each_field_from_its_source() -> None:
    hw = load_hardware("upmem-2556").replace(dma_max_bytes=512, link_topology="ring", dpus_per_rank=8)
    w = Workload(YFCC, "svm", "local-sgd", 64, tasklets=12, epochs=3, kernels="corrected")
    cfg = train_config(w, Options(arithmetic="float64", svm_margin=0.25), hw)
    assert (cfg.dma_max_bytes, cfg.link_topology, cfg.dpus_per_rank) == (512, "ring", 8)
    assert (cfg.tasklets, cfg.epochs, cfg.kernels, cfg.sync_every) == (12, 3, "corrected", w.sync_every)
    assert cfg.sync_every == 8 and cfg.batch_size == w.hp.batch_size and cfg.reg_shift == w.hp.reg_shift
    assert (cfg.arithmetic, cfg.svm_margin) == ("float64", 0.25)


def test_no_other_module_builds_a_train_config() -> None:
    root = Path(pimmodel.__file__).parent
    texts = {p: p.read_text(encoding="utf-8") for p in root.rglob("*.py") if p.name != "config.py"}
    # the CPU baseline has a TrainConfig of its own (``baselines/reference.py``), which is not the emulator's
    builders = sorted(str(p.relative_to(root)) for p, text in texts.items()
                      if "TrainConfig(" in text and "class TrainConfig" not in text and "ref.TrainConfig(" not in text)
    assert builders == []
