"""The CPU baseline model: seconds per epoch of ``compute``, ``memory``, ``sync`` and ``dispatch`` for p
processes training a linear model with MA-SGD, GA-SGD or ADMM (``phases.py`` defines the phases).

Every process runs the same loop over its shard of ``rows / p`` rows in batches of b, so one process's time is
the epoch's. Per step, with d features (nnz active per row) and the spec's per-core rates:

* dispatch = step_overhead(optimizer, model) + b * fetch_calls * index_op  (+ b * sparse_calls * index_op)
* compute  = 4 b nnz / matvec_rate  (forward + backward, dense)  +  update_bytes * d / vector_rate(d)
             (+ sign_bytes * d / sign_rate for ADMM-LR's L1 subgradient)
* memory   = max(0, b * row_bytes / bw(shard) - forward)  when the kernel streams the rows itself (numpy);
             b * row_bytes / bw(shard)  when a data loader copies the rows first (PyTorch's collate);
             + 2 b nnz * random_access  (sparse rows whose weights and gradient overflow the process's cache share)
* sync     = sum over the step's collectives of  ring: call + 2 (p-1) (latency + n / (p bw))
                                                  shared-memory: latency + n / bw
and ADMM adds once per epoch a gather and a scatter of the model (linear: call + (p-1)(latency + n/bw) each)
and rank 0's update of z and the duals.

bw(shard) is the bandwidth of the level that holds the shard: none needed in L2 (the in-cache rates already
include it), the last-level cache (its share per process), or DRAM (min of one core's limit and the socket's
sustained bandwidth shared by the processes on it). ``IMPLEMENTATIONS`` holds what differs between the study's
PyTorch code and the numpy reference, read from the code (D): calls per sample, update bytes, collectives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import SpecError
from .phases import CPU_PHASES, BaselinePrediction
from .specs import CpuSpec, assumptions_of
from .workload import BaselineWorkload, baseline_optimizer


@dataclass(frozen=True, slots=True)
class Implementation:
    """What one training implementation does per step beyond the spec's rates (counted from its code)."""

    name: str
    collate_copies_rows: bool
    keeps_partial_batch: bool
    fetch_calls_per_sample: dict[str, int]
    sparse_calls_per_sample: int
    update_bytes_per_feature: dict[tuple[str, str, str], float]
    sign_bytes_per_feature: dict[tuple[str, str, str], float]
    exchange_vectors: dict[str, tuple[str, ...]]
    admm_round_vectors: tuple[str, ...]
    admm_host_passes: int
    admm_host_calls_per_process: int
    admm_host_fixed_calls: int
    supports_sparse: bool


def _kinds(values: dict[str, float]) -> dict[tuple[str, str, str], float]:
    """Expand '{layout}/{optimizer}/{model}' keys ('*' = any model) into tuples."""
    out: dict[tuple[str, str, str], float] = {}
    for key, value in values.items():
        layout, optimizer, model = key.split("/")
        for m in (("lr", "svm") if model == "*" else (model,)):
            out[(layout, optimizer, m)] = value
    return out


PYTORCH_STUDY = Implementation(
    name="pytorch-study",
    collate_copies_rows=True,  # DataLoader default_collate stacks the fetched rows into a new batch tensor
    keeps_partial_batch=True,  # drop_last=False
    # YFCC100M.__getitem__: data[idx][1:] and data[idx][:1] (4 tensor-indexing calls); Criteo: 2
    fetch_calls_per_sample={"dense": 4, "sparse": 2},
    # smodel.py forward: index_select + sum + setitem; backward: grad[x] += v (index, add, index_put)
    sparse_calls_per_sample=6,
    # bytes read + written per model element per step (float32), counted in model.py / smodel.py:
    update_bytes_per_feature=_kinds({
        "dense/ma-sgd/*": 32,   # SGD weight decay add (12) + param add_ (12) + /= num_procs after all_reduce (8)
        "dense/ga-sgd/*": 48,   # SGD (24) + DDP: grad into bucket (8), / world (8), bucket back into grad (8)
        "dense/admm/*": 56,     # w + u_z (12), norm (4), its backward (8 + 8 + 12), SGD add_ (12)
        "sparse/ma-sgd/*": 60,  # zero_ (4), /= b (8), *= -lr (8), w + g (12), lr wd w (8), - (12), /= p (8)
        "sparse/ga-sgd/*": 60,  # same passes, the division by p on the gradient instead of the model
        "sparse/admm/lr": 60,   # step_l1: * wd (8), and the passes of step_l2 without the /= p; sgn below
        "sparse/admm/svm": 52,  # step_l2 without the /= p
    }),
    # sign passes: the backward of torch.norm(p=1) (dense ADMM-LR) and torch.sgn in smodel.step_l1
    sign_bytes_per_feature=_kinds({"dense/admm/lr": 8, "sparse/admm/lr": 8}),
    # per step: MA all-reduces weight then bias (2 calls); GA: DDP's one bucket (weight + bias); sparse GA:
    # model.grad only
    exchange_vectors={"dense/ma-sgd": ("model", "bias"), "dense/ga-sgd": ("model+bias",), "dense/admm": (),
                      "sparse/ma-sgd": ("model", "bias"), "sparse/ga-sgd": ("model",), "sparse/admm": ()},
    # per epoch: gather weight, gather bias, scatter u - z, scatter its bias
    admm_round_vectors=("model", "bias", "model", "bias"),
    admm_host_passes=8,  # stack w, mean, stack u, mean, update_z, per process: u += w - z (3), u - z (2)
    admm_host_calls_per_process=6,
    admm_host_fixed_calls=12,
    supports_sparse=True,
)

