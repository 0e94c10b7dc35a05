"""The optimizer registry: one frozen ``OptimizerInfo`` per optimizer, the one list every layer reads.

**The plug-in contract.** An optimizer is three things, and adding one touches nothing else:

1. an entry in ``REGISTRY`` below (this module is the lowest layer both the cost model and the emulator may
   import): its name, what it needs from the hardware (``links``), the hyper-parameters it takes, how often it
   synchronises, and the dotted paths of the other two pieces;
2. an equation module ``pimmodel.costmodel.<module>`` with ``equations(model, layout, kernels="study",
   topology="none") -> EquationSet`` (one readable equation set, ``costmodel/common.py``);
3. an epoch trainer ``pimmodel.emulator.<module>:<function>`` with the signature ``EpochTrainer``
   (``pimmodel.emulator.trainers``): ``(state, shards, config, local_batch, steps, trace, progress) -> Weights``,
   which trains one epoch for real in fixed point and records every event it causes in ``trace``.

``OPTIMIZERS`` (the names the CLI, the workloads, the emulator and the design-space search accept) is derived
from ``REGISTRY``; ``tests/test_optimizer_contract.py`` checks that every entry's two pieces exist and have the
contract's signatures, and the reconciliation tests (model counts = emulator counts) cover every entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, overload

from ..errors import SpecError, check_choice

LinkNeed = Literal["optional", "global"]
LINK_NEEDS: dict[str, tuple[str, ...]] = {
    "optional": ("none", "in-rank", "ring", "torus", "all-to-all"),
    "global": ("ring", "torus", "all-to-all"),
}
"""What an optimizer needs from ``[interconnect] topology``: ``optional`` runs anywhere (through the host where the
hardware has no links); ``global`` needs direct links that reach every DPU."""
SYNC_KINDS = ("step", "every-h", "epoch")
"""How many synchronisation rounds an epoch has: one per local step, one per H local steps, or one."""
LINKED_SPEC_HINT = "pim-torus-hypothetical"
"""A shipped spec (``hardware_specs/pim-torus-hypothetical.toml``) with links reaching every DPU, named in the
refusal of hardware without them."""


@dataclass(frozen=True, slots=True)
class OptimizerInfo:
    """One optimizer: what it is, what it needs, and where its equations and its emulator trainer live."""

    name: str
    label: str
    description: str
    equations: str
    """dotted path of its equation module (``pimmodel.costmodel.<module>``, exposing ``equations``)."""
    trainer: str
    """``pimmodel.emulator.<module>:<function>``: its epoch trainer (``emulator.trainers.EpochTrainer``)."""
    links: LinkNeed = "optional"
    batch: Literal["local", "global"] = "local"
    """``local``: each DPU takes the power-of-two batch b per step; ``global``: B / N rows of a global batch B."""
    sync: str = "step"
    takes: tuple[str, ...] = ()
    """hyper-parameters it takes besides the batch, the learning rate and the regularization."""
    default_sync_every: int = 1
    """H when the user gives none (the optimizers that do not take ``sync_every`` synchronise every step)."""
    study_like: str = ""
    """the study optimizer whose local-step kernels it runs: it borrows that optimizer's tuned hyper-parameters and
    fitted cost-model coefficients (default: its own name)."""
    study: bool = False
    """one of the study's three (what a bare ``pimmodel predict`` compares)."""
    state_vectors: int = 1
    """N x d vectors the emulator keeps (local models, duals), for its memory estimate."""
    emulated_links: bool = False
    """True: its equations and its trainer handle link topologies themselves (the emulator trains over the links).
    False: on link hardware the registry swaps its host averaging for an all-reduce over the links
    (``costmodel.interconnect.linked``), a cost-model what-if the emulator does not train (it averages through the
    host)."""
    exchange_bytes_per_weight: int = 0
    """MRAM per model weight its link exchanges need (received models, partial sums); the gradient accumulators'
    space is reused once the step's update is done (``kernels.capacity``)."""
    keeps_duals: bool = False
    """True: every DPU keeps dual and consensus vectors beside its model (ADMM): the emulator allocates them, the
    capacity check counts their MRAM and the study's dense kernel one more WRAM block per tasklet."""
    gossips: bool = False
    """True: every DPU mixes its model with its gossip neighbours' (the graph of the link topology): the emulator
    exchanges rows, the DSE and the convergence table key its curves by the gossip graph."""
    rank_groups: bool = False
    """True: it averages the models of each rank (a group of ``dpus_per_rank`` DPUs): the emulator's worker
    groups are whole ranks, and over links the groups must be equal powers of two (the averaging shifts)."""
    shift_divides_global_batch: bool = False
    """True: every DPU divides the gradient sum by the global batch with a shift (a power-of-two batch needed)."""
    curve_of: str = ""
    """An optimizer whose training it repeats bit for bit (its convergence curve is that one's); "" for none."""

    def __post_init__(self) -> None:
        check_choice(f"{self.name}: links", self.links, tuple(LINK_NEEDS))
        check_choice(f"{self.name}: sync", self.sync, SYNC_KINDS)
        if not self.equations or ":" in self.equations or ":" not in self.trainer:
            raise ValueError(f"{self.name}: equations must be a module path and trainer a module:function path")
        if self.links == "global" and not self.emulated_links:
            raise ValueError(f"{self.name}: an optimizer that needs links handles them itself (emulated_links)")
        if self.gossips and self.links != "global":
            raise ValueError(f"{self.name}: an optimizer that gossips needs links reaching every DPU")
        if self.default_sync_every < 1 or ("sync_every" not in self.takes and self.default_sync_every != 1):
            raise ValueError(f"{self.name}: default_sync_every must be 1 unless the optimizer takes sync_every")

    @property
    def study_name(self) -> str:
        """The study optimizer whose kernels, hyper-parameters and fitted coefficients it uses."""
        return self.study_like or self.name

    @property
    def topologies(self) -> tuple[str, ...]:
        """The interconnect topologies it runs on."""
        return LINK_NEEDS[self.links]


