"""The ``finding`` group: the PIM-Opt study's qualitative findings (``validation/findings.toml``) as
comparisons between model outputs at the study's configurations. Each criterion is one the study's text
supports and a wrong model misses (``findings.toml`` says which sentence and why the bound); a case the model
misses is a disagreement with the study, reported as ``disagrees`` (a failed case), never tuned away."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from ..calibration.result import CalibrationResult
from ..costmodel import predict
from ..phases import COMM_PHASES
from ..specs import DATASETS, HardwareSpec, Workload, optimizer_info, study_hyperparams
from .cases import Case
from .data import load


def _workload(dataset: str, model: str, optimizer: str, dpus: int, scaling: str, batch: int,
              global_batch: int) -> Workload:
    ds = DATASETS[dataset]
    hp = replace(study_hyperparams(ds, model, optimizer), batch_size=batch, global_batch_size=global_batch)
    return Workload(ds, model, optimizer, dpus, scaling=scaling, epochs=1, hyper=hp)


class PhaseModel(Protocol):
    """What a finding check reads of a model: the per-epoch phase seconds (and ``total``) of a workload in a
    view. Tests pass a deliberately broken one to show every check can fail."""

    def phases(self, w: Workload, view: str) -> dict[str, float]: ...


class CostModel:
    """Per-epoch phase seconds of the cost model, with the calibration in use."""

    def __init__(self, hw: HardwareSpec, calibration: CalibrationResult) -> None:
        self.hw, self.calibration = hw, calibration

    def phases(self, w: Workload, view: str) -> dict[str, float]:
        record = predict(w, self.hw, self.calibration.coefficients_for(w), view, check_capacity=False).to_record()
        return dict(record["per_epoch_s"])


def _comm(m: PhaseModel, w: Workload, view: str) -> float:
    p = m.phases(w, view)
    return sum(p[k] for k in COMM_PHASES)


def _comm_ordering(m: PhaseModel, spec: Mapping[str, Any]) -> list[Case]:
    cases = []
    for cfg in spec["configs"]:
        comm = {opt: _comm(m, _workload(cfg["dataset"], cfg["model"], opt, spec["dpus"], "weak", cfg["batch_size"],
                                        cfg["global_batch_size"]), spec["view"])
                for opt in ("admm", "ma-sgd", "ga-sgd")}
        tag = f"{cfg['dataset']} {cfg['model']} {spec['dpus']} DPUs ({cfg['figure']})"
        factor = float(spec["far_below_factor"])
        cases.append(Case("finding", f"comm+sync admm <= {factor:g} x ma-sgd, {tag}", "comm_sync",
                          factor * comm["ma-sgd"], comm["admm"], 0.0, "below", "s",
                          note="ADMM communicates far less than MA-SGD (an order of magnitude)"))
        cases.append(Case("finding", f"comm+sync ma-sgd < ga-sgd, {tag}", "comm_sync", comm["ga-sgd"],
                          comm["ma-sgd"], 0.0, "below", "s"))
    return cases


def _comm_bottleneck(m: PhaseModel, spec: Mapping[str, Any]) -> list[Case]:
    cases = []
    for cfg in spec["configs"]:
        for opt in spec["optimizers"]:
            for model in ("lr", "svm"):
                w = _workload(cfg["dataset"], model, opt, spec["dpus"], "weak", cfg["batch_size"],
                              cfg["global_batch_size"])
                p = m.phases(w, spec["view"])
                other = max(p["dpu_compute"], p["mram_wram_dma"])
                cases.append(Case("finding", f"comm+sync is the bottleneck, {cfg['dataset']} {model} {opt} "
                                  f"({cfg['figure']})", "comm_sync", other, sum(p[k] for k in COMM_PHASES), 0.0,
                                  "above", "s", note="comm./sync. above both PIM compute and PIM data movement"))
    return cases


def _compute_vs_dma(m: PhaseModel, spec: Mapping[str, Any]) -> list[Case]:
    cases = []
    for cfg in spec["configs"]:
        for opt in ("ma-sgd", "ga-sgd", "admm"):
            for model in ("lr", "svm"):
                w = _workload(cfg["dataset"], model, opt, spec["dpus"], "weak", cfg["batch_size"],
                              cfg["global_batch_size"])
                p = m.phases(w, spec["view"])
                cases.append(Case("finding", f"mram_wram_dma < dpu_compute, {cfg['dataset']} {model} {opt} "
                                  f"({cfg['figure']})", "mram_wram_dma", p["dpu_compute"], p["mram_wram_dma"], 0.0,
                                  "below", "s", note="on PIM, DPU compute (not MRAM<->WRAM transfer) dominates"))
    return cases


def _scaling(m: PhaseModel, spec: Mapping[str, Any], scaling: str) -> list[Case]:
    small, large = spec["dpus"]
    limit = float(spec["max_efficiency"])
    cases = []
    for cfg in spec["configs"]:
        for opt in ("ma-sgd", "ga-sgd", "admm"):
            for model in ("lr", "svm"):
                t = [m.phases(_workload(cfg["dataset"], model, opt, n, scaling, cfg["batch_size"],
                                        cfg["global_batch_size"]), spec["view"])["total"] for n in (small, large)]
                tag = f"{cfg['dataset']} {model} {opt} {small}->{large} ({cfg['figure']})"
                if scaling == "strong":
                    efficiency = t[0] / t[1] / (large / small)
                    cases.append(Case("finding", f"strong scaling efficiency < {limit:.0%}, {tag}", "efficiency",
                                      limit, efficiency, 0.0, "below", "",
                                      note=f"speed-up {t[0] / t[1]:.2f}x of {large / small:g}x: not approximately "
                                           "linear"))
                elif optimizer_info(opt).sync == "epoch":  # ADMM: one host round per epoch
                    cases.append(Case("finding", f"weak scaling flat within {spec['admm_within']:.0%}, {tag}",
                                      "total", t[0], t[1], float(spec["admm_within"]), "within", "s",
                                      note="ADMM communicates far less"))
                else:
                    cases.append(Case("finding", f"weak scaling efficiency < {limit:.0%}, {tag}", "efficiency",
                                      limit, t[0] / t[1], 0.0, "below", "",
                                      note=f"epoch {t[0]:.4g} s -> {t[1]:.4g} s ({t[1] / t[0]:.2f}x): not "
                                           "approximately linear"))
    return cases


def finding_cases(hw: HardwareSpec, calibration: CalibrationResult, model: PhaseModel | None = None) -> list[Case]:
    """The study's qualitative findings as checks on the model at the study's configurations (``model``: the
    cost model on ``hw`` with ``calibration`` unless given; a failed case is a disagreement with the study)."""
    data = load("findings.toml")
    m = model if model is not None else CostModel(hw, calibration)
    return [*_comm_ordering(m, data["comm_ordering"]), *_comm_bottleneck(m, data["comm_bottleneck"]),
            *_compute_vs_dma(m, data["compute_vs_dma"]),
            *_scaling(m, data["weak_scaling"], "weak"), *_scaling(m, data["strong_scaling"], "strong")]