NUMPY_REFERENCE = Implementation(
    name="numpy-reference",
    collate_copies_rows=False,  # batches are views of the shard
    keeps_partial_batch=False,
    fetch_calls_per_sample={"dense": 0, "sparse": 0},
    sparse_calls_per_sample=0,
    update_bytes_per_feature=_kinds({
        "dense/ma-sgd/*": 28,   # w *= (8), g *= (8), w -= g (12)   [reference._sgd_update]
        "dense/ga-sgd/*": 28,
        "dense/admm/lr": 52,    # w + c (12), *= (8), g *= (8), w -= v (12), w -= g (12); np.sign below
        "dense/admm/svm": 56,   # w + c (12), norm (4), *= (8), g *= (8), w -= v (12), w -= g (12)
    }),
    sign_bytes_per_feature=_kinds({"dense/admm/lr": 8}),
    exchange_vectors={"dense/ma-sgd": ("model+bias",), "dense/ga-sgd": ("model+bias",), "dense/admm": ()},
    admm_round_vectors=("model+bias",),  # one barrier to gather, one to scatter: see admm_round in cpu.py
    admm_host_passes=7,  # mean w, mean u, add, soft-threshold (2), u += w - z (2 over p rows), u - z
    admm_host_calls_per_process=0,
    admm_host_fixed_calls=12,
    supports_sparse=False,
)

IMPLEMENTATIONS = {impl.name: impl for impl in (PYTORCH_STUDY, NUMPY_REFERENCE)}


@dataclass(frozen=True, slots=True)
class MemoryLevel:
    """Where a working set lives for one process, and the read bandwidth it gets from there."""

    name: str
    bytes_per_s: float


def processes_per_socket(spec: CpuSpec, processes: int) -> int:
    """Processes spread evenly over the sockets (Linux's default placement of busy processes)."""
    return max(1, math.ceil(processes / spec.sockets))


