"""Where the DPUs run: in this process (``serial``), split over local worker processes (``process``), or as Ray
actors on a Ray cluster (``ray``, ``ray_engine.py``). Every engine trains the same bits.

The DPUs are split into contiguous groups (``group.split``; hier-sgd's groups start a rank, so its rank averages
stay inside a group). Each worker generates or reads its own DPUs' shards in place (``Shards.part``), keeps their
local models, and runs the SPMD epoch of ``trainers.epochs``; where the host combines the DPUs' results the
workers meet in their ``Comm``. Here that is shared memory: each worker writes its partial sum (its DPUs'
int64 sum: the first level of the reduction tree) into its slot of a shared block, and after a barrier every
worker adds the slots in rank order (exact integers, so the same bits as one process); float64 means gather every
DPU's rows into a shared block and add them in DPU order, as one process does. Each epoch the workers send their
DPUs' traces, which are concatenated along the DPU axis (the host's counts, the same in every worker, are taken
once and checked equal).

Ctrl-C stops the workers (they ignore SIGINT themselves) and re-raises ``KeyboardInterrupt`` here; a worker's
error is raised here as it was raised there."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import queue
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import SpecError
from ..resources import single_threaded_children
from ..specs import Workload
from ..specs.optimizers import optimizer_info
from .config import ENGINE_OPTIONS, ENGINES, Options, TrainConfig
from .data import Shards
from .group import Group, split
from .trace import Trace, concat
from .trainers import Progress, RunResult, Weights, _initial, check_config, epochs, model_length, train

AUTO_MIN_WORK = 2e8
"""``engine="auto"``: processes only for runs of at least this many multiply-accumulates (dense) or sparse slot
updates per epoch (about a CPU-second: below it the workers' start-up, ~0.5 s each, is not won back)."""
BARRIER_TIMEOUT_S = 3600.0
POLL_S = 0.2

OnEpoch = Callable[[int, Weights, Trace], None]


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def align(cfg: TrainConfig, n: int) -> int:
    """The multiple every group bound must be: a rank for hier-sgd (its rank averages stay in a group), else 1."""
    return min(n, cfg.dpus_per_rank) if optimizer_info(cfg.optimizer).rank_groups else 1


def _engine(o: Options, work: float) -> str:
    if o.engine not in ENGINES:
        from ..errors import unknown

        raise unknown("engine", o.engine, ENGINES)
    if o.address is not None and o.engine not in ENGINE_OPTIONS["address"]:
        raise SpecError("--address is the Ray cluster to run on; give it with --engine ray")
    if o.workers is not None and o.engine not in ENGINE_OPTIONS["workers"]:
        raise SpecError(f"--workers does not apply to --engine {o.engine} (it runs in this process); drop it, or "
                        f"use --engine {' or '.join(ENGINE_OPTIONS['workers'])}")
    if o.workers is not None and o.workers < 1:
        raise SpecError(f"--workers must be a positive whole number, got {o.workers}")
    if o.engine != "auto":
        return o.engine
    workers = o.workers or usable_cores()
    # a process that is itself a worker (a pool's, e.g. the reproduced figures' curves) keeps its DPUs: its
    # siblings already use the cores, and a daemonic process may not start children
    nested = mp.parent_process() is not None
    return "process" if workers > 1 and work >= AUTO_MIN_WORK and not nested else "serial"


def _work(dpus: int, rows: int, features: int, layout: str) -> float:
    return float(dpus) * rows * (2 * features if layout == "dense" else 39 * 2)


def planned_workers(w: Workload, o: Options) -> int:
    """Worker processes on this machine the run will start (0: it runs here; a Ray run's workers count as local
    when no address is given)."""
    engine = _engine(o, _work(w.dpus, w.rows_per_dpu, w.dataset.features, w.dataset.layout))
    if engine == "serial" or (engine == "ray" and o.address is not None):
        return 0
    return min(w.dpus, o.workers or usable_cores())


def run(shards: Shards, cfg: TrainConfig, options: Options, on_epoch: OnEpoch | None = None,
        progress: Progress | None = None) -> RunResult:
    """Train ``cfg.epochs`` epochs on the engine ``options`` ask for (``on_epoch`` after each, here)."""
    engine = _engine(options, _work(shards.n_dpus, shards.rows_per_dpu, shards.features, shards.layout))
    if engine == "serial":
        return train(shards, cfg, on_epoch, progress)
    b = check_config(shards, cfg)
    if engine == "ray":
        from .ray_engine import run_ray  # Ray loads only here (an optional extra)

        return run_ray(shards, cfg, b, options, on_epoch, progress, align(cfg, shards.n_dpus), collect, usable_cores())
    workers = options.workers or usable_cores()
    bounds = split(shards.n_dpus, workers, align(cfg, shards.n_dpus))
    if len(bounds) == 1:
        return train(shards, cfg, on_epoch, progress)
    return _run_processes(shards, cfg, b, bounds, on_epoch, progress)


def initial_weights(shards: Shards, cfg: TrainConfig) -> Weights:
    return _initial(shards, cfg)


def collect(result: RunResult, epoch: int, parts: list[tuple[Weights | None, Trace]],
            on_epoch: OnEpoch | None) -> None:
    """One epoch's results of every group (rank order): the global model (rank 0's) and the run's trace."""
    weights = parts[0][0]
    assert weights is not None  # rank 0 sends the model
    tr = concat([t for _, t in parts])
    result.weights = weights
    result.epoch_weights.append(weights)
    result.traces.append(tr)
    if on_epoch is not None:
        on_epoch(epoch, weights, tr)


# ---------------------------------------------------------------- local worker processes
@dataclass(frozen=True)
class _Block:
    """A shared int64 or float64 block of ``rows`` x ``width``."""

    name: str
    rows: int
    width: int
    dtype: str

    def view(self, shm: SharedMemory) -> NDArray[Any]:
        return np.ndarray((self.rows, self.width), np.dtype(self.dtype), buffer=shm.buf)


class _ShmComm:
    """``group.Comm`` over shared memory and a barrier (see the module docstring)."""

    def __init__(self, rank: int, bounds: list[tuple[int, int]], barrier: Any, blocks: dict[str, _Block]) -> None:
        self.rank, self.bounds, self.barrier = rank, bounds, barrier
        self._shm = {k: SharedMemory(name=b.name) for k, b in blocks.items()}
        self._views = {k: blocks[k].view(self._shm[k]) for k in blocks}

    def _block(self, name: str, what: str) -> NDArray[Any]:
        if name not in self._views:
            raise RuntimeError(f"the process engine allocated no shared block for {what}")
        return self._views[name]

    def sum(self, partial: NDArray[np.int64]) -> NDArray[np.int64]:
        """One barrier per sum: calls alternate between two sets of slots, and a worker can only write a set
        again after the next call's barrier, which every worker reaches after reading it."""
        flat = np.ascontiguousarray(partial, dtype=np.int64).reshape(-1)
        size = len(self.bounds)
        self._calls = getattr(self, "_calls", 0) + 1
        slots = self._block("sum", "sums")[(self._calls % 2) * size:][:size]
        slots[self.rank, : flat.size] = flat
        self.barrier.wait()
        total = slots[0, : flat.size].copy()
        for r in range(1, size):
            total += slots[r, : flat.size]
        return total.reshape(np.shape(partial))

    def _all_rows(self, name: str, local: NDArray[Any], lo: int, n: int) -> NDArray[Any]:
        block = self._block(name, "rows")
        width = int(np.prod(local.shape[1:], dtype=np.int64))
        block[lo:lo + local.shape[0], :width] = np.asarray(local).reshape(local.shape[0], width)
        self.barrier.wait()
        return block[:n, :width]

    def gather(self, local: NDArray[Any], lo: int, n: int) -> NDArray[Any]:
        rows = self._all_rows("gather", local, lo, n)
        out = rows.astype(local.dtype).reshape(-1, *local.shape[1:])
        self.barrier.wait()
        return out

    def rows(self, local: NDArray[Any], wanted: NDArray[np.int64], lo: int, n: int) -> NDArray[Any]:
        rows = self._all_rows("rows", local, lo, n)
        out = rows[wanted].astype(local.dtype).reshape(len(wanted), *local.shape[1:])
        self.barrier.wait()
        return out

    def close(self) -> None:
        self._views.clear()
        for shm in self._shm.values():
            shm.close()


def _worker(rank: int, bounds: list[tuple[int, int]], payload: bytes, barrier: Any, blocks: dict[str, _Block],
            outbox: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops the workers
    comm = None
    try:
        shards, cfg, b = pickle.loads(payload)
        comm = _ShmComm(rank, bounds, barrier, blocks)
        n = bounds[-1][1]
        lo, hi = bounds[rank]

        def tick(k: int, per: int) -> None:
            outbox.put(("progress", rank, k, per))

        for epoch, weights, tr in epochs(shards, cfg, b, Group(n, lo, hi, comm), tick if rank == 0 else None):
            outbox.put(("epoch", rank, epoch, weights if rank == 0 else None, tr, time.process_time()))
    except BaseException as exc:  # report, never hang the parent
        with contextlib.suppress(Exception):
            barrier.abort()
        try:
            outbox.put(("error", rank, pickle.dumps(exc), f"{type(exc).__name__}: {exc}"))
        except Exception:  # an exception that does not pickle
            outbox.put(("error", rank, None, f"{type(exc).__name__}: {exc}"))
    finally:
        if comm is not None:
            comm.close()


def _blocks_needed(shards: Shards, cfg: TrainConfig, workers: int) -> dict[str, tuple[int, int, str]]:
    d = shards.features if shards.layout == "dense" else model_length(shards.features, cfg.tasklets)
    n = shards.n_dpus
    need = {"sum": (2 * workers, d + 1, "int64")}
    if cfg.arithmetic != "fixed":
        need["gather"] = (n, d + 1, "float64")
    if optimizer_info(cfg.optimizer).gossips:
        need["rows"] = (n, d, "int64" if cfg.arithmetic == "fixed" else "float64")
    return need


def _run_processes(shards: Shards, cfg: TrainConfig, b: int, bounds: list[tuple[int, int]],
                   on_epoch: OnEpoch | None, progress: Progress | None) -> RunResult:
    ctx = mp.get_context("spawn")
    workers = len(bounds)
    made: list[SharedMemory] = []
    procs: list[Any] = []
    barrier = ctx.Barrier(workers, timeout=BARRIER_TIMEOUT_S)
    outbox = ctx.Queue()
    result = RunResult(weights=initial_weights(shards, cfg), engine=f"process ({workers} workers)")
    try:
        blocks = {}
        for key, (rows, width, dtype) in _blocks_needed(shards, cfg, workers).items():
            shm = SharedMemory(create=True, size=max(8, rows * width * np.dtype(dtype).itemsize))
            made.append(shm)
            blocks[key] = _Block(shm.name, rows, width, dtype)
        with single_threaded_children():
            for rank, (lo, hi) in enumerate(bounds):
                payload = pickle.dumps((shards.part(lo, hi), cfg, b))
                proc = ctx.Process(target=_worker, args=(rank, bounds, payload, barrier, blocks, outbox),
                                   name=f"pimmodel-dpus-{rank}", daemon=True)
                proc.start()
                procs.append(proc)
        pending: dict[int, list[Any]] = {}
        cpu = [0.0] * workers
        done = 0
        while done < cfg.epochs:
            try:
                message = outbox.get(timeout=POLL_S)
            except queue.Empty:
                dead = [p for p in procs if not p.is_alive() and p.exitcode not in (0, None)]
                if dead:
                    code = dead[0].exitcode
                    raise RuntimeError(f"emulator worker {dead[0].name} died (exit code {code}; -9: killed, out "
                                       "of memory?); a script that calls the emulator with worker processes "
                                       "must guard its main code with `if __name__ == '__main__':`") from None
                continue
            kind, rank = message[0], message[1]
            if kind == "progress":
                if progress is not None:
                    progress(message[2], message[3])
            elif kind == "error":
                if message[2] is not None:
                    raise pickle.loads(message[2])
                raise RuntimeError(f"emulator worker {rank}: {message[3]}")
            else:
                epoch = message[2]
                parts = pending.setdefault(epoch, [None] * workers)
                parts[rank] = (message[3], message[4])
                cpu[rank] = message[5]
                if all(p is not None for p in parts):
                    collect(result, epoch, pending.pop(epoch), on_epoch)
                    done += 1
        for proc in procs:
            proc.join(timeout=30)
        result.worker_cpu_s = cpu
        return result
    finally:
        _stop(procs, barrier)
        for shm in made:
            shm.close()
            with contextlib.suppress(FileNotFoundError):
                shm.unlink()


def _stop(procs: list[Any], barrier: Any) -> None:
    """Stop the workers this call started (by their handles), whatever state they are in."""
    with contextlib.suppress(Exception):
        barrier.abort()
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + 10
    for proc in procs:
        proc.join(timeout=max(0.1, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=5)


def describe(result: RunResult) -> str:
    return result.engine

