"""The DPU side of exchanges over direct DPU links (hypothetical hardware: UPMEM has none), independent of data and
hardware: the constants both the cost model (``costmodel/interconnect.py``) and the emulator
(``emulator/links.py``) count the exchange sections with.

These kernels are ours, not the study's; their instruction counts are estimates of compiled code in the style of
``kernels/study.py`` (one WRAM load, store, compare or branch is one instruction), named so that they can be
revised in one place. Every exchange streams its vectors through WRAM in DMAs of the hardware's largest size
(``dma_max_bytes``), counted as bytes / ``dma_max_bytes`` transfers (a fluid count: chunk boundaries are not
modelled), issued by all T tasklets in lockstep.

- **all-reduce** (``kernels.vocabulary.LinkOp`` kind ``allreduce``): during the reduce-scatter every received
  element of a partial sum is added into the DPU's own (read both, write one; one 64-bit add and
  ``study.PROFILE.reduce_instructions_per_tasklet`` of bookkeeping); the all-gather's chunks land in MRAM
  without DPU work; then ``update_passes`` sweeps over d (read two 4-B streams, write one; a 64-bit shift, a
  64-bit add and ``study.PROFILE.update_loop_instructions``): the averaging or update the host used to do.
- **gossip mixing** (kind ``gossip``, decentralized SGD): every DPU reads its model and its k neighbours' (received
  into MRAM) and writes ``w <- clamp((w >> 1) + sum_n (w_n >> log2 2k))``: self 1/2, each neighbour 1/(2k)
  (ring k = 2: 1/4 each; 2-D torus k = 4: 1/8 each), a symmetric doubly stochastic dyadic mixing matrix, so
  every weight is a shift. Per element: k + 1 int32 shifts, k 64-bit adds, one load per input and
  ``mix_loop_instructions``. The arithmetic shifts round down, so a mix never raises the average model and lowers
  each of its weights by at most 1/2 + k (2k - 1) / 2k = k Q31 units (2 on a ring, 4 on a torus; every DPU is
  the neighbour of k others), unless a clamp saturates. Dense kernels mix the int64 bias the same way (k + 1
  64-bit shifts and k 64-bit adds).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ExchangeProfile:
    mix_load_instructions: float = 1
    """per element and input vector (own model and each neighbour's): one WRAM load."""
    mix_loop_instructions: float = 5
    """per element of the mixing sweep besides the loads, shifts and adds: store, two clamp compares, index,
    branch."""
    self_shift: int = 1
    """the DPU's own model enters the mix with weight 2^-1."""
    read_streams_per_update: int = 2
    """an update sweep after an all-reduce reads two 4-B vectors (w and the reduced one) and writes one."""

    def neighbour_shift(self, neighbours: int) -> int:
        """Each of k neighbours enters with 2^-log2(2k) (k a power of two): the weights sum to 1."""
        if neighbours < 1 or neighbours & (neighbours - 1):
            raise ValueError(f"gossip needs a power-of-two neighbour count, got {neighbours}")
        return (2 * neighbours).bit_length() - 1


EXCHANGE_PROFILE = ExchangeProfile()
