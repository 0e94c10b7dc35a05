"""The DPUs one process emulates, and how their results meet the other processes' (the host's reductions).

The trainers are SPMD: every process (the only one, a local worker, or a Ray actor) runs the same epoch on its
contiguous group of DPUs ``[lo, hi)`` of ``n`` and calls its ``Comm`` wherever the host combines the DPUs' results.
A ``Comm`` keeps the serial result bit for bit:

- ``sum``: integer partial sums (int64) of each group, added exactly (so in any order, over any tree);
- ``gather``: every DPU's rows in DPU order (float64 means, which must be added in the serial order to keep their
  bits, and nothing else);
- ``rows``: the rows of some DPUs of other groups (gossip neighbours).

``ALONE`` is the one-process communicator: every call is the identity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray


class Comm(Protocol):
    def sum(self, partial: NDArray[np.int64]) -> NDArray[np.int64]:
        """The sum over every group of ``partial`` (one int64 array per group, the same shape)."""

    def gather(self, local: NDArray[Any], lo: int, n: int) -> NDArray[Any]:
        """Every group's ``local`` rows (axis 0; this group's are rows ``lo`` on of ``n``) in order."""

    def rows(self, local: NDArray[Any], wanted: NDArray[np.int64], lo: int, n: int) -> NDArray[Any]:
        """The rows ``wanted`` (of ``n``) from the groups that hold them; every group calls it with its own rows
        (``lo`` on) and the indices it needs."""


class _Alone:
    def sum(self, partial: NDArray[np.int64]) -> NDArray[np.int64]:
        return partial

    def gather(self, local: NDArray[Any], lo: int, n: int) -> NDArray[Any]:
        return local

    def rows(self, local: NDArray[Any], wanted: NDArray[np.int64], lo: int, n: int) -> NDArray[Any]:
        return local[wanted]


ALONE: Comm = _Alone()


@dataclass(frozen=True)
class Group:
    """DPUs ``[lo, hi)`` of the run's ``n``."""

    n: int
    lo: int
    hi: int
    comm: Comm = ALONE

    @classmethod
    def alone(cls, n: int) -> Group:
        return cls(n, 0, n)

    @property
    def size(self) -> int:
        return self.hi - self.lo

    def total(self, local: NDArray[Any]) -> NDArray[np.int64]:
        """The exact int64 sum over every DPU of the run of the rows ``local`` (this group's)."""
        return self.comm.sum(np.asarray(local).sum(axis=0, dtype=np.int64))

    def scalar_total(self, local: NDArray[Any]) -> np.int64:
        return np.int64(self.comm.sum(np.asarray([np.asarray(local).sum(dtype=np.int64)], np.int64))[0])

    def mean(self, local: NDArray[Any]) -> Any:
        """float64: the mean over every DPU's rows, added one DPU after the other (in a C-ordered copy: numpy adds
        the rows of a column-major array pairwise, so the order would depend on how the rows were laid out)."""
        return self.float_sum(local) / self.n

    def float_sum(self, local: NDArray[Any]) -> Any:
        """float64: the sum over every DPU's rows, one DPU after the other."""
        return np.ascontiguousarray(self.comm.gather(local, self.lo, self.n)).sum(axis=0, dtype=np.float64)


def split(n: int, workers: int, align: int = 1) -> list[tuple[int, int]]:
    """Contiguous groups of about n / workers DPUs whose bounds are multiples of ``align`` (fewer groups when there
    are fewer aligned units than workers)."""
    units = -(-n // align)
    groups = max(1, min(workers, units))
    bounds = [min(n, (units * g // groups) * align) for g in range(groups + 1)]
    return [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True) if hi > lo]
