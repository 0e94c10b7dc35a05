"""The bank-simd family's pricing: an optimizer's epoch (its ``EquationSet``: rounds, local steps, samples, the
host's transfer calls per round) priced with bank-level SIMD PIM's events (``specs.bank_simd``).

What runs where (the kernel mapping is ours, an assumption stated in every record; no public training kernel
exists for this family): a unit holds its shard's rows (FP16, d values each) in its banks. Per local step of b rows
it runs two kernels, because the units cannot finish a dot product (no reduction across lanes) nor evaluate the
sigmoid or the hinge test:

1. **forward**: per row ``D_L = ceil(d / L)`` MAC commands, each one column (L values) of the row times the same
   column of w held in the GRF_A registers, accumulating L lane partials in one GRF_B register; w is loaded into
   GRF_A one chunk of G = ``grf_registers`` columns at a time for a group of G rows (``D_L / G`` loads per row);
   the host reads each row's L partials (``L x 2 B``), sums them and computes the error e_i;
2. **backward**: the host writes the step's b errors into the unit's bank; per chunk of G gradient columns held in
   GRF_B, per row one MAD per column (``D_L`` per row), the errors entering the SRF S at a time; the finished
   chunk is written back (``D_L`` commands per step), and, where the optimizer updates on the PIM side (MA-SGD,
   ADMM, local SGD), ``2 D_L`` more per update (read w and scale-add, write w).

Every command is one ``command_s`` (tCCD_L) for all units of a pseudo-channel at once; each row of ``row_bytes`` a
kernel streams from a bank costs one all-bank activate (``row_cycle_s``), ``activation_exposed`` of it not hidden
behind the commands to the unit's other bank (data movement inside the memory: the ``mram_wram_dma`` phase of the
shared vocabulary). Each kernel pays the mode
switch, its program (``program_commands`` writes) and one host call. The optimizer's own transfer calls keep their
values but move FP16 (half the study's int32 bytes); a buffer identical for every unit is written once per
pseudo-channel (all-bank write), distinct buffers once per unit. The host aggregation streams every byte it
receives and sends once at ``host_reduce_bytes_per_s``.
"""

from __future__ import annotations

import contextlib
from functools import cache
from typing import Any

import sympy

from ..kernels.study import PROFILE as K
from ..kernels.study import SAMPLE, UPDATE, ZERO
from ..phases import EXPOSED_DMA, INSTRUMENTED_COMPUTE, INSTRUMENTED_DMA
from ..specs.bank_simd import FIELDS, VALUE_BYTES
from .symbols import COEF, WL
from .terms import Terms

MAPPING_NOTE = ("bank-simd kernel mapping (an assumption: no public training kernel exists): the host sums each "
                "row's lane partials and computes the error between a forward and a backward kernel per local step; "
                "FP16 values throughout")


class BankSymbols:
    """``BS.lanes`` etc.: one sympy symbol per numeric field of ``BankSimdSpec``."""

    def __init__(self) -> None:
        for f in FIELDS:
            setattr(self, f.name, sympy.Symbol(f.name, positive=f.low > 0 or None, nonnegative=True,
                                               integer=f.integer or None))

    def __getattr__(self, name: str) -> sympy.Symbol:
        raise AttributeError(f"no bank-simd hardware symbol {name!r}")

    def all(self) -> dict[str, sympy.Symbol]:
        return {f.name: getattr(self, f.name) for f in FIELDS}


BS = BankSymbols()


def inputs() -> dict[str, sympy.Symbol]:
    """Every input of the family's compiled model: its hardware fields, the workload symbols, the coefficients."""
    return {**BS.all(), **WL.all(), **COEF.all()}


def _counts(optimizer: str, model: str) -> tuple[Any, dict[str, sympy.Expr]]:
    """(the optimizer's equation set on the study's dense kernels, occurrences per epoch by section name)."""
    from .registry import equation_set

    eq = equation_set(optimizer, model, "dense", "none", "study")
    counts = {s.name: eq.terms.expand(s.count) for s in eq.sections}
    return eq, counts


