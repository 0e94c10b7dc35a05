"""Every finding check can fail: a model broken on purpose (no communication cost, free DPU, linear scaling)
misses the finding it contradicts. The broken models wrap the real cost model's phases, so only the broken part
differs from what `pimmodel validate` checks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cache

import pytest

from pimmodel.calibration.result import load_calibration
from pimmodel.phases import COMM_PHASES, total
from pimmodel.specs import Workload, load_hardware
from pimmodel.validation import Case, finding_cases
from pimmodel.validation.findings import CostModel

Phases = dict[str, float]


@cache
def _real() -> CostModel:
    return CostModel(load_hardware("upmem-2556"), load_calibration(None))


@cache
def _phases(w: Workload, view: str) -> tuple[tuple[str, float], ...]:
    return tuple(_real().phases(w, view).items())


class Broken:
    """The real model's phases at ``at(w)``, passed through ``edit`` (``total`` recomputed)."""

    def __init__(self, edit: Callable[[Workload, Phases], Phases],
                 at: Callable[[Workload], Workload] = lambda w: w) -> None:
        self.edit, self.at = edit, at

    def phases(self, w: Workload, view: str) -> Phases:
        p = self.edit(w, dict(_phases(self.at(w), view)))
        p.pop("total", None)
        return {**p, "total": total(p)}


def _no_comm(w: Workload, p: Phases) -> Phases:
    return {k: (0.0 if k in COMM_PHASES else v) for k, v in p.items()}


def _free_dpu(w: Workload, p: Phases) -> Phases:
    return {**p, "dpu_compute": 0.0, "mram_wram_dma": 0.0}


SMALL = 256


def _linear(w: Workload, p: Phases) -> Phases:
    """The 256-DPU epoch, divided by N / 256 under strong scaling, unchanged under weak scaling."""
    share = SMALL / w.dpus if w.scaling == "strong" else 1.0
    return {k: v * share for k, v in p.items()}


BROKEN = {
    "no communication cost": Broken(_no_comm),
    "free DPU (no compute, no DMA)": Broken(_free_dpu),
    "linear scaling": Broken(_linear, at=lambda w: replace(w, dpus=SMALL)),
}

# finding (a piece of the case names) -> the broken models that must make every one of its cases fail
MUST_FAIL = {
    "comm+sync admm <=": ["no communication cost"],
    "comm+sync ma-sgd < ga-sgd": ["no communication cost"],
    "comm+sync is the bottleneck": ["no communication cost"],
    "mram_wram_dma < dpu_compute": ["free DPU (no compute, no DMA)"],
    "weak scaling efficiency": ["linear scaling"],
    "weak scaling flat": ["free DPU (no compute, no DMA)"],
    "strong scaling efficiency": ["linear scaling"],
}
# (Without communication cost the scaling checks still fail for YFCC and Criteo MA-SGD and ADMM, but not for
# Criteo GA-SGD: at a fixed global batch its rounds per epoch, and so its 8 MB zeroing per launch on the DPU,
# grow with N. That is the DPU side not scaling, which the linear-scaling model removes.)


@cache
def _cases(broken: str) -> tuple[Case, ...]:
    return tuple(finding_cases(load_hardware("upmem-2556"), load_calibration(None), BROKEN[broken]))


def test_every_finding_has_a_breaking_model() -> None:
    real = finding_cases(load_hardware("upmem-2556"), load_calibration(None), _real())
    assert all(sum(piece in c.name for piece in MUST_FAIL) == 1 for c in real)


@pytest.mark.parametrize(("finding", "broken"), [(f, b) for f, bs in MUST_FAIL.items() for b in bs])
def test_a_broken_model_fails_the_check(finding: str, broken: str) -> None:
    cases = [c for c in _cases(broken) if finding in c.name]
    assert cases
    passing = [f"{c.name}: {c.predicted:.4g} vs {c.reference:.4g}" for c in cases if c.ok]
    assert not passing, f"{broken} still passes: " + "; ".join(passing)
    assert {c.verdict for c in cases} == {"disagrees"}
