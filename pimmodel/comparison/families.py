"""The study's three findings on each architecture family (``pimmodel compare-families``): does each one hold,
flip or vanish when the same training job runs on another kind of PIM?

The criteria are the ones ``pimmodel validate --group finding`` checks on UPMEM (``validation/findings.toml``,
each bound chosen there so that a wrong model misses it, not tuned to any spec), at the study's configurations
(YFCC100M-HNfc6, LR and SVM, the Fig. 4 and Fig. 7 batch sizes), on N units (the study's 2,048 or, where a
system has fewer, its largest power of two) and N/8 (the study's 256 against 2,048). Where a unit cannot hold the
study's rows per DPU, the rows per unit are halved until it can (the record says so).

1. **The optimizer decides** (``optimizer``, ``[comm_ordering]``): ADMM's communication + sync per epoch at most
   ``far_below_factor`` x MA-SGD's, and MA-SGD's below GA-SGD's. Holds when both do; flips when the order of
   the three changes; vanishes when ADMM is below MA-SGD but not by the factor. The epoch times are given beside.
2. **Host communication is the bottleneck of MA-SGD and GA-SGD** (``communication``, ``[comm_bottleneck]``):
   communication + sync above both the units' compute and their data movement, for both optimizers and both
   models. Holds when all are; flips when none is (the PIM side dominates); vanishes otherwise.
3. **No near-linear scaling** (``scaling``, ``[weak_scaling]``): weak-scaling efficiency t(N/8) / t(N) below
   ``max_efficiency`` for MA-SGD and GA-SGD, both models. Holds when all are; vanishes otherwise.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..api import predict
from ..errors import CapacityError, SpecError
from ..phases import COMM_PHASES, PHASES
from ..specs import DATASETS, STUDY_OPTIMIZERS, Workload, optimizer_info, study_hyperparams
from ..specs.architectures import architecture_of
from ..specs.workload import STUDY_DPUS
from ..validation.data import load


def units_for(hw: Any) -> int:
    """N: the study's 2,048, or the largest power of two of the system's units where it has fewer."""
    n = STUDY_DPUS
    while n > hw.dpus_available:
        n //= 2
    return n


def _job(dataset: str, model: str, optimizer: str, n: int, rows_per_unit: int, config: dict[str, Any]
         ) -> Workload:
    ds = replace(DATASETS[dataset], rows_per_dpu_weak=rows_per_unit)
    hp = replace(study_hyperparams(ds, model, optimizer), batch_size=int(config["batch_size"]),
                 global_batch_size=int(config["global_batch_size"]))
    return Workload(ds, model, optimizer, n, scaling="weak", epochs=1, hyper=hp)


def _epoch(w: Workload, hw: Any, view: str = "wall") -> dict[str, Any]:
    return predict(w, hw, view).to_record()


def rows_that_fit(hw: Any, dataset: str, models: tuple[str, ...], n: int, config: dict[str, Any]) -> int:
    """The study's rows per DPU, halved until every (model, optimizer) job fits a unit of ``hw``; 0 if none does."""
    rows = DATASETS[dataset].rows_per_dpu_weak
    while rows >= 1:
        try:
            for m in models:
                for o in STUDY_OPTIMIZERS:
                    _epoch(_job(dataset, m, o, n, rows, config), hw)
            return rows
        except CapacityError:
            rows //= 2
    return 0


