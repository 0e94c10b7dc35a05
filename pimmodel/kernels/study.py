"""What the study's DPU kernels and host driver execute, independent of data and hardware.

One home for the structure of the PIM-Opt kernels (``dpu/task.c`` and ``host/app.c`` of the artifact,
described in ``shared/reference/pim-opt-study.md`` §3): DMA block sizes, barriers, the bookkeeping
instructions around each inner-loop iteration (loads, stores, index updates, compares, branches),
the serial section of tasklet 0 and the host's threads. The operation-class costs (a 64-bit multiply,
a soft-float divide) come from the hardware spec; the data-dependent parts (how many bytes a multiply
operand has, how often an SVM sample violates the margin) are cost-model coefficients fitted to the
emulator. Both the cost model and the emulator's counters use this module, so their counts agree by
construction wherever the kernels' control flow does not depend on data.

The bookkeeping counts are read off the kernel C code (one WRAM load or store, index increment,
compare and branch are one instruction each on the DPU ISA); they are estimates of compiled code, not
measurements, and are named so that they can be revised in one place.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KernelProfile:
    # ---- dense (YFCC-like) kernels: tasklet t owns features [t*d/T, (t+1)*d/T)
    dense_x_dma_bytes: int = 1024
    """X slice of one sample per tasklet (256 features x 4 B)."""
    dense_block_bytes: int = 512
    """w / accumulator / (u - z) blocks moved per DMA."""
    dot_loop_instructions: float = 5
    """per feature in the dot product besides multiply, shift and add: 2 loads, index, compare, branch."""
    grad_lr_loop_instructions: float = 7
    """per feature in the LR gradient besides multiply and shift: loads, guard compare, add, store, loop."""
    grad_svm_loop_instructions: float = 8
    """per feature in the SVM gradient besides the shift: load, guard, margin and label tests, loop."""
    grad_svm_hit_instructions: float = 3
    """extra per feature when the sample violates the margin: add/sub and store."""
    zero_loop_instructions: float = 3
    """per accumulator element zeroed at the start of a local step: store, index, branch."""
    update_loop_instructions: float = 12
    """per weight in the local update besides the shifts and 64-bit adds: loads, 2 guards, clamp, store."""
    admm_update_extra_instructions: float = 4
    """per weight, ADMM adds (u - z) to w before the decay shift: load + 64-bit add bookkeeping."""
    sample_overhead_instructions: float = 24
    """per sample per tasklet: address arithmetic, partial-sum store, loop control."""
    step_overhead_instructions: float = 120
    """per local step per tasklet: argument loads, mem_alloc, address set-up, bias bookkeeping."""
    # ---- serial section of tasklet 0 (between the two per-sample barriers)
    reduce_instructions_per_tasklet: float = 3
    """summing the T partial dot products: load and loop control besides the 64-bit add."""
    sigmoid_integer_instructions: float = 40
    """LUT exp bookkeeping: fixed-point split of t, index rounding, ldexpf, label select, error."""
    svm_margin_instructions: float = 12
    """SVM: label select, two's-complement negation, margin compare, flag store."""
    lut_read_bytes: int = 8
    """one LUT entry is fetched from MRAM with an 8-byte DMA."""
    sigmoid_ops: tuple[tuple[str, int], ...] = (
        ("float_convert", 4), ("float_mul", 3), ("double_add", 1), ("double_div", 1))
    """soft-float calls of ``CAST / (1.0 + expf(-((float) z / CAST)))`` and the TransPimLib ``expf``, as
    written in ``dpu/task.c``: conversions (float) z [int64 -> float], (int) ldexpf(...) [the LUT address,
    float -> int], exp_tmp -> double [1.0 is a double], (LS) of the quotient [double -> int64]; float
    multiplies x * log2_e and fraction * ln_2 (the fixed-point split and the two ldexpf calls are integer
    code, in ``sigmoid_integer_instructions``); 1.0 + e; CAST / (...). The source's float divide ``/ CAST``
    is counted as a multiply: CAST = 2^31 is a power of two, whose inverse is exact, and LLVM's InstCombine
    rewrites an fdiv by such a constant into an fmul (IEEE-exact, no fast-math needed)."""
    # ---- sparse (Criteo-like) kernels: 40-slot ELL rows, byte offsets, random 8-B accesses
    ell_slots: int = 40
    sparse_access_bytes: int = 8
    sparse_slot_instructions: float = 9
    """per slot in the dot product: offset load, alignment test and fix-up, half select, 64-bit add."""
    sparse_grad_slot_instructions: float = 14
    """per slot in the gradient: address, class-weight shifts with guards, -1 tests, add."""
    sparse_label_block_bytes: int = 512
    """MA-SGD / ADMM: tasklet 0 reads the labels 128 at a time (``cache_Y[128]``)."""
    sparse_ga_label_block_bytes: int = 16
    """GA-SGD: tasklet 0 reads the labels 4 at a time (``cache_Y[4]``)."""
    sparse_acc_bytes: int = 8
    """int64 gradient accumulators of the sparse kernels (zeroing, update sweep, GA pull)."""
    dma_loop_instructions: float = 3
    """per iteration of a loop that only issues one DMA (the sparse zeroing): call set-up, address, branch."""
    sparse_dense_block_bytes: int = 1024
    """block size of the dense sweeps (zeroing, update) in the sparse kernels."""
    # ---- words and small transfers shared by all kernels
    value_bytes: int = 4
    """one uint32 feature (dense Q1.31 value or sparse byte offset) and one int32 weight."""
    label_bytes: int = 4
    """one uint32 label."""
    bias_bytes: int = 8
    """dense kernels: tasklet T-1 reads the int64 bias once at launch start and writes it (MA/ADMM: the
    bias; GA: the bias gradient) once at launch end."""
    dense_ga_label_block_bytes: int = 8
    """GA-SGD dense: tasklet 0 reads the labels 2 at a time (``cache_Y[2]``); MA-SGD / ADMM read the
    whole local batch in one DMA at the start of a local step (padded to 8 B)."""
    # ---- barriers (``barrier_wait`` calls of the kernels)
    barriers_per_launch: int = 2
    """kernel start and kernel end."""
    barriers_per_sample: int = 2
    """after the partial dot products, after tasklet 0 computed the error."""
    barriers_after_update: int = 2
    """MA-SGD / ADMM, per local step: after the mini-batch loop and after the local update."""
    barriers_after_zeroing_sparse: int = 1
    """sparse kernels (all optimizers), per local step: after zeroing the accumulators."""
    barriers_after_zeroing_dense_ga: int = 1
    """dense GA-SGD, per launch: after zeroing (the dense MA-SGD / ADMM kernels have none there)."""

    def step_barriers(self, layout: str, update: bool) -> int:
        """``barrier_wait`` calls per local step besides the per-sample ones."""
        if layout == "dense":
            zero = 0 if update else self.barriers_after_zeroing_dense_ga
        else:
            zero = self.barriers_after_zeroing_sparse
        return zero + (self.barriers_after_update if update else 0)

    def label_block_bytes(self, layout: str, update: bool) -> int:
        """Bytes of one label DMA of tasklet 0; 0 = the whole local batch in one DMA (dense MA / ADMM)."""
        if layout == "dense":
            return 0 if update else self.dense_ga_label_block_bytes
        return self.sparse_label_block_bytes if update else self.sparse_ga_label_block_bytes
    # ---- host parameter server (``host/app.c`` of each optimizer; the recount in tests/costmodel/test_host_side.py
    # cites file and line). Passes count the bytes the reductions move through host memory, in units of the N x d
    # arrays: a read stream is 1, a read-modify-write adds 1 (the write-back), a write-only stream 2 (the CPU reads
    # each line for ownership before writing it: write-allocate).
    dense_host_threads: int = 17
    """YFCC: 16 threads x 256 features + 1 for the bias, created and joined every round."""
    sparse_host_threads: int = 63
    """Criteo: 62 threads x 15,896 features + 1 x 15,920, created and joined every round."""
    ma_host_passes: int = 1
    """MA-SGD: one read stream over the N x d int32 local models, summed into int64 (then d values written)."""
    ga_host_passes: int = 1
    """GA-SGD: one read stream over the N x d gradients (int32 dense, int64 sparse), summed into int64."""
    ga_host_update_bytes_per_weight: int = 16
    """GA-SGD: the update reads the int64 sum (8 B) and w (4 B) and writes w back (4 B), over d values."""
    admm_host_passes: int = 8
    """ADMM: 5 read streams (sum of w_k; sum of u_k; u_k and w_k for the u update; u_k for c_k), 2 write-backs
    (u_k updated in place; c_k = u_k - z written), and the write-allocate read of c_k, which is only written."""
    dense_admm_thread_rounds: int = 1
    """ADMM YFCC: one group of 17 threads per epoch does means, z, u and c together."""
    sparse_admm_thread_rounds: int = 3
    """ADMM Criteo: three groups of 63 threads per epoch (mean of w, mean of u, then z/u/c): 189 create/join."""

    def host_threads(self, layout: str) -> int:
        return self.dense_host_threads if layout == "dense" else self.sparse_host_threads

    def admm_thread_rounds(self, layout: str) -> int:
        return self.dense_admm_thread_rounds if layout == "dense" else self.sparse_admm_thread_rounds