REGISTRY: dict[str, OptimizerInfo] = {info.name: info for info in (
    OptimizerInfo(
        "ma-sgd", "MA-SGD", "local SGD with the host averaging the DPUs' models after every local step (the study)",
        "pimmodel.costmodel.ma_sgd", "pimmodel.emulator.trainers:ma_sgd_epoch", study=True),
    OptimizerInfo(
        "ga-sgd", "GA-SGD", "mini-batch SGD over a global batch, the host summing the DPUs' gradients (the study)",
        "pimmodel.costmodel.ga_sgd", "pimmodel.emulator.trainers:ga_sgd_epoch", batch="global", study=True),
    OptimizerInfo(
        "admm", "ADMM", "consensus ADMM, one host round per epoch (the study)",
        "pimmodel.costmodel.admm", "pimmodel.emulator.trainers:admm_epoch", sync="epoch",
        takes=("admm_alpha_shift", "task_epochs"), study=True, state_vectors=3, keeps_duals=True),
    OptimizerInfo(
        "local-sgd", "Local SGD", "H local steps per launch, then the host averages the models (H = 1 is MA-SGD)",
        "pimmodel.costmodel.local_sgd", "pimmodel.emulator.decentral:local_sgd_epoch", sync="every-h",
        takes=("sync_every",), default_sync_every=8, study_like="ma-sgd"),
    OptimizerInfo(
        "hier-sgd", "Hierarchical SGD", "the models of each rank averaged after every step (over in-rank links "
        "where the hardware has them, else by the host per rank), all models every H steps through the host",
        "pimmodel.costmodel.hier_sgd", "pimmodel.emulator.decentral:hier_sgd_epoch", takes=("sync_every",),
        default_sync_every=8, study_like="ma-sgd", emulated_links=True, exchange_bytes_per_weight=4,
        rank_groups=True),
    OptimizerInfo(
        "dpsgd", "D-PSGD", "decentralized SGD: after every local step each DPU mixes its model with its gossip "
        "neighbours' over direct links (ring, or a 2-D torus); no host averaging",
        "pimmodel.costmodel.dpsgd", "pimmodel.emulator.decentral:dpsgd_epoch", links="global",
        study_like="ma-sgd", emulated_links=True, exchange_bytes_per_weight=16, gossips=True),
    OptimizerInfo(
        "allreduce-sgd", "All-reduce SGD", "GA-SGD with the gradient sum all-reduced over direct DPU links and "
        "the update done on every DPU; no host in the loop",
        "pimmodel.costmodel.allreduce_sgd", "pimmodel.emulator.decentral:allreduce_sgd_epoch", links="global",
        batch="global", study_like="ga-sgd", emulated_links=True, exchange_bytes_per_weight=8,
        shift_divides_global_batch=True, curve_of="ga-sgd"),
)}


