"""``speedup_over_cpu`` / ``speedup_over_gpu``: the study's CPU or GPU epoch on the same rows over the design's
epoch, and shipped studies by name."""

from __future__ import annotations

import dataclasses

import pytest

from pimmodel.api import predict
from pimmodel.baselines import cpu_workload_of, gpu_workload_of, load_cpu, load_gpu, predict_cpu, predict_gpu
from pimmodel.baselines.specs import cpu_to_toml
from pimmodel.dse.objective import Evaluator
from pimmodel.dse.space import from_mapping, load_study, study_names
from pimmodel.errors import StudyError
from pimmodel.specs import CRITEO, YFCC, Workload, load_hardware


def _study(kind: str, dataset: str, optimizer: str, **objective: object) -> dict:
    return {"study": {"name": "vs", "seed": 1, "batch": 4},
            "workloads": {"datasets": [dataset], "models": ["lr"], "optimizers": [optimizer]},
            "objective": [{"kind": kind, "dpus": 2048, **objective}, {"kind": "cost"}],
            "parameters": {"dpu_clock": {"field": "dpu_clock_hz", "low": 350, "high": 1000, "unit": "MHz"}}}


@pytest.mark.parametrize(("kind", "dataset", "optimizer"), [
    ("speedup_over_cpu", "yfcc100m-hnfc6", "admm"), ("speedup_over_cpu", "criteo-1tb", "ga-sgd"),
    ("speedup_over_gpu", "yfcc100m-hnfc6", "ma-sgd"), ("speedup_over_gpu", "criteo-1tb", "admm"),
])
def test_baseline_design_scores_the_other_platforms_epoch_over_pims(kind, dataset, optimizer) -> None:
    ev = Evaluator(from_mapping(_study(kind, dataset, optimizer), "vs"))
    w = Workload(YFCC if dataset.startswith("yfcc") else CRITEO, "lr", optimizer, 2048, epochs=1)
    pim_s = predict(w, load_hardware("upmem-2556")).per_epoch_total_s
    other_s = (predict_cpu(cpu_workload_of(w), load_cpu()) if kind.endswith("cpu")
               else predict_gpu(gpu_workload_of(w), load_gpu())).epoch_s
    scores = ev.evaluate([{"dpu_clock": 350.0}, {"dpu_clock": 700.0}])
    assert scores.values[0, 0] == pytest.approx(other_s / pim_s, rel=1e-9)
    assert scores.values[1, 0] > scores.values[0, 0]  # a faster clock shortens the PIM epoch, nothing else


def test_versus_names_the_cpu_and_is_refused_elsewhere(tmp_path) -> None:
    """A copy of the study's CPU given by file scores the same as the default; 'versus' elsewhere is an error."""
    copy = tmp_path / "copy.toml"
    copy.write_text(cpu_to_toml(dataclasses.replace(load_cpu(), name="copy")))
    same = Evaluator(from_mapping(_study("speedup_over_cpu", "yfcc100m-hnfc6", "admm", versus=str(copy)), "vs"))
    default = Evaluator(from_mapping(_study("speedup_over_cpu", "yfcc100m-hnfc6", "admm"), "vs"))
    assert same.evaluate([{"dpu_clock": 350.0}]).values[0, 0] == pytest.approx(
        default.evaluate([{"dpu_clock": 350.0}]).values[0, 0])
    with pytest.raises(StudyError, match="'versus' names the CPU or GPU"):
        from_mapping(_study("time_per_epoch", "yfcc100m-hnfc6", "admm", versus="x"), "vs")
    with pytest.raises(StudyError, match="objective speedup_over_gpu"):
        Evaluator(from_mapping(_study("speedup_over_gpu", "yfcc100m-hnfc6", "admm", versus="no-such-gpu"), "vs"))


def test_shipped_studies_load_by_name() -> None:
    assert {"scalable-pim", "inter-dpu-links", "beat-the-a100"} <= set(study_names())
    spec = load_study("beat-the-a100")
    assert [o.kind for o in spec.objectives] == ["speedup_over_gpu", "cost"]
    with pytest.raises(StudyError, match='did you mean "beat-the-a100"'):
        load_study("beat-the-a10")
