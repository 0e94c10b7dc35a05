"""Terms shared by the optimizers' equation sets, written over named intermediate terms.

A DPU's work per epoch is a list of kernel ``Section``s (``pimmodel.kernels.vocabulary``: operation counts,
DMAs, barriers), each run ``count`` times per epoch, following the study's kernels (``kernels.study``); the
host side is a list of transfer calls per round and the parameter server's reduction. ``EquationSet.outputs``
prices them with ``kernels.pricing`` (the same path that prices the emulator's traces and the PrIM kernels)
and writes every phase as a short sum over per-section terms::

    dpu_compute   = sum_s n_s * C_s / f          (C_s: compute cycles of one occurrence of section s)
    mram_wram_dma = sum_s n_s * M_s / f          (M_s: its DMA cycles; the wall view charges X_s instead)
    host_to_pim   = R * sum(t_push) ;  pim_to_host = R * sum(t_pull) ;  launch = L * t_launch

Exchanges over direct DPU links (hypothetical hardware) are ``LinkOp``s counted per epoch, priced by
``kernels.pricing.link_halves_s``: the gather half adds to ``pim_to_host``, the distribute half to ``host_to_pim``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy
from sympy import Expr

from .. import primitives as P
from ..kernels import pricing
from ..kernels.study import (
    ERROR,
    INSTRUMENTED,
    LAUNCH,
    SAMPLE,
    SECTION_DOCS,
    STEP,
    STEP_READS,
    UPDATE,
    ZERO,
    is_parallel,
)
from ..kernels.study import PROFILE as K
from ..kernels.vocabulary import Dma, HostCall, LinkOp, Section, Work, blocks, op_instructions
from ..phases import EXPOSED_DMA, INSTRUMENTED_COMPUTE, INSTRUMENTED_DMA
from .symbols import COEF, HW, WL
from .terms import Terms

T = WL.tasklets
N = WL.dpus
D = WL.features
ZERO_EXPR = sympy.Integer(0)


@dataclass(frozen=True)
class Exchange:
    """What one round's averaging step moves and computes when it runs as an all-reduce over direct DPU
    links (``interconnect.py``)."""

    vector_bytes: Expr
    """bytes per DPU entering the all-reduce (w, a gradient, or w + u), bias included."""
    element_bytes: int
    update_passes: int
    """sweeps over d each DPU makes after the all-reduce (the host's former update work)."""


@dataclass(frozen=True)
class EquationSet:
    """Everything one optimizer x model x layout costs per epoch, over the named ``terms``."""

    terms: Terms
    sections: tuple[Section, ...]
    rounds: Expr
    """host <-> PIM rounds per epoch (each pays the per-round transfer calls)."""
    launches: Expr
    calls_per_round: tuple[HostCall, ...]
    host_aggregate_s: Expr = ZERO_EXPR
    """per epoch."""
    exchange: Exchange | None = None
    """The averaging step as an all-reduce over direct DPU links, if the hardware has them: set by an equation set
    that leaves its link variant to the registry (``interconnect.linked``); None for one that handles the link
    topology itself."""
    link_ops: tuple[tuple[Expr, LinkOp], ...] = ()
    """(occurrences per epoch, exchange over direct DPU links)."""
    epoch_calls: tuple[HostCall, ...] = ()
    """host transfer calls counted per epoch (``HostCall.calls``), besides the per-round ones."""

    # ------------------------------------------------------------ per-epoch outputs
    def outputs(self) -> tuple[Terms, dict[str, Expr]]:
        """(terms, outputs): every phase per epoch in seconds written over named terms, plus
        ``mram_wram_dma_exposed`` (wall view), ``rounds``, ``bytes_*``, ``dmas_*``, ``link`` and ``bytes_link``."""
        t = self.terms.copy()
        f = HW.dpu_clock_hz
        barrier = P.barrier_cycles(T, HW)
        c_barrier = t.define("c_barrier", barrier, "cycles of one barrier_wait (every tasklet under the lock)")
        compute, dma, exposed, instrumented_compute, instrumented_dma = [], [], [], [], []
        for s in self.sections:
            doc = SECTION_DOCS[s.name]
            n = t.define(f"n_{s.name}", s.count, f"occurrences per epoch of: {doc}")
            c = t.define(f"C_{s.name}", pricing.compute_cycles(s.work, s.parallel, T, HW).subs(barrier, c_barrier),
                         f"compute cycles of one occurrence of: {doc}")
            m = t.define(f"M_{s.name}", pricing.dma_cycles(s.work, HW), f"DMA cycles of one occurrence of: {doc}")
            x = t.define(f"X_{s.name}", pricing.exposed_dma_cycles(True, c, m, HW),
                         "DMA cycles not hidden behind compute") if s.parallel and m != 0 else m
            compute += [n * c] if c != 0 else []
            dma += [n * m] if m != 0 else []
            exposed += [n * x] if x != 0 else []
            ic, ir, iw = (sympy.sympify(v).subs(barrier, c_barrier) for v in
                          pricing.instrumented_cycles(s.work, s.parallel, INSTRUMENTED[s.name], T, HW))
            if ic != 0:
                instrumented_compute.append(n * t.define(f"Ci_{s.name}", ic, f"instrumented compute cycles: {doc}"))
            if ir + iw != 0:
                instrumented_dma.append(n * t.define(f"Mi_{s.name}", ir + iw, f"instrumented DMA cycles (timed "
                                                     f"barriers included): {doc}"))
        push = [t.define(f"t_{c.name}_push", c.calls * exchange_s(c, True),
                         f"one transfer of {c.name} to every DPU ({c.mode})")
                for c in self.calls_per_round if c.to_pim]
        pull = [t.define(f"t_{c.name}_pull", c.calls * exchange_s(c, False),
                         f"one transfer of {c.name} from every DPU ({c.mode})")
                for c in self.calls_per_round if not c.to_pim]
        epoch_push, epoch_pull = self._epoch_calls(t)
        gather, distribute, link_bytes = self._links(t)
        r = self.rounds
        out = {
            "dpu_compute": sympy.Add(*compute) / f,
            "mram_wram_dma": sympy.Add(*dma) / f,
            EXPOSED_DMA: sympy.Add(*exposed) / f,
            INSTRUMENTED_COMPUTE: sympy.Add(*instrumented_compute) / f,
            INSTRUMENTED_DMA: sympy.Add(*instrumented_dma) / f,
            "host_to_pim": r * sympy.Add(*push) + epoch_push + distribute,
            "pim_to_host": r * sympy.Add(*pull) + epoch_pull + gather,
            "host_aggregate": self.host_aggregate_s,
            "launch": self.launches * P.launch_s(HW, N),
            "rounds": r,
            "bytes_host_to_pim": (r * pricing.host_calls_bytes(self.calls_per_round, N, True)
                                  + pricing.host_calls_bytes(self.epoch_calls, N, True)),
            "bytes_pim_to_host": (r * pricing.host_calls_bytes(self.calls_per_round, N, False)
                                  + pricing.host_calls_bytes(self.epoch_calls, N, False)),
            "link": gather + distribute,
            "bytes_link": N * link_bytes,
        }
        for key, direction in (("mram_to_wram", "read"), ("wram_to_mram", "write")):
            totals = [(s.count, *s.work.dma_totals(direction)) for s in self.sections]
            out[f"bytes_{key}"] = N * sympy.Add(*(n * b for n, _, b in totals))
            out[f"dmas_{direction}"] = sympy.Add(*(n * k for n, k, _ in totals))
        return t, out

    def _epoch_calls(self, t: Terms) -> tuple[Expr, Expr]:
        """Per epoch: (seconds to the PIM side, seconds from it) of the calls counted per epoch."""
        out = []
        for to_pim, verb in ((True, "push"), (False, "pull")):
            out.append(sympy.Add(*(c.calls * t.define(f"t_{c.name}_{c.mode}_{verb}", exchange_s(c, to_pim),
                                                      f"one {c.mode} transfer of {c.name} "
                                                      f"{'to' if to_pim else 'from'} every DPU")
                                   for c in self.epoch_calls if c.to_pim == to_pim)))
        return out[0], out[1]

    def _links(self, t: Terms) -> tuple[Expr, Expr, Expr]:
        """Per epoch: (gather seconds, distribute seconds, bytes one DPU sends) of the exchanges over links."""
        gather, distribute, sent = [], [], []
        for n, op in self.link_ops:
            g, d = pricing.link_halves_s(op, HW)
            name = f"{op.kind}_{op.algorithm}".replace("-", "_")
            if g != 0:
                gather.append(n * t.define(f"t_{name}_gather", g, f"the gather half (reduce-scatter) of one {op.kind} "
                                           f"over {op.algorithm} links"))
            distribute.append(n * t.define(f"t_{name}_distribute", d, f"the distribute half of one {op.kind} "
                                           f"over {op.algorithm} links"))
            sent.append(n * pricing.link_bytes_per_dpu(op))
        return sympy.Add(*gather), sympy.Add(*distribute), sympy.Add(*sent)

    def phase_expressions(self) -> dict[str, Expr]:
        """The outputs as full expressions of the model's inputs (what is compiled)."""
        terms, out = self.outputs()
        return {k: terms.expand(v) for k, v in out.items()}


def exchange_s(call: HostCall, to_pim: bool) -> Expr:
    """One host transfer call of an optimizer's exchange, as the host-mediated collective it is
    (``primitives.host_broadcast_s``: an identical push; ``host_gather_s``: a parallel pull of every DPU's vector;
    ``host_scatter_s``: a parallel push of distinct buffers), else the transfer itself."""
    if call.memory == "mram" and call.mode == ("identical" if to_pim else "parallel"):
        return P.host_broadcast_s(call.bytes_per_dpu, N, HW) if to_pim else P.host_gather_s(call.bytes_per_dpu, N, HW)
    if call.memory == "mram" and call.mode == "parallel":
        return P.host_scatter_s(call.bytes_per_dpu, N, HW)
    return P.host_transfer_s(call.bytes_per_dpu, N, HW, to_pim, call.mode)


# ---------------------------------------------------------------- building blocks
def parallel(name: str, count: Expr, instructions_per_tasklet: Expr, dmas: tuple[Dma, ...] = (),
             barriers: Expr | int = 0, timed: dict[str, Expr] | None = None) -> Section:
    """A section all T tasklets run, each issuing ``instructions_per_tasklet``; ``timed``: the barriers the
    benchmark builds add inside its DMA timers, per direction (``Work.timed_barriers``)."""
    return Section(name, True, count, Work({"instructions": T * instructions_per_tasklet}, {}, dmas, barriers,
                                           timed or {}))


def serial(name: str, count: Expr, instructions: Expr | int = 0, dmas: tuple[Dma, ...] = (),
           barriers: Expr | int = 0) -> Section:
    """A section one tasklet runs alone (the others wait at a barrier)."""
    assert not is_parallel(name)
    return Section(name, False, count, Work({"instructions": instructions} if instructions else {}, {}, dmas,
                                            barriers))


def lockstep(direction: str, transfers_per_tasklet: Expr, bytes_each: Expr) -> Dma:
    """All T tasklets issue ``transfers_per_tasklet`` DMAs each, in lockstep bursts of T."""
    return Dma(direction, bytes_each, T, transfers_per_tasklet * T)


def ops(**counts: Expr | int) -> Expr:
    """Instructions of a mix of operation classes on the symbolic hardware (``kernels.vocabulary``)."""
    return sympy.Add(*(n * op_instructions(op, HW) for op, n in counts.items()))


# ---------------------------------------------------------------- DPU serial section (tasklet 0)
def error_section(t: Terms, model: str, count: Expr) -> Section:
    """Tasklet 0 between the two per-sample barriers: reduce partial dot products, then the LR sigmoid
    (LUT exp with soft-float, one 8-B MRAM LUT read, a double divide) or the SVM margin test."""
    reduce = T * (ops(int64_add=1) + K.reduce_instructions_per_tasklet)
    if model == "svm":
        work = t.define("I_error", reduce + K.svm_margin_instructions,
                        "instructions of tasklet 0 per sample: reduce T partial dot products, margin test")
        return serial(ERROR, count, work, barriers=K.barriers_per_sample)
    sigmoid = t.define("i_sigmoid", ops(**dict(K.sigmoid_ops)) + K.sigmoid_integer_instructions,
                       "instructions of the LUT sigmoid (soft-float calls and integer bookkeeping)")
    work = t.define("I_error", reduce + sigmoid,
                    "instructions of tasklet 0 per sample: reduce T partial dot products, sigmoid")
    return serial(ERROR, count, work, (Dma("read", sympy.Integer(K.lut_read_bytes), 1, 1),),
                  barriers=K.barriers_per_sample)


# ---------------------------------------------------------------- dense (YFCC-like) kernels
def dense_blocks(t: Terms) -> tuple[Expr, Expr]:
    """(DMAs, bytes each) per tasklet to move its slice of w or of the accumulators in 512-B blocks."""
    n, each = blocks(D / T * K.value_bytes, K.dense_block_bytes)
    n = t.define("n_blk", n, "DMAs per tasklet for its slice of w (or of the accumulators), in blocks of "
                 f"{K.dense_block_bytes} B")
    return n, t.define("s_blk", D / T * K.value_bytes / n, "bytes of one w / accumulator block DMA")


def dense_sample(t: Terms, model: str, count: Expr, kernels: str = "study") -> Section:
    """Per sample, every tasklet: dot product over its d/T features, then the gradient term into the int32
    accumulators. DMAs: the X slice, w blocks, accumulator blocks read and written. The corrected SVM kernel
    shifts the feature widened to int64 (the study's casts it to a signed int32)."""
    d_t = D / T
    i_dot = t.define("i_dot", ops(mul64=1, int64_shift=1, int64_add=1)
                     + K.dot_loop_instructions, "instructions per feature of the dot product x_ij * w_j")
    if model == "lr":
        i_grad = t.define("i_grad", ops(mul64=1, int64_shift=1, int32_add=1)
                          + K.grad_lr_loop_instructions, "instructions per feature of the LR gradient x_ij * e_i")
    else:
        shift = ops(int32_shift=1) if kernels == "study" else ops(int64_shift=1)
        i_grad = t.define("i_grad", shift + K.grad_svm_loop_instructions
                          + COEF.svm_hit_fraction * (ops(int32_add=1) + K.grad_svm_hit_instructions),
                          "instructions per feature of the SVM gradient (margin hits add the term)")
    work = t.define("I_sample", d_t * (i_dot + i_grad) + K.sample_overhead_instructions,
                    "instructions per tasklet per sample")
    x_n, x_bytes = blocks(d_t * WL.bytes_per_value, HW.dma_max_bytes)
    x_n = t.define("n_x", x_n, "DMAs per tasklet for its X slice of one sample (at most S_max bytes each)")
    x_bytes = t.define("s_x", d_t * WL.bytes_per_value / x_n, "bytes of one X-slice DMA")
    blk_n, blk_bytes = dense_blocks(t)
    dmas = (lockstep("read", x_n, x_bytes), lockstep("read", 2 * blk_n, blk_bytes),  # X; w, then accumulators
            lockstep("write", blk_n, blk_bytes))
    # benchmark builds: a timed barrier after each of these DMAs (benchmark_LR/dpu/task.c:229, 244, 306, 330)
    return parallel(SAMPLE, count, work, dmas, timed={"read": x_n + 2 * blk_n, "write": blk_n})


def dense_zero(t: Terms, count: Expr) -> Section:
    """Start of a local step: every tasklet zeroes its int32 accumulator slice in MRAM (the WRAM block is
    re-zeroed before each of its DMAs, so every accumulator element costs one zeroing iteration)."""
    d_t = D / T
    blk_n, blk_bytes = dense_blocks(t)
    work = t.define("I_zero", K.zero_loop_instructions * d_t + K.step_overhead_instructions,
                    "instructions per tasklet to start a local step (zero the accumulators)")
    return parallel(ZERO, count, work, (lockstep("write", blk_n, blk_bytes),), timed={"write": blk_n})  # :184


def dense_update(t: Terms, count: Expr, admm: bool) -> Section:
    """End of a local step: w <- clamp(w - D(a >> log2 b) - D((w [+ c]) >> (l + r))) per weight."""
    d_t = D / T
    i_upd = t.define("i_update", ops(int32_shift=1, int64_shift=1, int64_add=2) + K.update_loop_instructions
                     + (K.admm_update_extra_instructions if admm else 0), "instructions per weight of the update")
    blk_n, blk_bytes = dense_blocks(t)
    reads = 3 if admm else 2  # w, accumulators [, c = u - z]
    dmas = (lockstep("read", reads * blk_n, blk_bytes), lockstep("write", blk_n, blk_bytes))
    # benchmark builds: per block one timed barrier after its reads and one after its write (:373, :414)
    return parallel(UPDATE, count, d_t * i_upd, dmas, timed={"read": blk_n, "write": blk_n})


def step_reads(count: Expr, layout: str, update: bool) -> Section:
    """Small reads once per local step: tasklet 0's labels (dense MA / ADMM: the whole local batch in one
    DMA; otherwise fixed blocks, ``kernels.study.label_block_bytes``) and, sparse, tasklet T-1's read of the
    bias weight at the step's first sample."""
    block = K.label_block_bytes(layout, update)
    if block == 0:
        n, each = blocks(8 * sympy.ceiling(WL.local_batch * K.label_bytes / 8), HW.dma_max_bytes)
    else:
        n, each = sympy.ceiling(WL.local_batch / (block // K.label_bytes)), sympy.Integer(block)
    dmas = [Dma("read", each, 1, n)]
    if layout == "sparse":
        dmas.append(Dma("read", sympy.Integer(K.sparse_access_bytes), 1, 1))
    return serial(STEP_READS, count, dmas=tuple(dmas))


# ---------------------------------------------------------------- sparse (Criteo-like) kernels
def sparse_split() -> tuple[Expr, Expr, Expr]:
    """(q_hi, q_lo, r): the z active slots split over T tasklets, r = z mod T tasklets take q_hi =
    ceil(z/T) slots and the others q_lo = floor(z/T) (Criteo: 7 x 3 + 9 x 2)."""
    z = WL.nonzeros
    q_lo = sympy.floor(z / T)
    return sympy.ceiling(z / T), q_lo, z - T * q_lo


def _x_bytes(slots: Expr) -> Expr:
    """One tasklet's slice of an ELL row, read in one DMA rounded up to 8 B."""
    return 8 * sympy.ceiling(slots * WL.bytes_per_value / 8)


def sparse_sample(t: Terms, model: str, count: Expr) -> Section:
    """Per sample: tasklets split the z active slots (``sparse_split``); every weight and accumulator
    access is a random 8-B DMA (read-modify-write for the int64 accumulators); tasklet T-1 also reads and
    writes the bias accumulator. The extra slot of the r busier tasklets runs with only r tasklets issuing."""
    z = WL.nonzeros
    q_hi, q_lo, r = sparse_split()
    q_hi = t.define("q_hi", q_hi, "active slots of the busier tasklets: ceil(z / T)")
    q_lo = t.define("q_lo", q_lo, "active slots of the other tasklets: floor(z / T)")
    r = t.define("r_busy", r, "tasklets with one more slot: z - T floor(z / T)")
    hit = 1 if model == "lr" else COEF.svm_hit_fraction
    per_slot = t.define("i_slot", K.sparse_slot_instructions + ops(int64_add=1)
                        + hit * (K.sparse_grad_slot_instructions + ops(int64_add=1)),
                        "instructions per active slot: gather, add, gradient term")
    main = T * (q_lo * per_slot + K.sample_overhead_instructions)
    tail = r * (q_hi - q_lo) * per_slot
    # data-dependent write-backs of the z accumulators (LR: the -1 guards; SVM: margin hits), + the bias
    writes = hit * COEF.sparse_write_fraction * z + 1
    b = sympy.Integer(K.sparse_access_bytes)
    conc = t.define("k_random", P.maximum(1, sympy.floor(z / q_hi + sympy.Rational(1, 2))),
                    "random 8-B accesses in flight together: z / q_hi, rounded")
    x_lo_dmas = (T - r) * sympy.Min(q_lo, 1)
    gathers = 2 * z + 1  # w gathers, accumulator reads (+ the bias accumulator)
    dmas = (Dma("read", _x_bytes(q_hi), T, r), Dma("read", _x_bytes(q_lo), T, x_lo_dmas),
            Dma("read", b, conc, gathers), Dma("write", b, conc, writes))
    # benchmark builds: only the X read is barrier-timed; the 8-B accesses are timed alone (Criteo benchmark_LR
    # dpu/task.c:203-210 vs 255-260, 351-357, 388-392)
    return Section(SAMPLE, True, count, Work({"instructions": main + tail}, {("instructions", r): tail}, dmas,
                                             timed_barriers={"read": 1}))


def sparse_zero(t: Terms, count: Expr) -> Section:
    """Zero the int64 accumulators (d x 8 B) in 1 KiB blocks: 8 MB per local step for Criteo."""
    blk_n, blk_bytes = blocks(D * K.sparse_acc_bytes / T, K.sparse_dense_block_bytes)
    work = t.define("I_zero", K.zero_loop_instructions * K.sparse_dense_block_bytes / K.sparse_acc_bytes
                    + K.dma_loop_instructions * blk_n + K.step_overhead_instructions,
                    "instructions per tasklet to start a local step (zero the accumulators)")
    return parallel(ZERO, count, work, (lockstep("write", blk_n, blk_bytes),), timed={"write": blk_n})


def sparse_update(t: Terms, count: Expr, admm: bool) -> Section:
    """Update sweep over the weights [0, bias_slot] (the kernels stop at the bias: Criteo 15 x 489 + 478
    = 7,813 blocks of 128 weights, not 16 x 489): read w (4 B) and the int64 accumulators (8 B) [and c],
    write w. The tasklets below the bias slot sweep full slices, so the DPU issues the average stream."""
    swept = WL.bias_slot + 1
    i_upd = t.define("i_update", ops(int64_shift=2, int64_add=2) + K.update_loop_instructions
                     + (K.admm_update_extra_instructions if admm else 0), "instructions per weight of the update")
    w_b, a_b = K.dense_block_bytes, K.sparse_dense_block_bytes
    n_blocks = sympy.ceiling(swept / (w_b // K.value_bytes))
    reads_w = 2 if admm else 1
    dmas = (lockstep("read", reads_w * n_blocks / T, sympy.Integer(w_b)),
            lockstep("read", n_blocks / T, sympy.Integer(a_b)), lockstep("write", n_blocks / T, sympy.Integer(w_b)))
    return parallel(UPDATE, count, swept / T * i_upd, dmas, timed={"read": n_blocks / T, "write": n_blocks / T})


def launch_section(count: Expr, layout: str) -> Section:
    """Kernel start and end barriers; dense: tasklet T-1 reads the int64 bias at the start and writes it
    (GA: the bias gradient) at the end."""
    if layout != "dense":
        return serial(LAUNCH, count, barriers=K.barriers_per_launch)
    b = sympy.Integer(K.bias_bytes)
    return serial(LAUNCH, count, dmas=(Dma("read", b, 1, 1), Dma("write", b, 1, 1)), barriers=K.barriers_per_launch)


def step_barriers(count: Expr, layout: str, update: bool) -> Section:
    """``barrier_wait`` calls per local step besides the per-sample ones (``kernels.study.step_barriers``)."""
    return serial(STEP, count, barriers=K.step_barriers(layout, update))


# ---------------------------------------------------------------- host side
def model_bytes(layout: str) -> Expr:
    """The int32 model vector per DPU."""
    return D * K.value_bytes


def bias_calls(layout: str, to_pim: bool, mode: str = "parallel") -> list[HostCall]:
    """Dense kernels keep an int64 bias outside w: one more transfer call each way."""
    return [HostCall("bias", sympy.Integer(K.bias_bytes), to_pim, mode)] if layout == "dense" else []


def host_threads(layout: str) -> int:
    return K.host_threads(layout)


def host_reduce(passes: Expr | int, element_bytes: int, layout: str, thread_rounds: int = 1) -> Expr:
    """``passes`` streams over the N x d values on the host, plus pthread create/join per round."""
    return P.host_reduction_s(passes * N * D * element_bytes, host_threads(layout), thread_rounds, HW)


def dpu_sections(t: Terms, model: str, layout: str, samples: Expr, steps: Expr, launches: Expr,
                 update: bool, admm: bool, kernels: str = "study") -> tuple[Section, ...]:
    """The DPU work of an epoch: ``samples`` rows, ``steps`` local steps (zeroing [+ update]),
    ``launches`` kernel launches, with the ``kernels`` variant."""
    if layout == "dense":
        sections = [dense_sample(t, model, samples, kernels), dense_zero(t, steps)]
        if update:
            sections.append(dense_update(t, steps, admm))
    else:
        sections = [sparse_sample(t, model, samples), sparse_zero(t, steps)]
        if update:
            sections.append(sparse_update(t, steps, admm))
    return (*sections, step_reads(steps, layout, update), error_section(t, model, samples),
            step_barriers(steps, layout, update), launch_section(launches, layout))


def with_sections(eq: EquationSet, *extra: Section) -> EquationSet:
    return replace(eq, sections=(*eq.sections, *extra))
