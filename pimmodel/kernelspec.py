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
    # ---- sparse (Criteo-like) kernels: 40-slot ELL rows, byte offsets, random 8-B accesses
    ell_slots: int = 40
    sparse_access_bytes: int = 8
    sparse_slot_instructions: float = 9
    """per slot in the dot product: offset load, alignment test and fix-up, half select, 64-bit add."""
    sparse_grad_slot_instructions: float = 14
    """per slot in the gradient: address, class-weight shifts with guards, -1 tests, add."""
    sparse_label_block_bytes: int = 512
    """labels are read 128 at a time."""
    sparse_dense_block_bytes: int = 1024
    """block size of the dense sweeps (zeroing, update) in the sparse kernels."""
    # ---- barriers
    barriers_per_launch: int = 2
    """kernel start and kernel end."""
    barriers_per_sample: int = 2
    """after the partial dot products, after tasklet 0 computed the error."""
    barriers_per_step: int = 2
    """after the mini-batch loop and after the update (ADMM: one more, see admm_barriers_per_step)."""
    admm_extra_barriers_per_step: int = 1
    # ---- host parameter server
    dense_host_threads: int = 17
    """YFCC: 16 threads x 256 features + 1 for the bias, created and joined every round."""
    sparse_host_threads: int = 63
    """Criteo: 63 threads x 15,896 features."""
    ma_host_passes: int = 1
    """MA-SGD: one pass over the N x d int32 local models (sum into int64, divide, clamp)."""
    ga_host_passes: int = 1
    """GA-SGD: one pass over the N x d gradients (int32 dense, int64 sparse)."""
    ga_host_update_passes: int = 3
    """GA-SGD: the host update reads the sum and w and writes w (over d values, not N x d)."""
    admm_host_passes: int = 6
    """ADMM: read all w_k, read all u_k, read w_k and u_k and write u_k, write c_k (6 streams of N x d)."""
    admm_host_thread_rounds: int = 2
    """ADMM: one threaded pass for the means, one for the u/c updates."""


PROFILE = KernelProfile()
"""The study's kernels."""
