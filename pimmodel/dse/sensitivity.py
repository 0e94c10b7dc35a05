"""Elasticities d ln T / d ln p of the epoch time and of each phase, from exact symbolic derivatives.

For one configuration (workload x hardware x link topology) each phase expression of the registry is
differentiated with sympy w.r.t. every hardware symbol it contains; the derivatives are lambdified
once (cached per configuration) and evaluated at the spec. Elasticity e = (dT/dp) * p / T: +1 means the
time grows in proportion to p, -1 means doubling p halves it, 0 means p does not matter here.

Non-smooth terms: ``Max(a, b)`` differentiates to ``Heaviside(a - b)`` (the branch that is active; at an
exact tie the mean of the two one-sided derivatives, 1/2); ``ceiling`` (whole numbers of DMAs, ranks)
is piecewise constant, so its derivative is taken as 0 (its jumps are not a rate).

What-if lines re-evaluate the compiled model (not the linearization) with one change applied, for all
three optimizers: "4x host bandwidth: MA-SGD 2.7x faster, GA-SGD 3.0x, ADMM 1.1x".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import sympy

from ..calibration.result import CalibrationResult, load_calibration
from ..costmodel.evaluate import evaluate_point, family_pricing, workload_inputs
from ..costmodel.predict import capacity_check
from ..costmodel.registry import expressions
from ..costmodel.symbols import all_symbols
from ..phases import PHASES, VIEW_SOURCES, in_view, total
from ..specs import STUDY_OPTIMIZERS, HardwareSpec, Workload, optimizer_info
from ..specs.hardware import NUMERIC_FIELDS


@dataclass(frozen=True, slots=True)
class WhatIf:
    text: str
    changes: Callable[[HardwareSpec], dict[str, Any]]


WHAT_IFS: tuple[WhatIf, ...] = (
    WhatIf("4x host bandwidth", lambda h: {"push_bytes_per_s_per_rank": 4 * h.push_bytes_per_s_per_rank,
                                           "pull_bytes_per_s_per_rank": 4 * h.pull_bytes_per_s_per_rank,
                                           "broadcast_bytes_per_s_per_rank": 4 * h.broadcast_bytes_per_s_per_rank,
                                           # the shared host path's ceilings too: at 32 ranks they bind
                                           "push_saturation_bytes_per_s": 4 * h.push_saturation_bytes_per_s,
                                           "pull_saturation_bytes_per_s": 4 * h.pull_saturation_bytes_per_s}),
    WhatIf("linear rank scaling", lambda h: {"push_rank_growth": 1.0, "pull_rank_growth": 1.0,
                                             "push_saturation_bytes_per_s": 1e15,
                                             "pull_saturation_bytes_per_s": 1e15}),
    WhatIf("broadcast the global model", lambda h: {"broadcast_identical_pushes": 1}),
    WhatIf("4x host aggregation", lambda h: {"host_thread_bytes_per_s": 4 * h.host_thread_bytes_per_s,
                                             "host_memory_bytes_per_s": 4 * h.host_memory_bytes_per_s}),
    WhatIf("2x DPU clock", lambda h: {"dpu_clock_hz": 2 * h.dpu_clock_hz}),
    WhatIf("native 32/64-bit multiplier", lambda h: {"int32_mul_base_instructions": 1.0, "mul_step_instructions": 0.0,
                                                     "int64_mul_base_instructions": 4.0}),
    WhatIf("4x MRAM DMA bandwidth", lambda h: {"dma_read_cycles_per_byte": h.dma_read_cycles_per_byte / 4,
                                               "dma_write_cycles_per_byte": h.dma_write_cycles_per_byte / 4}),
    WhatIf("10x lower launch overhead", lambda h: {"launch_overhead_s": h.launch_overhead_s / 10}),
    WhatIf("ring links 8 GB/s, 0.5 us", lambda h: {"link_topology": "ring", "link_bytes_per_s": 8e9,
                                                   "link_latency_s": 0.5e-6}),
    WhatIf("all-to-all links 8 GB/s, 0.5 us", lambda h: {"link_topology": "all-to-all", "link_bytes_per_s": 8e9,
                                                         "link_latency_s": 0.5e-6}),
)


def _zero_ceiling_derivatives(expr: Any) -> Any:
    def is_step_derivative(e: Any) -> bool:
        if isinstance(e, sympy.Subs):
            e = e.expr
        return isinstance(e, sympy.Derivative) and isinstance(e.expr, sympy.ceiling | sympy.floor)

    zeroed = expr.replace(is_step_derivative, lambda e: sympy.Integer(0))
    return zeroed.replace(lambda e: isinstance(e, sympy.Subs), lambda e: e.doit())


def _frozen_steps_diff(expr: Any, sym: Any) -> Any:
    """d expr / d sym with every ``ceiling`` and ``floor`` held constant (the same rule as
    ``_zero_ceiling_derivatives``, applied before differentiating: nested steps, as in a chunk count of a column
    count, leave sympy's ``Subs`` of a step's derivative unsimplifiable)."""
    steps = sorted(expr.atoms(sympy.ceiling, sympy.floor), key=sympy.default_sort_key)
    frozen = {step: sympy.Dummy(f"step{i}") for i, step in enumerate(steps)}
    return sympy.diff(expr.xreplace(frozen), sym).xreplace({v: k for k, v in frozen.items()})


@lru_cache(maxsize=32)
def derivative_function(optimizer: str, model: str, layout: str, topology: str, view: str, kernels: str = "study",
                        pricing: Any = None
                        ) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...], Callable[..., list[Any]]]:
    """(phase, parameter) pairs, the input names, and one numpy function returning d phase / d parameter.
    ``pricing``: an architecture family's pricing module (``specs.architectures``; None: the optimizers' own
    equations on UPMEM-like hardware)."""
    if pricing is None:
        exprs = expressions(optimizer, model, layout, topology, kernels)
        symbols, numeric = all_symbols(), frozenset(NUMERIC_FIELDS)
    else:
        exprs, symbols, numeric = pricing.expressions(optimizer, model), pricing.inputs(), pricing.numeric_fields()
    keys, derivs = [], []
    for phase in PHASES:
        source = VIEW_SOURCES[view][phase]
        if source is None:
            continue
        e = exprs[source]
        for sym in sorted(e.free_symbols, key=lambda s: s.name):
            if sym.name in numeric:
                keys.append((phase, sym.name))
                derivs.append(_zero_ceiling_derivatives(sympy.diff(e, sym)) if pricing is None
                              else _frozen_steps_diff(e, sym))
    fn = sympy.lambdify(list(symbols.values()), derivs, modules="numpy", cse=True, docstring_limit=0)
    return tuple(keys), tuple(symbols), fn


def _epoch_s(w: Workload, hw: HardwareSpec, view: str, coefficients: Mapping[str, float]) -> float:
    return float(total(in_view(evaluate_point(w, hw, coefficients), view)))


def elasticities(w: Workload, hw: HardwareSpec, coefficients: Mapping[str, float], view: str = "wall"
                 ) -> dict[str, Any]:
    """Phase seconds and, per hardware parameter, the elasticity of the epoch time and of each phase."""
    keys, inputs, fn = derivative_function(w.optimizer, w.model, w.dataset.layout, hw.link_topology, view,
                                           w.kernels, family_pricing(hw))
    values = {**hw.numeric(), **coefficients, **workload_inputs(w)}
    with np.errstate(all="ignore"):
        derivs = [float(d) for d in fn(*(values[n] for n in inputs))]
    phases = {p: float(v) for p, v in in_view(evaluate_point(w, hw, coefficients), view).items()}
    epoch = sum(phases.values())
    per_param: dict[str, dict[str, float]] = {}
    for (phase, name), d in zip(keys, derivs, strict=True):
        p = values[name]
        row = per_param.setdefault(name, {ph: 0.0 for ph in PHASES})
        row[phase] = d * p / phases[phase] if phases[phase] > 0 else 0.0
        row["_epoch"] = row.get("_epoch", 0.0) + d * p / epoch
    rows: list[dict[str, Any]] = [{"parameter": name, "value": float(values[name]), "epoch": r.pop("_epoch"),
                                   "phases": r} for name, r in per_param.items()]
    rows.sort(key=lambda r: -abs(float(r["epoch"])))
    return {"phases_s": phases, "epoch_s": epoch, "elasticities": rows}


def what_if(w: Workload, hw: HardwareSpec, view: str, calibration: CalibrationResult) -> list[dict[str, Any]]:
    """Speedup of each optimizer (same dataset, model, DPUs) for each change in ``WHAT_IFS``."""
    out = []
    pricing = family_pricing(hw)
    scenarios = WHAT_IFS if pricing is None else tuple(WhatIf(text, f) for text, f in pricing.WHAT_IFS)
    for scenario in scenarios:
        changed = hw.replace(**scenario.changes(hw))
        speedups = {}
        for opt in STUDY_OPTIMIZERS:
            wo = w.with_(optimizer=opt, hyper=None)
            coefficients = calibration.coefficients_for(wo)
            speedups[opt] = _epoch_s(wo, hw, view, coefficients) / _epoch_s(wo, changed, view, coefficients)
        parts = [f"{optimizer_info(o).label} {s:.2f}x" for o, s in speedups.items()]
        out.append({"change": scenario.text, "speedup": speedups,
                    "text": f"{scenario.text}: {parts[0]} faster, {', '.join(parts[1:])}"})
    return out


def sensitivity(w: Workload, hw: HardwareSpec, view: str = "wall", calibration: CalibrationResult | None = None
                ) -> dict[str, Any]:
    """The sensitivity record of ``pimmodel sensitivity`` (``calibration``: None = the shipped one). A workload the
    hardware cannot run (more DPUs than it has, too little MRAM, links it lacks) is refused, as ``predict`` does."""
    capacity_check(hw)(w, hw)
    cal = calibration if calibration is not None else load_calibration(None)
    record = elasticities(w, hw, cal.coefficients_for(w), view)
    return {"hardware": hw.name, "workload": f"{w.dataset.name}/{w.model}/{w.optimizer}", "dpus": w.dpus,
            "scaling": w.scaling, "view": view, "link_topology": hw.link_topology, "calibration": cal.label,
            **record, "what_if": what_if(w, hw, view, cal)}
