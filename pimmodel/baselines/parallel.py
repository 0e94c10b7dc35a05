"""A small team of worker processes for measurements: spawned once, one BLAS thread each, a barrier and a
shared-memory block for exchanges.

Why spawned processes: BLAS reads its thread count when numpy is first imported, so the workers start from a
clean interpreter with ``OPENBLAS_NUM_THREADS=1`` (and its siblings) set; 1 versus 2 processes then means 1
versus 2 cores, like the study's ``torch.set_num_threads(1)`` per process. The team is started once per
measurement run (start-up costs ~0.5 s) and serves every case and probe: a 1-process task runs on worker 0
only while worker 1 sleeps on its queue.

Tasks are ``(name, kwargs)`` pairs dispatched to functions registered in ``TASKS`` (``worker_tasks.py``); each
worker answers ``(rank, ok, payload)``. A worker's exception comes back as text and is raised here as a
one-line ``SpecError``, so a failed measurement never hangs the CLI.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue
import signal
import threading
from dataclasses import dataclass
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

from ..errors import SpecError
from ..resources import single_threaded_children

BARRIER_TIMEOUT_S = 120.0
RESULT_TIMEOUT_S = 600.0


FLAG_STRIDE_BYTES = 64
"""One cache line per process flag, so polling one flag never contends with another's writes."""


@dataclass(frozen=True, slots=True)
class SharedBlock:
    """Where a worker finds the shared block: ``slots`` rows of ``width`` float32, then one cache line of int64
    flags per process (``flags`` and ``done``)."""

    name: str
    slots: int
    width: int
    processes: int

    @property
    def data_bytes(self) -> int:
        return self.slots * self.width * 4

    @property
    def size_bytes(self) -> int:
        return self.data_bytes + self.processes * FLAG_STRIDE_BYTES

    def view(self, shm: SharedMemory) -> np.ndarray:
        return np.ndarray((self.slots, self.width), np.float32, buffer=shm.buf)

    def _lines(self, shm: SharedMemory) -> np.ndarray:
        return np.ndarray((self.processes, FLAG_STRIDE_BYTES // 8), np.int64, buffer=shm.buf, offset=self.data_bytes)

    def flags(self, shm: SharedMemory) -> np.ndarray:
        """One barrier generation per process (``worker_tasks.FlagBarrier``)."""
        return self._lines(shm)[:, 0]

    def done(self, shm: SharedMemory) -> np.ndarray:
        """One done-flag per process (``worker_tasks._together``)."""
        return self._lines(shm)[:, 1]


def _pin_to_core(rank: int, size: int) -> None:
    """Pin worker ``rank`` to its own core when there are enough: p processes then always run on p cores,
    even for a probe too short for the scheduler to spread processes that woke up on the same core."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return
    if len(cores) >= size:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {cores[rank]})


def _worker_main(rank: int, size: int, block: SharedBlock, barrier: Any, inbox: Any, outbox: Any) -> None:
    from . import worker_tasks

    _pin_to_core(rank, size)
    shm = SharedMemory(name=block.name)
    try:
        context = worker_tasks.WorkerContext(rank, size, block.view(shm), barrier, block.flags(shm),
                                             block.done(shm))
        while True:
            message = inbox.get()
            if message is None:
                break
            name, kwargs = message
            try:
                outbox.put((rank, True, worker_tasks.TASKS[name](context, **kwargs)))
            except BaseException as exc:  # report, never hang the parent
                outbox.put((rank, False, f"{type(exc).__name__}: {exc}"))
                if isinstance(exc, KeyboardInterrupt):
                    raise
        del context
    finally:
        shm.close()


class Team:
    """``size`` spawned workers. Use as a context manager; ``run(name, processes, **kwargs)`` runs a task on
    worker 0 alone or on all workers at once and returns their payloads in rank order."""

    def __init__(self, size: int = 2, shared_floats: int = 1 << 20) -> None:
        if size < 1:
            raise SpecError(f"a team needs at least one worker, got {size}")
        ctx = mp.get_context("spawn")
        slots = 3 * size
        width = max(1, shared_floats)
        block = SharedBlock("", slots, width, size)
        self._shm = SharedMemory(create=True, size=block.size_bytes)
        self.block = SharedBlock(self._shm.name, slots, width, size)
        self.block.flags(self._shm)[:] = 0
        self.block.done(self._shm)[:] = 0
        self.size = size
        self._barrier = ctx.Barrier(size, timeout=BARRIER_TIMEOUT_S)
        self._outbox = ctx.Queue()
        self._inboxes = [ctx.Queue() for _ in range(size)]
        with single_threaded_children():
            self._workers = [ctx.Process(target=_worker_main, daemon=True, name=f"pimmodel-baseline-{rank}",
                                         args=(rank, size, self.block, self._barrier, self._inboxes[rank],
                                               self._outbox))
                             for rank in range(size)]
            main = threading.current_thread() is threading.main_thread()
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
            try:  # a terminal's Ctrl-C reaches the whole process group: only the parent takes it, and ends the team
                for w in self._workers:
                    w.start()
            finally:
                if main:
                    signal.signal(signal.SIGINT, previous)

    def run(self, name: str, processes: int, **kwargs: Any) -> list[Any]:
        if processes not in (1, self.size):
            raise SpecError(f"this team has {self.size} workers; a task runs on 1 or all {self.size} "
                            f"(its barrier has {self.size} parties), not {processes}")
        for rank in range(processes):
            self._inboxes[rank].put((name, {"processes": processes, **kwargs}))
        results: dict[int, Any] = {}
        errors: list[str] = []
        for _ in range(processes):
            try:
                rank, ok, payload = self._outbox.get(timeout=RESULT_TIMEOUT_S)
            except queue.Empty:
                raise SpecError(f"measurement task {name!r} did not finish within {RESULT_TIMEOUT_S:.0f} s") from None
            if ok:
                results[rank] = payload
            else:
                errors.append(f"worker {rank}: {payload}")
        if errors:
            raise SpecError(f"measurement task {name!r} failed: {'; '.join(errors)}")
        return [results[r] for r in range(processes)]

    def close(self, at_once: bool = False) -> None:
        """Stop the workers: after their current task, or ``at_once`` (an interrupt) by SIGTERM, which ends a
        worker without a word."""
        for box in self._inboxes:
            box.put(None)
        for w in self._workers:
            if at_once:
                w.terminate()
            w.join(timeout=1 if at_once else 10)
            if w.is_alive():
                w.terminate()
                w.join(timeout=5)
        self._shm.close()
        self._shm.unlink()

    def __enter__(self) -> Team:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_exc: object) -> None:
        self.close(at_once=kind is not None and issubclass(kind, KeyboardInterrupt))
