"""The generated model sources: shipped ones are used without compiling, the scalar function agrees with the
vector one, and a source keyed by another hash is never used."""

from __future__ import annotations

import numpy as np
import pytest
from support import model_inputs

from pimmodel.costmodel import codegen
from pimmodel.costmodel import compile as comp

KEY = ("ga-sgd", "svm", "sparse", "none", "study")


def _values() -> dict[str, float]:
    return model_inputs(dpus=256, tasklets=16, rows_per_dpu=4000, local_batch=64, sync_every=1, torus_rows=16)


def test_a_shipped_source_is_used_without_generating(tmp_path, monkeypatch) -> None:
    comp.write_source(tmp_path / comp.source_key(), KEY, *codegen.generate(KEY))
    monkeypatch.setattr(comp, "SHIPPED", tmp_path)
    monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(codegen, "generate", lambda key: pytest.fail(f"{key} was generated"))
    assert comp.where(KEY) == "shipped"
    model = comp.compiled.__wrapped__(*KEY)
    assert model.outputs and model.scalar(_values())["dpu_compute"] > 0
    assert not (tmp_path / "empty-cache").exists()


def test_a_source_of_other_model_sources_is_not_used(tmp_path, monkeypatch) -> None:
    comp.write_source(tmp_path / "0123456789abcdef", KEY, *codegen.generate(KEY))
    monkeypatch.setattr(comp, "SHIPPED", tmp_path)
    monkeypatch.setenv("PIMMODEL_CACHE_DIR", str(tmp_path / "empty-cache"))
    assert comp.where(KEY) == "generate"


def test_scalar_and_vector_functions_agree_and_outputs_can_be_chosen() -> None:
    model = comp.compiled(*KEY)
    values = _values()
    scalar = model.scalar(values)
    vector = model(values)
    for name in model.outputs:
        assert scalar[name] == pytest.approx(float(vector[name]), rel=1e-12, abs=1e-300)
    batch = {**values, "dpus": np.array([64.0, 256.0, 1024.0])}
    some = model(batch, outputs=("dpu_compute", "rounds"))
    assert set(some) == {"dpu_compute", "rounds"} and some["rounds"].shape == (3,)
    assert some["dpu_compute"][1] == pytest.approx(scalar["dpu_compute"], rel=1e-12)


def test_every_configuration_the_registry_accepts_is_listed() -> None:
    keys = codegen.configurations()
    assert KEY in keys and len(keys) == len(set(keys))
    assert {k[3] for k in keys} >= {"none", "ring"}
