"""What one emulation runs: the run options a user picks (``Options``), the configuration the trainers read
(``TrainConfig``) and the one place that builds the second from a workload, the options and a hardware spec
(``train_config``).

Every field of ``TrainConfig`` that a workload or a hardware spec decides has no default, so a caller that builds
one by hand must say each of them, and every caller that has a workload goes through ``train_config`` (a forgotten
field is a ``TypeError``, never the study's value taken silently)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import DataError
from ..specs import HardwareSpec, Workload
from . import fixedpoint as fx
from . import kernels as kn

ENGINES = ("auto", "serial", "process", "ray")
"""How the DPUs are run: ``serial`` in this process; ``process`` split over local worker processes; ``ray`` as Ray
actors (a local cluster, or ``address``); ``auto``: processes on every usable core when the run is large enough to
gain from them (and this is not itself a worker process), else serial."""

ENGINE_OPTIONS: dict[str, tuple[str, ...]] = {"workers": ("auto", "process", "ray"), "address": ("ray",)}
"""The ``Options`` fields only some engines read, with the engines that read them: given with another engine they
are refused (``engine._engine``), never ignored."""


SAMPLES_PER_DPU = 512
"""Synthetic rows per DPU when ``Options.samples_per_dpu`` is not given."""


@dataclass(frozen=True)
class Options:
    """What to emulate besides the dataset, DPUs, model and optimizer (the CLI's options)."""

    epochs: int = 10
    samples_per_dpu: int | None = None
    """synthetic rows per DPU (None: ``SAMPLES_PER_DPU``); a file's rows come from the file (giving it is an error)."""
    features: int | None = None
    arithmetic: str = "fixed"
    seed: int = 0
    hardware: str = "upmem-2556"
    tasklets: int = 16
    kernels: str | None = None
    """'study' or 'corrected'; None: the study's kernels for its synthetic presets, the corrected ones for a
    user's file (``kernels_for``)."""
    svm_margin: float | None = None
    class_weights: tuple[float, float] | None = None
    shuffle: bool = True
    """shuffle a file's rows before sharding (False: the file's order, as the study's hosts load it)."""
    engine: str = "auto"
    """``ENGINES``; every engine trains the same bits."""
    workers: int | None = None
    """worker processes or Ray actors (None: the usable cores, or the Ray cluster's CPUs)."""
    address: str | None = None
    """the Ray cluster to join (None: start a local one); only with ``engine="ray"``."""


def kernels_for(dataset: str, options: Options, synthetic: tuple[str, ...]) -> str:
    """The kernel variant a run uses: the one asked for, else 'study' for the study's synthetic presets (the
    artifact reproduced) and 'corrected' for a user's file (the study's kernels cast a feature of 1.0 to -1.0 in
    the SVM and weigh the classes 0.5:15, which fails a user's own data)."""
    if options.kernels is not None:
        return options.kernels
    return "study" if dataset in synthetic else "corrected"


@dataclass(frozen=True)
class TrainConfig:
    """What the trainers read. Built by ``train_config``; by hand only where there is no workload (tests)."""

    # ---- from the workload
    model: str
    optimizer: str
    batch_size: int
    global_batch_size: int
    learning_rate_shift: int
    reg_shift: int
    alpha_shift: int
    task_epochs: int
    """ADMM: local passes over the shard per global epoch (the artifact's ``task_epochs``)."""
    sync_every: int
    """H: local steps between two global averages (local-sgd, hier-sgd)."""
    epochs: int
    tasklets: int
    kernels: str
    """'study' (the artifact's kernels bit for bit) or 'corrected' (widening casts, SVM margin 0.5, class weights
    1:1); see ``kernels.KernelConfig``."""
    # ---- from the hardware
    dma_max_bytes: int
    """The hardware's largest MRAM<->WRAM DMA (a kernel build parameter: larger transfers are split)."""
    link_topology: str
    """The hardware's direct DPU links (``specs.hardware.TOPOLOGIES``), for the optimizers that use them."""
    dpus_per_rank: int
    """The hardware's rank size (hier-sgd averages inside a rank)."""
    # ---- run options (defaults: what the study's kernels do)
    arithmetic: str = "fixed"
    svm_margin: float | None = None
    """SVM margin in real units; None: the variant's (2^-15 as the study's kernels, 0.5 corrected)."""
    class_weights: tuple[float, float] | None = None
    """(negative, positive) factors of the sparse kernels' gradient; None: the variant's ((0.5, 15) study, 1:1
    corrected)."""
    admm_consensus: str = "artifact"
    """'artifact' (the SVM z scale missing a factor N) or 'intended'."""

    @property
    def margin(self) -> float:
        """The SVM margin in real units."""
        if self.svm_margin is not None:
            return self.svm_margin
        return kn.SVM_MARGIN_Q31 / fx.ONE if self.kernels == "study" else 0.5

    @property
    def weights(self) -> tuple[float, float]:
        """(negative, positive) class weights of the sparse kernels."""
        if self.class_weights is not None:
            return self.class_weights
        return kn.STUDY_CLASS_WEIGHTS if self.kernels == "study" else (1.0, 1.0)

    def kernel(self) -> kn.KernelConfig:
        margin_q31 = int(round(self.margin * fx.ONE))
        if not 0 < margin_q31 <= fx.ONE:
            raise DataError(f"--svm-margin {self.margin!r} must be in (0, 1] (the Q31 range), e.g. 0.5")
        return kn.KernelConfig(self.model, self.learning_rate_shift, self.reg_shift, self.arithmetic == "fixed",
                               margin_q31, self.kernels, kn.ClassWeights.of(*self.weights))


def train_config(workload: Workload, options: Options, hardware: HardwareSpec,
                 admm_consensus: str = "artifact") -> TrainConfig:
    """The emulator's configuration of ``workload`` on ``hardware`` with ``options``' arithmetic and kernel
    settings: the workload decides the algorithm, hyper-parameters, epochs, tasklets and kernel variant, the
    hardware the DMA limit, links and rank size, the options the arithmetic, SVM margin and class weights."""
    hp = workload.hp
    return TrainConfig(
        model=workload.model, optimizer=workload.optimizer, batch_size=hp.batch_size,
        global_batch_size=hp.global_batch_size, learning_rate_shift=hp.learning_rate_shift, reg_shift=hp.reg_shift,
        alpha_shift=hp.admm_alpha_shift, task_epochs=hp.task_epochs, sync_every=workload.sync_every,
        epochs=workload.epochs, tasklets=workload.tasklets, kernels=workload.kernels,
        dma_max_bytes=hardware.dma_max_bytes, link_topology=hardware.link_topology,
        dpus_per_rank=hardware.dpus_per_rank,
        arithmetic=options.arithmetic, svm_margin=options.svm_margin, class_weights=options.class_weights,
        admm_consensus=admm_consensus)