def outputs(optimizer: str, model: str) -> tuple[Terms, dict[str, sympy.Expr]]:
    """(terms, outputs): the optimizer's epoch on bank-simd hardware, every phase over named terms (the module
    docstring), plus rounds and bytes, with the keys an ``EquationSet`` gives."""
    eq, counts = _counts(optimizer, model)
    t = Terms()
    N, L, G, S = WL.dpus, BS.lanes, BS.grf_registers, BS.srf_registers
    rounds = t.define("R", eq.terms.expand(eq.rounds), "host rounds per epoch (the optimizer's)")
    rows = t.define("n_rows", counts[SAMPLE], "rows each unit passes per epoch (the optimizer's samples)")
    steps = t.define("n_steps", counts[ZERO], "local steps per unit per epoch (one forward and one backward "
                     "kernel each)")
    updates = t.define("n_updates", counts.get(UPDATE, sympy.Integer(0)), "model updates on the PIM side per "
                       "epoch (0 where the host updates: GA-SGD)")
    d_l = t.define("D_L", sympy.ceiling(WL.features / L), "columns of one row (L FP16 values each)")
    forward = t.define("c_fwd", d_l + d_l / G, "forward commands per row: one MAC per column, w loaded into GRF_A "
                       "once per group of G rows")
    backward = t.define("c_bwd", d_l + sympy.ceiling(d_l / G) / S, "backward commands per row: one MAD per column, "
                        "the errors entering the SRF S at a time, once per gradient chunk")
    per_step = t.define("c_step", d_l, "commands per step: write the finished gradient chunks back")
    per_update = t.define("c_update", 2 * d_l, "commands per update on the PIM side: read w and scale-add, write w")
    commands = t.define("n_cmd", rows * (forward + backward) + steps * per_step + updates * per_update,
                        "PIM commands per epoch (every unit of a pseudo-channel at once)")
    streamed = t.define("b_bank", VALUE_BYTES * WL.features * (2 * rows + 2 * updates) + VALUE_BYTES * L * steps,
                        "bytes one unit streams from its banks per epoch (each row twice, w and the gradient "
                        "per update)")
    activations = t.define("n_act", sympy.ceiling(streamed / BS.row_bytes), "all-bank row activations per epoch")
    kernels = t.define("n_kernels", 2 * steps, "kernels per epoch: a forward and a backward one per local step")
    # host transfers: the optimizer's calls in FP16, and the per-row partials and errors of the split kernel
    scale = sympy.Rational(VALUE_BYTES, K.value_bytes)
    channels = t.define("N_ch", sympy.ceiling(N / BS.units_per_channel), "pseudo-channels the N units occupy")
    def one_call_s(c: Any, b: sympy.Expr) -> sympy.Expr:
        """One host call of ``c`` moving ``b`` bytes to or from each unit (an identical buffer is written once per
        pseudo-channel)."""
        if not c.to_pim:
            return BS.host_call_s + N * b / BS.host_read_bytes_per_s
        written = channels if c.mode in ("identical", "broadcast") else N
        return BS.host_call_s + written * b / BS.host_write_bytes_per_s

    push_bytes, pull_bytes, push_s, pull_s = [], [], [], []
    for c in eq.calls_per_round:
        b = eq.terms.expand(c.bytes_per_dpu) * scale * c.calls
        if c.to_pim:
            push_bytes.append(N * b)
            push_s.append(t.define(f"t_{c.name}_push", one_call_s(c, b), f"write {c.name} ({c.mode}) to the units "
                                   "(FP16)"))
        else:
            pull_bytes.append(N * b)
            pull_s.append(t.define(f"t_{c.name}_pull", one_call_s(c, b), f"read {c.name} from every unit (FP16)"))
    # the optimizer's calls counted per epoch, not per round (hier-sgd's pushes: its rank averages R - R_H
    # times, the global one R_H times)
    epoch_push_bytes: list[sympy.Expr] = []
    epoch_pull_bytes: list[sympy.Expr] = []
    epoch_push_s: list[sympy.Expr] = []
    epoch_pull_s: list[sympy.Expr] = []
    for c in eq.epoch_calls:
        b = eq.terms.expand(c.bytes_per_dpu) * scale
        count = eq.terms.expand(c.calls)
        verb, direction, way = ("write", "push", "to") if c.to_pim else ("read", "pull", "from")
        (epoch_push_bytes if c.to_pim else epoch_pull_bytes).append(count * N * b)
        (epoch_push_s if c.to_pim else epoch_pull_s).append(
            t.define(f"t_{c.name}_{c.mode}_{direction}_epoch", count * one_call_s(c, b),
                     f"{verb} {c.name} ({c.mode}) {way} the units, {sympy.sstr(count)} times per epoch (FP16)"))
    partials = t.define("b_partials", VALUE_BYTES * L * rows, "bytes of lane partials one unit returns per epoch")
    errors = t.define("b_errors", VALUE_BYTES * rows, "bytes of errors the host writes to one unit per epoch")
    t_partials = t.define("t_partials", steps * BS.host_call_s + N * partials / BS.host_read_bytes_per_s,
                          "read every row's lane partials (one call per step)")
    t_errors = t.define("t_errors", steps * BS.host_call_s + N * errors / BS.host_write_bytes_per_s,
                        "write every row's error (distinct per unit; one call per step)")
    to_pim_bytes = rounds * sympy.Add(*push_bytes) + sympy.Add(*epoch_push_bytes) + N * errors
    from_pim_bytes = rounds * sympy.Add(*pull_bytes) + sympy.Add(*epoch_pull_bytes) + N * partials
    aggregate = t.define("t_host", (to_pim_bytes + from_pim_bytes) / BS.host_reduce_bytes_per_s,
                         "host: one stream over every byte it receives (sums, errors) and sends")
    per_kernel = t.define("t_kernel", BS.mode_switch_s + BS.program_commands * BS.command_s + BS.host_call_s,
                          "one kernel: mode switch, its program, one host call")
    compute = commands * BS.command_s
    inside = activations * BS.row_cycle_s * BS.activation_exposed
    zero = sympy.Integer(0)
    out = {
        "dpu_compute": compute,
        "mram_wram_dma": inside,
        EXPOSED_DMA: inside,
        INSTRUMENTED_COMPUTE: compute,
        INSTRUMENTED_DMA: inside,
        "host_to_pim": rounds * sympy.Add(*push_s) + sympy.Add(*epoch_push_s) + t_errors,
        "pim_to_host": rounds * sympy.Add(*pull_s) + sympy.Add(*epoch_pull_s) + t_partials,
        "host_aggregate": aggregate,
        "launch": kernels * per_kernel,
        "rounds": rounds,
        "bytes_host_to_pim": to_pim_bytes,
        "bytes_pim_to_host": from_pim_bytes,
        "link": zero,
        "bytes_link": zero,
        "bytes_mram_to_wram": N * streamed,
        "bytes_wram_to_mram": N * VALUE_BYTES * WL.features * (steps + updates),
        "dmas_read": activations,
        "dmas_write": zero,
    }
    return t, out