def findings_on(hw: Any, dataset: str = "yfcc100m-hnfc6", models: tuple[str, ...] = ("lr", "svm")
                ) -> dict[str, Any]:
    """The three findings' numbers and verdicts on one spec."""
    data = load("findings.toml")
    ordering, bottleneck, weak = data["comm_ordering"], data["comm_bottleneck"], data["weak_scaling"]
    fig4 = next(c for c in ordering["configs"] if c["dataset"] == dataset)
    fig7 = next(c for c in weak["configs"] if c["dataset"] == dataset)
    info = architecture_of(hw)
    n = units_for(hw)
    record: dict[str, Any] = {"hardware": hw.name, "family": info.name, "unit": info.unit, "units": n,
                              "datatype": info.datatypes, "dataset": dataset}
    try:
        rows = rows_that_fit(hw, dataset, models, n, fig4)
        if rows == 0:
            raise CapacityError(f"not one row of {dataset} fits a {info.unit} of {hw.name}")
    except (CapacityError, SpecError) as exc:
        record["runs"] = False
        record["findings"] = {k: {"verdict": "cannot run", "why": str(exc)} for k in ("optimizer", "communication",
                                                                                      "scaling")}
        return record
    study_rows = DATASETS[dataset].rows_per_dpu_weak
    record["rows_per_unit"] = rows
    if rows < study_rows:
        record["note"] = (f"{study_rows:,} rows per {info.unit} (the study's) do not fit a {info.unit} of {hw.name}; "
                          f"{rows:,} do")
    runs = {(m, o): _epoch(_job(dataset, m, o, n, rows, fig4), hw, bottleneck["view"])
            for m in models for o in STUDY_OPTIMIZERS}
    label = {o: optimizer_info(o).label for o in STUDY_OPTIMIZERS}
    comm = {k: sum(r["per_epoch_s"][p] for p in COMM_PHASES) for k, r in runs.items()}
    # 1. the optimizer decides: the communication ordering (Fig. 4's LR configuration)
    lr = models[0]
    far = float(ordering["far_below_factor"])
    ordered_ok = comm[(lr, "admm")] <= comm[(lr, "ma-sgd")] < comm[(lr, "ga-sgd")]
    far_ok = comm[(lr, "admm")] <= far * comm[(lr, "ma-sgd")]
    optimizer = {"comm_sync_s": {o: comm[(lr, o)] for o in STUDY_OPTIMIZERS},
                 "epoch_s": {f"{m}/{o}": r["per_epoch_s"]["total"] for (m, o), r in runs.items()},
                 "admm_over_ma_sgd": _ratio(comm[(lr, "admm")], comm[(lr, "ma-sgd")]),
                 "ma_sgd_over_ga_sgd": _ratio(comm[(lr, "ma-sgd")], comm[(lr, "ga-sgd")]), "far_below_factor": far,
                 "verdict": "holds" if ordered_ok and far_ok else ("vanishes" if ordered_ok else "flips"),
                 "text": (f"comm+sync per epoch ({lr.upper()}): " + ", ".join(f"{label[o]} {comm[(lr, o)]:.3g} s"
                                                                           for o in STUDY_OPTIMIZERS))}
    # 2. host communication is the bottleneck of MA-SGD and GA-SGD
    above = {}
    for (m, o), r in runs.items():
        if o in bottleneck["optimizers"]:
            p = r["per_epoch_s"]
            above[f"{m}/{o}"] = comm[(m, o)] / max(p["dpu_compute"], p["mram_wram_dma"])
    communication = {"comm_over_pim_side": above,
                     "verdict": ("holds" if min(above.values()) > 1 else "flips" if max(above.values()) < 1
                                 else "vanishes")}
    # 3. no near-linear scaling: weak-scaling efficiency N/8 -> N (the study's 256 -> 2,048)
    small_n = max(1, n // 8)
    limit = float(weak["max_efficiency"])
    efficiency = {}
    for m in models:
        for o in STUDY_OPTIMIZERS:
            if optimizer_info(o).sync == "epoch":
                continue
            t = [_epoch(_job(dataset, m, o, k, rows, fig7), hw, weak["view"])["per_epoch_s"]["total"]
                 for k in (small_n, n)]
            efficiency[f"{m}/{o}"] = t[0] / t[1]
    scaling = {"from_units": small_n, "to_units": n, "efficiency": efficiency, "max_efficiency": limit,
               "verdict": "holds" if max(efficiency.values()) < limit else "vanishes"}
    record["runs"] = True
    record["bottleneck"] = {f"{m}/{o}": r["bottleneck"] for (m, o), r in runs.items()}
    record["phase_share"] = {f"{m}/{o}": {p: r["per_epoch_s"][p] / r["per_epoch_s"]["total"] for p in PHASES}
                             for (m, o), r in runs.items()}
    record["epoch_s"] = {f"{m}/{o}": r["per_epoch_s"]["total"] for (m, o), r in runs.items()}
    record["view"] = bottleneck["view"]
    first = next(iter(runs.values()))
    if "phase_labels" in first:
        record["phase_labels"] = first["phase_labels"]
    record["findings"] = {"optimizer": optimizer, "communication": communication, "scaling": scaling}
    return record


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else (1.0 if a == 0 else float("inf"))


def compare_families(specs: list[Any], dataset: str = "yfcc100m-hnfc6", models: tuple[str, ...] = ("lr", "svm")
                     ) -> list[dict[str, Any]]:
    """The findings on every spec, in the order given."""
    return [findings_on(hw, dataset, models) for hw in specs]
