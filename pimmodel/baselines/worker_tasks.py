"""What a measurement worker can do: train one case, or run one probe of a primitive.

Imported only inside the spawned workers (``parallel.py``), after the single-thread BLAS environment is set.
Every timing is the median of repeats; every task synchronises its processes with the barrier before the
clock starts, so concurrent probes really overlap.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import reference as ref


@dataclass
class WorkerContext:
    """A worker's rank, the team size, its view of the shared block and the team's barrier."""

    rank: int
    size: int
    shared: np.ndarray
    barrier: Any
    flags: np.ndarray
    done: np.ndarray
    cache: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    arrays: dict[tuple[Any, ...], dict[str, np.ndarray]] = field(default_factory=dict)

    def dataset(self, rows: int, features: int, model: str, seed: int, processes: int) -> tuple[np.ndarray, ...]:
        """This rank's shard, generated here (never timed) and kept for the team's lifetime: every case and pass
        of the same size reuses it (LR and SVM share the features; SVM's labels are LR's mapped to -1/+1)."""
        key = (rows, features, seed, processes)
        if key not in self.cache:
            part = ref.shard_rows(rows, processes, self.rank)
            self.cache[key] = ref.make_dataset(part.stop - part.start, features, "lr", seed, part=self.rank)
        x, y = self.cache[key]
        return x, (y if model == "lr" else (2 * y - 1).astype(np.float32))


POLLING_OK = platform.machine().lower() in ("x86_64", "amd64")
"""The flag barrier relies on x86's total store order (a vector written before its flag is visible before
it); elsewhere the exchange falls back to the team's sleeping barrier."""


class FlagBarrier:
    """A polling barrier over shared memory, as shared-memory collectives do: rank r publishes its barrier
    generation in its own flag and polls until every flag has reached it. It spins for up to
    ``SPIN_POLLS`` polls, then yields the CPU between polls (so a partner descheduled by another process on
    this core can run). No process ever sleeps on it, so meeting costs microseconds instead of a wake-up
    (~0.1 ms on a virtual machine)."""

    SPIN_POLLS = 200

    def __init__(self, flags: np.ndarray, rank: int, processes: int) -> None:
        self.flags = flags[:processes]
        self.rank = rank
        self.generation = int(self.flags[rank])

    def wait(self) -> None:
        self.generation += 1
        self.flags[self.rank] = self.generation
        flags, generation = self.flags, self.generation
        polls = 0
        while flags.min() < generation:
            polls += 1
            if polls > self.SPIN_POLLS:
                os.sched_yield()


@dataclass
class SharedExchange:
    """All-reduce mean and ADMM's gather/scatter through shared memory and one barrier per exchange.

    ``average`` double-buffers (rows [0, p) and [p, 2p) alternate), so one barrier per exchange is enough: a
    rank cannot overwrite a buffer before every rank has passed the next exchange's barrier, which it reaches
    only after reading. Rows [2p, 3p) return ``u_k - z`` in ADMM."""

    ctx: WorkerContext
    processes: int
    flip: int = 0
    barrier: Any = None

    def __post_init__(self) -> None:
        if self.barrier is None:
            self.barrier = (FlagBarrier(self.ctx.flags, self.ctx.rank, self.processes) if POLLING_OK
                            else self.ctx.barrier)

    def average(self, vector: np.ndarray) -> None:
        p, n = self.processes, vector.shape[0]
        buf = self.ctx.shared[self.flip * p:(self.flip + 1) * p, :n]
        self.flip ^= 1
        np.copyto(buf[self.ctx.rank], vector)
        self.barrier.wait()
        np.sum(buf, axis=0, out=vector)
        vector *= np.float32(1.0 / p)

    def admm_round(self, model: np.ndarray, config: ref.TrainConfig, out_u_minus_z: np.ndarray) -> None:
        p, n = self.processes, model.shape[0]
        buf = self.ctx.shared[:p, :n]
        back = self.ctx.shared[2 * p:3 * p, :n]
        np.copyto(buf[self.ctx.rank], model)
        self.barrier.wait()
        if self.ctx.rank == 0:
            host = self.ctx.__dict__.setdefault("admm_host", ref.AdmmHost(np.zeros((p, n), np.float32)))
            host.round(buf, config, back)
        self.barrier.wait()
        np.copyto(out_u_minus_z, back[self.ctx.rank])


def _exchange(ctx: WorkerContext, processes: int, size: int) -> ref.Exchange:
    return ref.LocalExchange(size) if processes == 1 else SharedExchange(ctx, processes)


