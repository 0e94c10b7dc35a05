"""The workload-family registry: one frozen ``FamilyInfo`` per training workload, the list every layer reads.

**The plug-in contract.** A family is four things (``tests/test_family_contract.py`` checks them):

1. an entry in ``REGISTRY`` below: its name, what it is, the sizes the CLI takes (``inputs``), the dotted paths of
   the other three pieces;
2. a kernel description ``pimmodel.kernels.<module>`` in the kernel vocabulary (sections, DMAs, chains, host
   calls), cited from the public source it models;
3. an equation module ``pimmodel.costmodel.<module>`` with sympy equations per phase, priced by
   ``kernels.pricing`` and the primitives (never its own cost of an event);
4. an emulator trainer ``pimmodel.emulator.<module>:<function>`` that trains for real in fixed point and prices the
   events it counts with the same kernel description.

``linear`` is the PIM-Opt study's LR/SVM family: its pieces are the optimizer plug-ins of ``specs.optimizers``
(one per optimizer), unchanged. ``FAMILIES`` is ``tuple(REGISTRY)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SpecError, unknown


@dataclass(frozen=True, slots=True)
class FamilyInfo:
    name: str
    label: str
    description: str
    kernels: str
    """dotted path of its kernel description module."""
    equations: str
    """dotted path of its equation module."""
    trainer: str
    """``pimmodel.emulator.<module>:<function>``."""
    inputs: tuple[str, ...]
    """the sizes it takes on the command line (``--points`` etc.); the linear family takes the study's options."""
    source: str
    """the public code it models."""
    options: tuple[str, ...] = ()
    """every command-line option only some families read (its Python name, ``n_init`` for ``--n-init``) that this
    family reads, in every command that has it; ``command.name`` where only that command reads it. An option of
    another family given with this one is refused, never ignored (``refused_options``)."""
    study: bool = False

    def __post_init__(self) -> None:
        if not (self.kernels.startswith("pimmodel.kernels.") and self.equations.startswith("pimmodel.costmodel.")
                and self.trainer.startswith("pimmodel.emulator.") and ":" in self.trainer):
            raise ValueError(f"{self.name}: pieces must live in pimmodel.kernels / costmodel / emulator")


REGISTRY: dict[str, FamilyInfo] = {info.name: info for info in (
    FamilyInfo("linear", "LR / SVM (PIM-Opt)", "the study's linear models trained by its optimizers (ma-sgd, "
               "ga-sgd, admm and the others of specs.optimizers)", "pimmodel.kernels.study",
               "pimmodel.costmodel.registry", "pimmodel.emulator.trainers:train",
               ("dataset", "model", "optimizer"), "CMU-SAFARI/PIM-Opt",
               ("optimizer", "dataset", "model", "tasklets", "scaling", "epochs", "batch_size", "global_batch_size",
                "view", "features", "nonzeros", "rows_per_dpu", "layout", "calibration", "interval", "sync_every",
                "plot", "samples_per_dpu", "learning_rate_shift", "reg_shift", "alpha_shift", "kernels", "svm_margin",
                "class_weights", "shuffle", "arithmetic", "engine", "workers", "address", "seed"), study=True),
    FamilyInfo("kmeans", "K-means (dpu_kmeans)", "Lloyd iterations on int16 features with per-DPU int64 partial "
               "sums, the host's reduction and division, n_init restarts", "pimmodel.kernels.kmeans",
               "pimmodel.costmodel.kmeans", "pimmodel.emulator.kmeans:train_kmeans",
               ("points", "dims", "clusters", "iterations", "n_init"), "upmem/dpu_kmeans @ df30f5c",
               ("points", "dims", "clusters", "iterations", "n_init", "emulate.dataset", "emulate.seed")),
)}
FAMILIES: tuple[str, ...] = tuple(REGISTRY)


def reads(family: str, command: str, option: str) -> bool:
    """Whether ``family`` reads ``option`` (a Python name) in ``command`` (``predict``, ``scale``, ``emulate``)."""
    opts = family_info(family).options
    return option in opts or f"{command}.{option}" in opts


def family_options() -> frozenset[str]:
    """The options some family reads and another does not: the ones ``refused_options`` looks at."""
    return frozenset(o.split(".")[-1] for info in REGISTRY.values() for o in info.options)


def refused_options(family: str, command: str, given: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """The options of ``given`` that ``family`` does not read in ``command``, each with the families that do."""
    universe = family_options()
    return [(o, tuple(f for f in FAMILIES if reads(f, command, o))) for o in given
            if o in universe and not reads(family, command, o)]


def family_info(name: str) -> FamilyInfo:
    if name not in REGISTRY:
        raise unknown("workload", name, FAMILIES)
    return REGISTRY[name]


SUFFIXES = {"k": 1_000, "m": 1_000_000, "g": 1_000_000_000, "b": 1_000_000_000}


def parse_count(text: str, option: str) -> int:
    """A positive count as a user writes it: ``25600000``, ``25.6M``, ``100k``, ``25_600_000`` (one-line error)."""
    raw = text.strip().lower().replace("_", "").replace(",", "")
    scale = 1
    if raw and raw[-1] in SUFFIXES:
        scale, raw = SUFFIXES[raw[-1]], raw[:-1]
    try:
        value = float(raw) * scale
    except ValueError:
        raise SpecError(f"{option} must be a count such as 25600000 or 25.6M, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise SpecError(f"{option} must be a finite count such as 25600000 or 25.6M, got {text!r}")
    if value < 1 or value != int(value):
        raise SpecError(f"{option} must be a positive whole count, got {text!r}")
    return int(value)