def equations(optimizer: str, model: str) -> tuple[Terms, dict[str, sympy.Expr]]:
    """What ``pimmodel equations`` shows for this family (the readable form of ``outputs``)."""
    return outputs(optimizer, model)


@cache
def expressions(optimizer: str, model: str) -> dict[str, sympy.Expr]:
    """Every output as a full expression of the inputs (what ``sensitivity`` differentiates)."""
    terms, outs = outputs(optimizer, model)
    return {k: terms.expand(v) for k, v in outs.items()}


def numeric_fields() -> frozenset[str]:
    """The hardware inputs (a sensitivity's parameters)."""
    return frozenset(f.name for f in FIELDS)


WHAT_IFS: tuple[tuple[str, Any], ...] = (
    ("2x lanes per unit", lambda h: {"lanes": 2 * h.lanes}),
    ("2x command rate (tCCD_L / 2)", lambda h: {"command_s": h.command_s / 2}),
    ("4x host read and write bandwidth", lambda h: {"host_read_bytes_per_s": 4 * h.host_read_bytes_per_s,
                                                    "host_write_bytes_per_s": 4 * h.host_write_bytes_per_s}),
    ("4x host aggregation", lambda h: {"host_reduce_bytes_per_s": 4 * h.host_reduce_bytes_per_s}),
    ("free mode switch", lambda h: {"mode_switch_s": 0.0}),
    ("4x register file", lambda h: {"grf_registers": 4 * h.grf_registers, "srf_registers": 4 * h.srf_registers}),
)
"""The family's what-if lines in ``pimmodel sensitivity`` (text, changes of a spec)."""