class _Names(Sequence[str]):
    """The registry's names in registration order, read live (an optimizer registered later is in it)."""

    def __init__(self, keep: Callable[[OptimizerInfo], bool] = lambda info: True) -> None:
        self._keep = keep

    def _names(self) -> tuple[str, ...]:
        return tuple(n for n, i in REGISTRY.items() if self._keep(i))

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __eq__(self, other: object) -> bool:
        return self._names() == (tuple(other) if isinstance(other, Sequence) else other)

    def __hash__(self) -> int:
        return hash(self._names())

    def __repr__(self) -> str:
        return repr(self._names())


BUILT_IN: frozenset[str] = frozenset(REGISTRY)
OPTIMIZERS: Sequence[str] = _Names()
"""Every optimizer's name (live: ``register`` adds to it)."""
STUDY_OPTIMIZERS: tuple[str, ...] = tuple(n for n, i in REGISTRY.items() if i.study)


def register(info: OptimizerInfo) -> OptimizerInfo:
    """Add a plug-in optimizer (its equation module and trainer are loaded by their paths when first used); a
    name already taken is refused. Returns ``info``."""
    if info.name in REGISTRY:
        raise ValueError(f"optimizer {info.name!r} is already registered")
    check_choice(f"{info.name}: study_like", info.study_name, STUDY_OPTIMIZERS)
    REGISTRY[info.name] = info
    return info


def unregister(name: str) -> None:
    """Remove a plug-in optimizer added by ``register`` (the study's own entries stay)."""
    if name in BUILT_IN:
        raise ValueError(f"optimizer {name!r} is built in")
    del REGISTRY[name]


def optimizer_info(name: str) -> OptimizerInfo:
    """The registry entry of ``name`` (a one-line error naming the valid ones otherwise)."""
    from ..errors import unknown

    try:
        return REGISTRY[name]
    except KeyError:
        raise unknown("optimizer", name, OPTIMIZERS) from None


def takers(hyper: str) -> tuple[str, ...]:
    """The optimizers that take the hyper-parameter ``hyper``."""
    return tuple(n for n, i in REGISTRY.items() if hyper in i.takes)


def require_links(optimizer: str, topology: str, hardware: str, fix: str | None = None) -> None:
    """A one-line ``SpecError`` when ``hardware`` (with ``topology``) lacks the links ``optimizer`` needs; ``fix``
    replaces the default advice (another hardware spec)."""
    info = optimizer_info(optimizer)
    if topology in info.topologies:
        return
    have = "no direct DPU links" if topology == "none" else f"only {topology} links (they stop at the rank)"
    advice = fix or (f"use --hardware {LINKED_SPEC_HINT} or a spec with [interconnect] topology = "
                     f"\"{info.topologies[0]}\" (or {', '.join(info.topologies[1:])})")
    raise SpecError(f"{optimizer} needs direct links between all DPUs (interconnect topology "
                    f"{', '.join(info.topologies[:-1])} or {info.topologies[-1]}); {hardware} has {have}: {advice}")


def torus_shape(dpus: int) -> tuple[int, int]:
    """(rows, columns) of the 2-D torus N DPUs form: rows = the largest divisor of N not above sqrt(N) (a prime
    N gives one row: the torus degenerates to a ring whose up and down neighbours are the DPU itself)."""
    rows = max(r for r in range(1, int(dpus**0.5) + 1) if dpus % r == 0)
    return rows, dpus // rows


def gossip_neighbours(topology: str) -> int:
    """Neighbours a DPU mixes with: 2 on a ring; 4 on a 2-D torus (all-to-all links gossip on the torus)."""
    if topology == "ring":
        return 2
    if topology in ("torus", "all-to-all"):
        return 4
    raise SpecError(f"no gossip graph on interconnect topology {topology!r}; use ring, torus or all-to-all")