def llc_share_bytes(spec: CpuSpec, processes: int) -> float:
    """A process's share of its last-level cache group when ``processes`` spread over all groups."""
    groups = max(1, spec.cores // spec.llc_cores_per_group)
    sharing = min(spec.llc_cores_per_group, math.ceil(processes / groups))
    return spec.llc_bytes / max(1, sharing)


def dram_bytes_per_s(spec: CpuSpec, processes: int) -> float:
    """One process's DRAM read bandwidth: its core's limit, or its share of the socket's sustained bandwidth."""
    socket = spec.dram_peak_bytes_per_s * spec.dram_sustained_fraction
    return min(spec.dram_core_bytes_per_s, socket / processes_per_socket(spec, processes))


def memory_level(spec: CpuSpec, working_set_bytes: float, processes: int) -> MemoryLevel:
    """The level holding a process's working set: L2 (bandwidth infinite: the in-cache rates include it),
    the last-level cache, or DRAM."""
    if working_set_bytes <= spec.l2_bytes:
        return MemoryLevel("l2", math.inf)
    if working_set_bytes <= llc_share_bytes(spec, processes):
        return MemoryLevel("llc", spec.llc_bytes_per_s)
    return MemoryLevel("dram", dram_bytes_per_s(spec, processes))


def vector_rate(spec: CpuSpec, working_set_bytes: float, processes: int) -> float:
    """Element-wise update rate over the model's vectors: in-cache rate, capped by the level holding them
    (an update reads and writes, so the level's read bandwidth is shared by both)."""
    level = memory_level(spec, working_set_bytes, processes)
    return min(spec.vector_bytes_per_s, level.bytes_per_s)


def exchange_s(spec: CpuSpec, vector_bytes: float, processes: int) -> float:
    """One all-reduce of ``vector_bytes`` over ``processes`` (0 for one process: nothing to exchange)."""
    p = processes
    if p == 1:
        return 0.0
    if spec.sync_algorithm == "ring":
        return spec.sync_call_s + 2 * (p - 1) * (spec.sync_latency_s + vector_bytes / (p * spec.sync_bytes_per_s))
    return spec.sync_call_s + spec.sync_latency_s + vector_bytes / spec.sync_bytes_per_s


def linear_collective_s(spec: CpuSpec, vector_bytes: float, processes: int) -> float:
    """One gather or scatter to/from rank 0: rank 0 talks to every other process in turn (gloo's linear
    gather/scatter); shared memory: one barrier and the bytes of every process."""
    p = processes
    if p == 1:
        return 0.0
    if spec.sync_algorithm == "ring":
        return spec.sync_call_s + (p - 1) * (spec.sync_latency_s + vector_bytes / spec.sync_bytes_per_s)
    return spec.sync_call_s + spec.sync_latency_s + p * vector_bytes / spec.sync_bytes_per_s


def _vector_bytes(kind: str, w: BaselineWorkload) -> float:
    model_bytes, bias_bytes = 4.0 * w.features, 4.0
    return {"model": model_bytes, "bias": bias_bytes, "model+bias": model_bytes + bias_bytes}[kind]


def implementation_of(spec: CpuSpec) -> Implementation:
    return IMPLEMENTATIONS[spec.implementation]


def steps_per_epoch(w: BaselineWorkload, impl: Implementation) -> tuple[int, int]:
    """(shard rows, steps) of one process. PyTorch's DistributedSampler pads the shards to equal size and
    keeps the last partial batch; the numpy reference splits rows exactly and drops it."""
    if impl.keeps_partial_batch:
        shard = math.ceil(w.rows / w.processes)
        return shard, math.ceil(shard / w.batch_size)
    shard = w.rows // w.processes
    return shard, shard // w.batch_size


def step_phases(w: BaselineWorkload, spec: CpuSpec, impl: Implementation) -> dict[str, float]:
    """Seconds of each phase in one step of one process (ADMM's per-epoch round excluded)."""
    b, p, nnz = w.batch_size, w.processes, w.active_features
    optimizer = baseline_optimizer(w.optimizer).step_kind
    shard_rows, _ = steps_per_epoch(w, impl)
    dispatch = spec.step_overhead_s(optimizer, w.model)
    dispatch += b * impl.fetch_calls_per_sample[w.layout] * spec.index_op_s
    if w.layout == "sparse":
        dispatch += b * impl.sparse_calls_per_sample * spec.index_op_s
    forward = 2.0 * b * nnz / spec.matvec_flops_per_s
    compute = 2.0 * forward
    model_working_set = 4 * 4.0 * w.features  # weights, gradient and two temporaries
    kind = (w.layout, optimizer, w.model)
    update_bytes = impl.update_bytes_per_feature[kind] * (w.features + 1)
    sign_bytes = impl.sign_bytes_per_feature.get(kind, 0.0) * w.features
    compute += update_bytes / vector_rate(spec, model_working_set, p)
    compute += sign_bytes / min(spec.sign_bytes_per_s, vector_rate(spec, model_working_set, p))
    stream_bytes = b * w.row_bytes
    level = memory_level(spec, shard_rows * w.row_bytes, p)
    stream = 0.0 if math.isinf(level.bytes_per_s) else stream_bytes / level.bytes_per_s
    memory = stream if impl.collate_copies_rows else max(0.0, stream - forward)
    if impl.collate_copies_rows:
        compute += stream_bytes / spec.vector_bytes_per_s  # writing the batch copy
    if w.layout == "sparse" and 2 * 4.0 * w.features > llc_share_bytes(spec, p):
        # gathers from the weights in forward, scatter-adds into the gradient in backward: both vectors are
        # touched at random, and together they overflow the process's cache share
        memory += 2.0 * b * nnz * spec.dram_random_access_s
    vectors = impl.exchange_vectors[f"{w.layout}/{optimizer}"]
    sync = sum(exchange_s(spec, _vector_bytes(v, w), p) for v in vectors)
    return {"compute": compute, "memory": memory, "sync": sync, "dispatch": dispatch}


def admm_round_phases(w: BaselineWorkload, spec: CpuSpec, impl: Implementation) -> dict[str, float]:
    """ADMM's once-per-epoch exchange: gather the local models on rank 0, update z and the duals there,
    scatter u_k - z back. The numpy reference does it with two barriers over shared memory."""
    p = w.processes
    host_bytes = impl.admm_host_passes * 8.0 * p * (w.features + 1)
    host_s = host_bytes / vector_rate(spec, 3 * 4.0 * p * (w.features + 1), p)
    calls = impl.admm_host_fixed_calls + impl.admm_host_calls_per_process * p
    dispatch = calls * spec.index_op_s
    if impl.name == "numpy-reference":
        sync = 0.0 if p == 1 else 2 * linear_collective_s(spec, _vector_bytes("model+bias", w), p)
    else:
        sync = sum(linear_collective_s(spec, _vector_bytes(v, w), p) for v in impl.admm_round_vectors)
    return {"compute": host_s, "memory": 0.0, "sync": sync, "dispatch": dispatch}


def predict_cpu(w: BaselineWorkload, spec: CpuSpec) -> BaselinePrediction:
    """Seconds per epoch of every CPU phase for workload ``w`` on ``spec`` (its implementation included)."""
    impl = implementation_of(spec)
    if w.layout == "sparse" and not impl.supports_sparse:
        raise SpecError(f"CPU spec {spec.name!r} runs the {impl.name} implementation, which has no sparse "
                        "path; predict sparse data with a pytorch-study spec such as amd-epyc-7742-2s")
    if baseline_optimizer(w.optimizer).one_device and w.processes != 1:
        raise SpecError(f"optimizer {w.optimizer!r} is single-process mini-batch SGD; use ga-sgd for several "
                        "processes")
    if w.processes > spec.cores:
        raise SpecError(f"{w.processes} processes exceed the {spec.cores} cores of {spec.name!r} "
                        "(the model assumes one process per core)")
    shard_rows, steps = steps_per_epoch(w, impl)
    if steps < 1:
        raise SpecError(f"a shard of {shard_rows} rows holds no full batch of {w.batch_size}")
    per_step = step_phases(w, spec, impl)
    per_epoch = {phase: steps * per_step[phase] for phase in CPU_PHASES}
    if baseline_optimizer(w.optimizer).epoch_round:
        for phase, seconds in admm_round_phases(w, spec, impl).items():
            per_epoch[phase] += seconds
    per_epoch["total"] = sum(per_epoch[p] for p in CPU_PHASES)
    bottleneck = max(CPU_PHASES, key=lambda phase: per_epoch[phase])
    level = memory_level(spec, shard_rows * w.row_bytes, w.processes)
    details = {"shard_rows": float(shard_rows), "shard_bytes": float(shard_rows * w.row_bytes),
               "stream_bytes_per_s": level.bytes_per_s if not math.isinf(level.bytes_per_s) else 0.0,
               "dram_bytes_per_s_per_process": dram_bytes_per_s(spec, w.processes),
               **{f"step_{k}_s": v for k, v in per_step.items()}}
    structure = structure_of(w, spec)
    missing = [f"{k} {v['value']}" for k, v in structure.items() if not v["run_here"]]
    run = [f"{k} {v['value']}" for k, v in structure.items() if v["run_here"]]
    validated = not missing
    validation = ("structure run here by pimmodel baseline measure (" + ", ".join(run) + "): the model's "
                  "structure is checked against real training of it" if validated else
                  "NOT validated as a whole: pimmodel baseline measure does not run " + ", ".join(missing) +
                  (" (it runs " + ", ".join(run) + ")" if run else ""))
    validation += "; constants tagged A are assumptions (assumed_constants)"
    return BaselinePrediction(
        device="cpu", spec=spec.name, workload=w.to_record(), per_epoch_s=per_epoch, epochs=w.epochs,
        steps_per_epoch=steps, combine="sum", bottleneck=bottleneck, validated=validated, validation=validation,
        assumptions=tuple(cpu_model_assumptions(spec, level.name) + assumptions_of(spec)), details=details,
        structure=structure, assumed_constants=tuple(assumed_constant_names(spec)),
        interval=_latency_interval(w, spec))


RUN_HERE: dict[str, tuple[Any, ...]] = {
    "implementation": ("numpy-reference", "pytorch-study"),
    "exchange": ("shared-memory", "ring"),
    "processes": (1, 2),
    "layout": ("dense",),
}
"""What ``pimmodel baseline measure`` runs on this machine (a 2-core VM): the numpy reference implementation
with its shared-memory exchange on 1 and 2 processes, and (torch extra) the study's PyTorch loop with gloo's
ring all-reduce on 2 processes, dense data only. A prediction whose structure leaves these (128 processes, the
sparse path) is not validated as a whole (its record says which parts were run)."""

GLOO_LATENCY_RANGE_S = (5e-6, 50e-6)
"""The plausible range of one gloo ring step's latency (loopback TCP between processes of one 2-socket server),
tag A, from published all-reduce measurements: a 64 KB gloo all_reduce on a 2-socket Xeon node took 0.23 ms
(DeepSpeed PR #5391, 2024; about 16 us per step of an 8-rank ring's 14 steps, bandwidth included); a shared-memory
all-reduce of 10 KB on a 2-socket server with 8 ranks takes 12-15 us (DeepSpeed PR #4049, 2023: under 1 us per
step, the floor gloo's TCP transport cannot reach, one loopback round trip being several us); gloo's ring over
TCP between two servers takes 354 us for 1 KB (pytorch/gloo issue #158, 2018). 5 us is a loopback message with
nothing else running; 50 us is 3x the 8-rank figure, for 128 processes on 128 cores waking each other's gloo
threads through epoll. The spec's 15 us lies inside."""


def structure_of(w: BaselineWorkload, spec: CpuSpec) -> dict[str, dict[str, Any]]:
    """Each part of the predicted run's structure, its value and whether it is run here (``RUN_HERE``)."""
    exchange = "none (1 process)" if w.processes == 1 else spec.sync_algorithm
    parts = {"implementation": spec.implementation, "exchange": exchange, "processes": w.processes,
             "layout": w.layout}
    return {k: {"value": v, "run_here": v in RUN_HERE[k] or (k == "exchange" and w.processes == 1)}
            for k, v in parts.items()}


def assumed_constant_names(spec: CpuSpec) -> list[str]:
    """The spec constants tagged A, as 'section.key'."""
    return [a.split(" = ", 1)[0] for a in assumptions_of(spec)]


def _latency_interval(w: BaselineWorkload, spec: CpuSpec) -> dict[str, Any] | None:
    """The epoch at both ends of the gloo latency's plausible range, when the spec's exchange latency is an
    assumption of a ring (gloo) exchange over several processes."""
    if w.processes == 1 or spec.sync_algorithm != "ring" or "sync.latency_us" not in assumed_constant_names(spec):
        return None
    low, high = (predict_epoch_s(w, spec.replace(sync_latency_s=v)) for v in GLOO_LATENCY_RANGE_S)
    return {"epoch_s": [low, high], "decided_by": "sync.latency_us",
            "range": [v * 1e6 for v in GLOO_LATENCY_RANGE_S], "unit": "us",
            "source": "A: published gloo / shared-memory all-reduce latencies on 2-socket servers "
                      "(baselines.cpu.GLOO_LATENCY_RANGE_S)"}


def predict_epoch_s(w: BaselineWorkload, spec: CpuSpec) -> float:
    """The predicted epoch alone (no interval, no record)."""
    impl = implementation_of(spec)
    _, steps = steps_per_epoch(w, impl)
    per_step = step_phases(w, spec, impl)
    total = steps * sum(per_step[p] for p in CPU_PHASES)
    if baseline_optimizer(w.optimizer).epoch_round:
        total += sum(admm_round_phases(w, spec, impl).values())
    return total


def cpu_model_assumptions(spec: CpuSpec, level: str) -> list[str]:
    """The model's structural assumptions, listed with every CPU prediction."""
    return [
        "one process per core, all processes do identical work; no load imbalance or OS noise at barriers",
        "processes spread evenly over sockets and cache groups; data placed evenly over the sockets' memory",
        f"the shard streams from {level} once per epoch; the forward pass overlaps it when the kernel reads "
        "the rows directly, a data-loader copy does not",
        "arithmetic at in-cache per-core rates; per-step framework costs are fixed per call",
    ]
