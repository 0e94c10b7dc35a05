"""Every sympy symbol of the cost model's inputs, declared once with its assumptions and its LaTeX name.

Hardware symbols carry exactly the names of the numeric ``HardwareSpec`` fields, so a spec's ``numeric()``
dict is the compiled model's hardware input. Workload symbols describe the deployment; coefficients are the
data-dependent quantities that calibration fits to the emulator.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import sympy

from ..specs.hardware import FIELDS
from .coefficients import COEFFICIENT_DEFAULTS


class HardwareSymbols:
    """Attribute access ``hw.dpu_clock_hz`` etc.; usable wherever a HardwareSpec is (see primitives)."""

    def __init__(self) -> None:
        for f in FIELDS:
            # fields whose range includes 0 (a native unit's mul_step, the broadcast flag) are nonnegative
            setattr(self, f.name, sympy.Symbol(f.name, positive=f.low > 0 or None, nonnegative=True,
                                               integer=f.integer or None))

    def __getattr__(self, name: str) -> sympy.Symbol:  # only reached for unknown names (tells mypy the type)
        raise AttributeError(f"no hardware symbol {name!r}")

    def all(self) -> dict[str, sympy.Symbol]:
        return {f.name: getattr(self, f.name) for f in FIELDS}


@dataclass(frozen=True)
class WorkloadSymbols:
    dpus: sympy.Symbol
    tasklets: sympy.Symbol
    rows_per_dpu: sympy.Symbol
    """rows of the largest shard (the busiest DPU decides the epoch)."""
    local_batch: sympy.Symbol
    features: sympy.Symbol
    nonzeros: sympy.Symbol
    bytes_per_value: sympy.Symbol
    bias_slot: sympy.Symbol
    """sparse: index of the bias inside w (the update sweep covers [0, bias_slot]); dense: features."""
    local_epochs: sympy.Symbol
    """ADMM: local passes over the shard per global epoch (``task_epochs``); 1 for the others."""
    sync_every: sympy.Symbol
    """H: local steps between two global averages (local-sgd, hier-sgd); 1 for the others."""
    torus_rows: sympy.Symbol
    """rows of the 2-D torus the N DPUs form (``specs.optimizers.torus_shape``; used on torus links only)."""

    def all(self) -> dict[str, sympy.Symbol]:
        return _by_name(self)


@dataclass(frozen=True)
class Coefficients:
    """Data-dependent coefficients (defaults in ``COEFFICIENT_DEFAULTS``; fitted by calibration)."""

    svm_hit_fraction: sympy.Symbol
    sparse_write_fraction: sympy.Symbol

    def all(self) -> dict[str, sympy.Symbol]:
        return _by_name(self)


def _by_name(symbols: Any) -> dict[str, sympy.Symbol]:
    """Field name -> symbol of a dataclass of symbols."""
    return {f.name: getattr(symbols, f.name) for f in fields(symbols)}


HW = HardwareSymbols()
WL = WorkloadSymbols(*(sympy.Symbol(n, positive=True, integer=True) for n in
                       ("dpus", "tasklets", "rows_per_dpu", "local_batch", "features", "nonzeros",
                        "bytes_per_value", "bias_slot", "local_epochs", "sync_every", "torus_rows")))
COEF = Coefficients(*(sympy.Symbol(n, nonnegative=True) for n in COEFFICIENT_DEFAULTS))


def all_symbols() -> dict[str, sympy.Symbol]:
    """Name -> symbol for every input of the compiled model (hardware, workload, coefficients)."""
    return {**HW.all(), **WL.all(), **COEF.all()}


# ---------------------------------------------------------------- names a reader of the study knows
_LATEX: dict[str, str] = {
    # workload
    "dpus": "N", "tasklets": "T", "rows_per_dpu": r"m_{\mathrm{DPU}}", "local_batch": "b", "features": "d",
    "nonzeros": "z", "bytes_per_value": r"s_{x}", "bias_slot": r"j_{\mathrm{bias}}",
    "local_epochs": r"E_{\mathrm{local}}", "sync_every": "H", "torus_rows": r"N_{\mathrm{rows}}",
    # coefficients
    "svm_hit_fraction": r"h_{\mathrm{SVM}}", "sparse_write_fraction": r"w_{\mathrm{sparse}}",
    # hardware
    "dpu_clock_hz": "f", "revolver_interval_cycles": r"r_{\mathrm{rev}}", "dpus_per_rank": r"N_{\mathrm{rank}}",
    "barrier_instructions_per_tasklet": r"i_{\mathrm{barrier}}",
    "dma_read_latency_cycles": r"\alpha_{r}", "dma_write_latency_cycles": r"\alpha_{w}",
    "dma_read_cycles_per_byte": r"\beta_{r}", "dma_write_cycles_per_byte": r"\beta_{w}",
    "dma_engine_cycles_per_transfer": r"\epsilon_{\mathrm{DMA}}", "dma_max_bytes": r"S_{\max}",
    "push_bytes_per_s_per_rank": r"B_{\mathrm{push}}", "pull_bytes_per_s_per_rank": r"B_{\mathrm{pull}}",
    "broadcast_bytes_per_s_per_rank": r"B_{\mathrm{bcast}}", "broadcast_identical_pushes": r"\phi_{\mathrm{bcast}}",
    "serial_to_pim_bytes_per_s": r"B_{\mathrm{ser,in}}", "serial_from_pim_bytes_per_s": r"B_{\mathrm{ser,out}}",
    "launch_per_rank_s": r"t_{\mathrm{rank}}",
    "push_rank_growth": r"g_{\mathrm{push}}", "pull_rank_growth": r"g_{\mathrm{pull}}",
    "push_saturation_bytes_per_s": r"B_{\mathrm{sat,in}}", "pull_saturation_bytes_per_s": r"B_{\mathrm{sat,out}}",
    "transfer_call_overhead_s": r"t_{\mathrm{call}}",
    "launch_overhead_s": r"t_{\mathrm{launch}}", "host_thread_bytes_per_s": r"B_{\mathrm{thread}}",
    "host_memory_bytes_per_s": r"B_{\mathrm{mem}}", "host_cores": r"P_{\mathrm{host}}",
    "thread_start_s": r"t_{\mathrm{thread}}", "link_bytes_per_s": r"B_{\mathrm{link}}",
    "link_latency_s": r"t_{\mathrm{link}}", "int64_mul_base_instructions": r"i_{\mathrm{mul64}}",
    "int32_mul_base_instructions": r"i_{\mathrm{mul32}}",
    "mul_step_instructions": r"i_{\mathrm{mulstep}}",
    "chips_per_rank": r"N_{\mathrm{chip}}", "transfer_threads": r"P_{\mathrm{xfer}}",
    "push_line_dpu_s_per_byte": r"c_{\mathrm{line,in}}", "pull_line_dpu_s_per_byte": r"c_{\mathrm{line,out}}",
    "pull_call_extra_s": r"t_{\mathrm{pull}}", "wram_call_overhead_s": r"t_{\mathrm{wram}}",
    "wram_word_s": r"t_{\mathrm{word}}",
}


def latex_name(name: str) -> str:
    """The LaTeX name of an input symbol: a short one where the study has one, else the spec's key."""
    if name in _LATEX:
        return _LATEX[name]
    if name.endswith("_instructions"):  # int64_add_instructions -> i_{int64 add}
        return r"i_{\mathrm{" + name[: -len("_instructions")].replace("_", r"\ ") + "}}"
    return r"\mathrm{" + name.replace("_", r"\_") + "}"


def latex_names() -> dict[sympy.Symbol, str]:
    """Symbol -> LaTeX name for every input (``sympy.latex(..., symbol_names=...)``)."""
    return {sym: latex_name(name) for name, sym in all_symbols().items()}