PROFILE = KernelProfile()
"""The study's kernels."""


# ---------------------------------------------------------------- sections of the DPU work
# A DPU's work per epoch is a sequence of sections, each between two barriers (or a kernel boundary). In a
# parallel section all tasklets interleave, so one tasklet's DMA can hide behind another's compute (the wall
# view charges only max(0, DMA - compute) of it); in a serial section tasklet 0 (or T-1) works alone and all of
# its DMA is exposed. Nothing overlaps across a barrier. The cost model's sections and the emulator's trace
# both use these names (``pimmodel.kernels.vocabulary.Section``).
SECTION_DOCS: dict[str, str] = {
    "sample": "per sample, every tasklet: partial dot product and gradient terms",
    "zero": "start of a local step: every tasklet zeroes its accumulator slice in MRAM",
    "update": "end of a local step (MA-SGD, ADMM): every tasklet sweeps its slice of w",
    "exchange": "the DPU side of an all-reduce over direct DPU links (hypothetical hardware)",
    "step_reads": "once per local step, tasklet 0 alone: the batch's labels (sparse: also the bias weight)",
    "error": "per sample, tasklet 0 alone between two barriers: reduction, then sigmoid and LUT read or margin",
    "step": "the per-step barriers besides the per-sample ones",
    "launch": "kernel start and end barriers; dense: tasklet T-1's bias read and write",
}
SAMPLE, ZERO, UPDATE, EXCHANGE, STEP_READS, ERROR, STEP, LAUNCH = SECTION_DOCS
INSTRUMENTED: dict[str, tuple[str, ...]] = {
    SAMPLE: ("compute", "read", "write"), ZERO: ("compute", "write"), UPDATE: ("compute", "read", "write"),
    EXCHANGE: ("compute", "read", "write"), STEP_READS: ("read",), ERROR: ("compute", "dma_in_compute"), STEP: (),
    LAUNCH: ("write",),
}
"""How the study's benchmark builds (``benchmark_LR``/``benchmark_SVM``, Figs. 2/4/9) count each section: per
tasklet, cycles between ``timer_start`` and ``timer_stop`` go to init, compute, MRAM->WRAM or WRAM->MRAM; the host
sums a tasklet's counters over the epoch's launches and takes the max over (DPU, tasklet) per category
(``U/MA-SGD/YFCC100M-HNfc6/benchmark_LR/host/app.c:730-741``). Compute intervals hold no barrier wait; every bulk
DMA is timed with the barrier that follows it (``Work.timed_barriers``); the other barriers are untimed. Tasklet 0's
serial sigmoid, LUT read included, lies inside its compute interval (``benchmark_LR/dpu/task.c:269-289``); its
label read is timed as MRAM->WRAM without a barrier (205-208); the kernel prologue, the bias read included, is the
init interval (67-142), which the figures leave out, and tasklet 15's final bias write is WRAM->MRAM (461-464)."""
PARALLEL_SECTIONS: tuple[str, ...] = (SAMPLE, ZERO, UPDATE, EXCHANGE)
SERIAL_SECTIONS: tuple[str, ...] = (STEP_READS, ERROR, STEP, LAUNCH)
SECTIONS: tuple[str, ...] = PARALLEL_SECTIONS + SERIAL_SECTIONS


def is_parallel(section: str) -> bool:
    """True if the tasklets interleave in ``section`` (its DMA can hide behind compute)."""
    if section in PARALLEL_SECTIONS:
        return True
    if section in SERIAL_SECTIONS:
        return False
    raise ValueError(f"unknown DPU section {section!r}; known: {', '.join(SECTIONS)}")