@cache
def compiled(optimizer: str, model: str) -> Any:
    """The compiled model of (optimizer, model) on bank-simd hardware (the same generated-source path as the
    UPMEM-like family's, cached on disk under the same source hash)."""
    from ..resources import cache_dir
    from .compile import CompiledModel, _load, _read, source_key, write_source
    from .compile import _file as path_of

    key = ("bank-simd", optimizer, model, "dense", "study")
    folder = cache_dir("compiled") / source_key()
    found = _read(path_of(folder, key))
    if found is None:
        from .codegen import source_of

        terms, outs = outputs(optimizer, model)
        found = source_of("/".join(key), terms, outs, inputs())
        with contextlib.suppress(OSError):  # a read-only home only costs speed
            write_source(folder, key, *found)
    ins, outs_, source = found
    return CompiledModel(key, ins, outs_, *_load(source))


def evaluate(w: Any, values: Any, coefficients: Any, workload: Any = None, outputs: Any = None
             ) -> dict[str, Any]:
    """Raw per-epoch outputs of ``w`` on bank-simd hardware ``values`` (its numeric fields: numbers, or arrays of
    design points), ``workload`` overriding workload inputs: the family's ``evaluate`` (``specs.architectures``)."""
    from .evaluate import workload_inputs

    model = compiled(w.optimizer, w.model)
    return model({**dict(values), **dict(coefficients), **workload_inputs(w), **dict(workload or {})},  # type: ignore[no-any-return]
                 outputs)


def evaluate_point(w: Any, hw: Any, coefficients: Any) -> dict[str, float]:
    """``evaluate`` at one design point (the scalar function)."""
    from .evaluate import workload_inputs

    model = compiled(w.optimizer, w.model)
    return model.scalar({**hw.numeric(), **dict(coefficients), **workload_inputs(w)})


def memory_excess(w: Any, values: Any) -> Any:
    """``needed / available - 1`` per design point (arrays of the family's numeric fields; <= 0 fits): a unit's
    FP16 shard, model and gradient (``kernels.bank_simd.unit_bytes``) in its ``banks_per_unit`` banks, and ``w``'s
    units in the system's."""
    import numpy as np

    from ..kernels.bank_simd import unit_bytes

    capacity = np.asarray(values["banks_per_unit"], dtype=float) * np.asarray(values["bank_bytes"], dtype=float)
    units = (np.asarray(values["stacks"], dtype=float) * np.asarray(values["pim_channels_per_stack"], dtype=float)
             * np.asarray(values["units_per_channel"], dtype=float))
    return np.maximum(unit_bytes(w) / capacity, w.dpus / units) - 1.0


def record_extra(w: Any, hw: Any) -> dict[str, Any]:
    """What a prediction record on this family says besides the phases: the family, the arithmetic it priced and
    the kernel mapping it assumed."""
    from ..specs.architectures import architecture_of

    info = architecture_of(hw)
    return {"family": info.name, "unit": info.unit, "datatype": info.datatypes, "family_note": MAPPING_NOTE,
            "phase_labels": PHASE_LABELS}


PHASE_LABELS = {"dpu_compute": "PIM commands", "mram_wram_dma": "row activations",
                "launch": "kernels + mode switch"}
"""The shared phases as this family's tables name them."""
