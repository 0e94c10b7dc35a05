"""The phase vocabulary of the baseline models (defined once here) and their result record.

CPU phases add up to the epoch (one process does them one after the other; every process does the same):

* ``compute``: the arithmetic of forward, backward and update at the core's in-cache rates;
* ``memory``: streaming the process's shard from the memory level that holds it (DRAM, or the last-level
  cache), as far as it is not hidden behind the forward pass, plus random accesses of sparse rows;
* ``sync``: exchanges between processes (all-reduce every step, or ADMM's gather/scatter every epoch);
* ``dispatch``: fixed per-step costs of the framework's calls (Python, autograd, data-loader fetches), which
  dominate these small linear models in eager frameworks.

GPU phases are pipeline stages that overlap (loader worker, pin-memory thread, main thread + GPU): the epoch
is the slowest stage, so its record says ``combine = "max"`` and names the stage that binds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

CPU_PHASES = ("compute", "memory", "sync", "dispatch")
GPU_PHASES = ("loader", "host_copy", "host_transfer", "dispatch", "memory", "compute")
GPU_STAGES = {
    "loader worker": ("loader",),
    "pin-memory thread": ("host_copy",),
    "main thread + GPU": ("host_transfer", "dispatch", "memory", "compute"),
}
"""Which GPU phases run one after the other in each concurrent stage (``gpu.py`` combines within a stage)."""

PHASE_LABELS = {
    "compute": "compute", "memory": "memory streaming", "sync": "sync between processes",
    "dispatch": "framework dispatch", "loader": "loader worker (fetch + collate)",
    "host_copy": "pin-memory copy", "host_transfer": "host -> GPU (PCIe)",
}


@dataclass(frozen=True, slots=True)
class BaselinePrediction:
    """Per-epoch seconds of every phase, the epoch and the run, and what the numbers rest on."""

    device: str
    spec: str
    workload: Mapping[str, Any]
    per_epoch_s: Mapping[str, float]
    epochs: int
    steps_per_epoch: int
    combine: str
    bottleneck: str
    validated: bool
    validation: str
    assumptions: tuple[str, ...] = ()
    details: Mapping[str, float] = field(default_factory=dict)
    structure: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """CPU: each part of the predicted run's structure (implementation, exchange, processes, layout) with its
    value and whether ``pimmodel baseline measure`` runs that part on this machine (``run_here``)."""
    assumed_constants: tuple[str, ...] = ()
    """the spec constants tagged A (assumptions), as 'section.key'."""
    interval: Mapping[str, Any] | None = None
    """the epoch over an assumption's plausible range: {"epoch_s": [low, high], "decided_by", "range", "source"}
    (None: no single assumed constant is ranged)."""

    @property
    def epoch_s(self) -> float:
        return float(self.per_epoch_s["total"])

    @property
    def total_s(self) -> float:
        return self.epoch_s * self.epochs

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready dict (what ``--json`` prints and the tables render)."""
        return {
            "device": self.device, "spec": self.spec, "workload": dict(self.workload),
            "per_epoch_s": dict(self.per_epoch_s), "epochs": self.epochs, "total_s": self.total_s,
            "steps_per_epoch": self.steps_per_epoch, "combine": self.combine, "bottleneck": self.bottleneck,
            "validated": self.validated, "validation": self.validation, "assumptions": list(self.assumptions),
            "details": dict(self.details), "structure": {k: dict(v) for k, v in self.structure.items()},
            "assumed_constants": list(self.assumed_constants),
            "interval": None if self.interval is None else dict(self.interval),
        }