CHUNKS_PER_EPOCH = 256
CHUNK_MIN_STEPS = 20
"""An epoch is timed in up to ``CHUNKS_PER_EPOCH`` chunks of at least ``CHUNK_MIN_STEPS`` whole batches (see
``train_case``): as many samples as possible, each long enough that the timing around it and the phase of a
lockstep partner do not matter (the probe times the same number of steps per sample)."""


def _chunk_rows(steps: int, batch_size: int) -> list[tuple[int, int]]:
    chunks = max(1, min(steps // CHUNK_MIN_STEPS, CHUNKS_PER_EPOCH))
    edges = [round(i * steps / chunks) * batch_size for i in range(chunks + 1)]
    return [(a, b) for a, b in zip(edges, edges[1:], strict=False) if b > a]


def train_case(ctx: WorkerContext, processes: int, rows: int, features: int, model: str, optimizer: str,
               batch_size: int, lr_shift: int, wd_shift: int, alpha_shift: int, epochs: int, warmup_epochs: int,
               seed: int) -> dict[str, Any]:
    """Train one case and time it (data generation and warm-up epochs excluded).

    Each epoch's steps run in consecutive chunks of whole batches, each chunk timed on its own, then the
    end-of-epoch exchange (ADMM) is timed; the epoch's wall time is kept too. ``measure.py`` turns the chunk
    times into a robust epoch time (a chunk that lost a time slice to another tenant's process is an outlier)."""
    x, y = ctx.dataset(rows, features, model, seed, processes)
    config = ref.TrainConfig(model, optimizer, batch_size, lr_shift, wd_shift, alpha_shift)
    state = ref.TrainState(features, batch_size)
    exchange = _exchange(ctx, processes, features + 1)
    ctx.__dict__.pop("admm_host", None)
    for _ in range(warmup_epochs):
        ref.run_epoch(x, y, state, config, exchange)
    steps = ref.steps_per_epoch(x.shape[0], batch_size)
    bounds = _chunk_rows(steps, batch_size)
    walls: list[float] = []
    chunk_s: list[list[float]] = []
    finish_s: list[float] = []
    clock = time.perf_counter
    for _ in range(epochs):
        if processes > 1:
            ctx.barrier.wait()
        durations = []
        start = clock()
        for a, b in bounds:
            t = clock()
            ref.run_steps(x[a:b], y[a:b], state, config, exchange)
            durations.append(clock() - t)
        t = clock()
        ref.finish_epoch(state, config, exchange)
        finish_s.append(clock() - t)
        walls.append(clock() - start)
        chunk_s.append(durations)
    return {"epoch_s": walls, "chunk_s": chunk_s, "chunk_steps": [(b - a) // batch_size for a, b in bounds],
            "finish_s": finish_s, "steps": steps}


LOW_QUANTILE = 0.2
"""The statistic of every short timing, probes and case chunks alike: a low quantile of many ~1 ms samples.
Other tenants' processes take whole time slices (4 ms ticks) from some samples; a low quantile keeps the
undisturbed ones without trusting a single lucky minimum (Python's ``timeit`` docs make the same argument
for the minimum). The study ran on an exclusive node (``srun --exclusive``)."""


def low_quantile(samples: list[float]) -> float:
    return float(np.quantile(np.asarray(samples), LOW_QUANTILE))


def _timed(fn: Callable[[], object], repeats: int) -> float:
    """The low quantile of ``repeats`` timings of ``fn``."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return low_quantile(samples)


def _together(ctx: WorkerContext, processes: int, fn: Callable[[], object], repeats: int) -> float:
    """``_timed`` with ``processes`` processes running ``fn`` at once for the whole measurement: a process that
    finishes its repeats keeps running ``fn`` (untimed) until every process has finished, so the last one is
    never timed alone (a concurrent probe must see its partners' load throughout)."""
    if processes == 1:
        return _timed(fn, repeats)
    done = ctx.done[:processes]
    done[ctx.rank] = 0
    ctx.barrier.wait()
    value = _timed(fn, repeats)
    done[ctx.rank] = 1
    while done.min() < 1:
        fn()
    ctx.barrier.wait()
    return value


def _sync(ctx: WorkerContext, processes: int) -> None:
    if processes > 1:
        ctx.barrier.wait()


def _probe_arrays(ctx: WorkerContext, working_set_bytes: int) -> dict[str, np.ndarray]:
    """The stream probe's arrays for one working-set size, allocated (and first touched) once per worker."""
    key = ("stream", working_set_bytes)
    if key not in ctx.arrays:
        n = max(1024, working_set_bytes // 12)
        cols = 4096
        ctx.arrays[key] = {"a": np.full(n, 1.0, np.float32), "b": np.full(n, 2.0, np.float32),
                           "c": np.zeros(n, np.float32),
                           "matrix": np.full((max(1, working_set_bytes // (4 * cols)), cols), 0.5, np.float32),
                           "vector": np.full(cols, 1.0, np.float32)}
    return ctx.arrays[key]


def probe_stream(ctx: WorkerContext, processes: int, working_set_bytes: int, repeats: int,
                 kernels: tuple[str, ...] = ("copy", "triad", "read", "matvec_read")) -> dict[str, float]:
    """STREAM-like copy, triad and read (dot) bandwidth of one process over a working set (three arrays), and
    the read bandwidth of the training kernel's own access: float32 matrix-vector products over a matrix of the
    same size, 1 MiB at a time (``matvec_read``, the model's bandwidth). The low quantile of the samples
    (STREAM reports the best; the cases' statistic is used here instead)."""
    arr = _probe_arrays(ctx, working_set_bytes)
    a, b, c, matrix, vector = arr["a"], arr["b"], arr["c"], arr["matrix"], arr["vector"]
    scalar = np.float32(3.0)

    def triad() -> None:
        np.multiply(b, scalar, out=c)
        np.add(c, a, out=c)

    runs: dict[str, tuple[Callable[[], object], float]] = {
        "copy": (lambda: np.copyto(c, a), 2.0 * a.nbytes), "triad": (triad, 5.0 * a.nbytes),
        "read": (lambda: np.dot(a, b), 2.0 * a.nbytes),
    }
    result = {}
    for name in kernels:
        if name == "matvec_read":
            result["matvec_read_bytes_per_s"] = _matvec_read_bytes_per_s(ctx, processes, matrix, vector, repeats)
            continue
        fn, moved = runs[name]
        result[f"{name}_bytes_per_s"] = moved / _together(ctx, processes, fn, repeats)
    return result


MATVEC_BLOCK_ROWS = 64
"""Rows per timed block of the matrix-vector read probe: 64 x 4096 float32 = 1 MiB, about one case chunk."""


def _matvec_read_bytes_per_s(ctx: WorkerContext, processes: int, matrix: np.ndarray, vector: np.ndarray,
                             sweeps: int) -> float:
    """Read bandwidth of matrix-vector products sweeping ``matrix`` block by block, each 1 MiB block timed on its
    own (the cases' chunk length and statistic), ``sweeps`` times over the whole matrix."""
    rows = min(MATVEC_BLOCK_ROWS, matrix.shape[0])
    out = np.zeros(rows, np.float32)
    starts = range(0, matrix.shape[0] - rows + 1, rows)
    samples: list[float] = []
    clock = time.perf_counter

    def sweep() -> None:
        for start in starts:
            t = clock()
            np.matmul(matrix[start:start + rows], vector, out=out)
            samples.append(clock() - t)

    sweep()
    samples.clear()
    timed_sweeps = max(1, sweeps // 4)
    _together(ctx, processes, sweep, timed_sweeps)
    timed = samples[:timed_sweeps * len(starts)]  # the company sweeps after them may run alone at the end
    block_bytes = rows * matrix.shape[1] * 4.0
    return block_bytes / low_quantile(timed)


def probe_matvec(ctx: WorkerContext, processes: int, rows: int, features: int, repeats: int,
                 inner: int) -> dict[str, float]:
    """Forward plus backward matrix-vector products on an in-cache ``rows x features`` block (the kernels'
    arithmetic, ``4 rows features`` flops), ``inner`` times per sample; flop/s of one core."""
    rng = np.random.default_rng(ctx.rank)
    x = rng.random((rows, features), dtype=np.float32)
    w = rng.random(features, dtype=np.float32)
    z = np.zeros(rows, np.float32)
    g = np.zeros(features, np.float32)

    def kernel() -> None:
        for _ in range(inner):
            np.matmul(x, w, out=z)
            np.matmul(z, x, out=g)

    kernel()
    seconds = _together(ctx, processes, kernel, repeats) / inner
    return {"matvec_flops_per_s": 4.0 * rows * features / seconds}


VECTOR_MIX_BYTES_PER_ELEMENT = 12 + 8 + 12
"""Bytes read + written per element by one round of ``probe_vector_op``'s mix."""
VECTOR_MIX_CALLS = 3


def probe_vector_op(ctx: WorkerContext, processes: int, length: int, repeats: int, inner: int) -> dict[str, float]:
    """In-cache element-wise float32 updates over ``length`` elements: the arithmetic mix the updates use (add,
    scale, subtract) and, timed apart, ``np.sign`` (ADMM's L1 subgradient; numpy has no SIMD loop for it).
    Bytes (read + written) per second, call costs included (``probe.py`` removes them). The inputs never
    drift, so no value enters the slow denormal range."""
    rng = np.random.default_rng(ctx.rank)
    w = rng.standard_normal(length).astype(np.float32)
    c = rng.standard_normal(length).astype(np.float32)
    v = np.empty(length, np.float32)
    scale = np.float32(1e-3)

    def mix() -> None:
        for _ in range(inner):
            np.add(w, c, out=v)
            np.multiply(v, scale, out=v)
            np.subtract(c, v, out=v)

    def sign() -> None:
        for _ in range(inner):
            np.sign(w, out=v)

    mix()
    sign()
    mix_s = _together(ctx, processes, mix, repeats) / inner
    sign_s = _together(ctx, processes, sign, repeats) / inner
    return {"vector_bytes_per_s": VECTOR_MIX_BYTES_PER_ELEMENT * length / mix_s,
            "sign_bytes_per_s": 8.0 * length / sign_s}


def probe_random(ctx: WorkerContext, processes: int, array_bytes: int, accesses: int,
                 repeats: int) -> dict[str, float]:
    """Independent random 4-byte reads from an array far larger than the caches (``np.take``), per access."""
    rng = np.random.default_rng(ctx.rank + 7)
    table = np.ones(array_bytes // 4, np.float32)
    index = rng.integers(0, table.size, accesses)
    out = np.empty(accesses, np.float32)
    np.take(table, index, out=out)
    return {"random_access_s": _together(ctx, processes, lambda: np.take(table, index, out=out), repeats) / accesses}


def probe_step(ctx: WorkerContext, processes: int, model: str, optimizer: str, batch_size: int, steps: int,
               repeats: int, exchange: bool = False) -> dict[str, float]:
    """The fixed cost of one training step of the reference: its steps on 8 features (the calls without their
    arithmetic), per step; with ``exchange`` the processes also exchange as in training (lockstep)."""
    features = 8
    x, y = ref.make_dataset(steps * batch_size, features, model, seed=11, part=ctx.rank)
    config = ref.study_config(model, optimizer, batch_size)
    state = ref.TrainState(features, batch_size)
    link = _exchange(ctx, processes, features + 1) if exchange else ref.LocalExchange(features + 1)
    ref.run_steps(x, y, state, config, link)
    def kernel() -> None:
        ref.run_steps(x, y, state, config, link)

    if exchange:  # lockstep: the processes run the same number of exchanges and finish together
        _sync(ctx, processes)
        return {"step_s": _timed(kernel, repeats) / steps}
    return {"step_s": _together(ctx, processes, kernel, repeats) / steps}


def probe_call_overhead(ctx: WorkerContext, processes: int, repeats: int, inner: int) -> dict[str, float]:
    """The fixed cost of one numpy call: a ufunc and a matmul on 8-element operands (no arithmetic to speak of)."""
    a = np.ones(8, np.float32)
    m = np.ones((1, 8), np.float32)
    out = np.zeros(8, np.float32)
    out1 = np.zeros(1, np.float32)

    def ufuncs() -> None:
        for _ in range(inner):
            np.multiply(a, a, out=out)

    def matmuls() -> None:
        for _ in range(inner):
            np.matmul(m, a, out=out1)

    ufuncs()
    matmuls()
    return {"ufunc_call_s": _together(ctx, processes, ufuncs, repeats) / inner,
            "matmul_call_s": _together(ctx, processes, matmuls, repeats) / inner}


def _spin(seconds: float) -> None:
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        pass


def probe_exchange(ctx: WorkerContext, processes: int, floats: int, repeats: int, inner: int,
                   work_s: float) -> dict[str, float]:
    """All-reduce means of a ``floats`` vector between ``processes`` processes (the sync primitive the training
    uses), each after ``work_s`` of busy work as a training step would do, with that work subtracted. The work
    matters: a process that waits for a partner still busy goes to sleep, and waking it costs far more (on a
    virtual machine, ~0.1 ms) than meeting a partner that is already waiting."""
    vector = np.ones(floats, np.float32)
    exchange = SharedExchange(ctx, processes)

    def kernel() -> None:
        for _ in range(inner):
            _spin(work_s)
            exchange.average(vector)

    kernel()
    _sync(ctx, processes)
    return {"exchange_s": max(0.0, _timed(kernel, repeats) / inner - work_s)}


TASKS: dict[str, Callable[..., Any]] = {
    "train": train_case,
    "stream": probe_stream,
    "matvec": probe_matvec,
    "vector": probe_vector_op,
    "random": probe_random,
    "step": probe_step,
    "calls": probe_call_overhead,
    "exchange": probe_exchange,
}
