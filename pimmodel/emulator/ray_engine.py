"""The DPU groups as Ray actors (``--engine ray [--address ADDR]``), on a Ray cluster or a local one.

One actor per contiguous group of DPUs (``group.split``; as many as ``workers`` or the cluster's CPUs): it
generates or reads its own shards in place (``Shards.part``, shipped as a few numbers or index arrays), keeps its
DPUs' local models, and runs the SPMD epoch of ``trainers.epochs``. Where the host combines the DPUs' results, the
actors meet in a ``Broker`` actor (asyncio): the reduction is a tree over the actors, each actor's partial sum of
its DPUs (the first level) added pairwise at the broker, exact integers, so the bits are one process's; float64
means gather the rows and add them in DPU order; gossip neighbours' rows are handed over the same way. Arrays
travel through Ray's object store (zero-copy within a node). The driver plays the host's bookkeeping: it asks every
actor for its next epoch, forwards rank 0's progress, and concatenates the traces (``trace.concat``).

Ctrl-C kills the actors (and a local cluster this call started) and re-raises ``KeyboardInterrupt``."""

from __future__ import annotations

import asyncio
import logging
import pickle
from typing import Any

import numpy as np
from numpy.typing import NDArray

try:
    import ray
except ModuleNotFoundError as exc:  # the optional extra
    if exc.name != "ray":
        raise
    from ..errors import SpecError

    raise SpecError("--engine ray needs Ray, an optional extra: pip install 'pimmodel[ray]'") from None

from ..resources import SINGLE_THREAD_ENV
from .config import Options, TrainConfig
from .data import Shards
from .group import Group, split
from .trainers import Progress, RunResult, _initial, epochs

POLL_S = 0.2


def tree_sum(parts: list[NDArray[np.int64]]) -> NDArray[np.int64]:
    """Pairwise (a binary tree over the actors, in rank order); exact for integers."""
    while len(parts) > 1:
        parts = [parts[i] + parts[i + 1] if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


@ray.remote(num_cpus=0)
class Broker:
    """Where the actors' results meet: every call waits for all ``size`` actors' contributions to the same
    (call number) and returns the combined result to each."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pending: dict[int, dict[str, Any]] = {}
        self.ticks: list[tuple[int, int]] = []

    async def _meet(self, key: int, rank: int, value: Any, combine: Any) -> Any:
        entry = self.pending.setdefault(key, {"parts": {}, "event": asyncio.Event(), "result": None, "left": 0})
        entry["parts"][rank] = value
        if len(entry["parts"]) == self.size:
            entry["result"] = combine([entry["parts"][r] for r in range(self.size)])
            entry["event"].set()
        else:
            await entry["event"].wait()
        entry["left"] += 1
        result = entry["result"]
        if entry["left"] == self.size:
            del self.pending[key]
        return result

    async def sum(self, key: int, rank: int, partial: NDArray[np.int64]) -> NDArray[np.int64]:
        return await self._meet(key, rank, partial, tree_sum)

    async def gather(self, key: int, rank: int, local: NDArray[Any], lo: int, n: int) -> NDArray[Any]:
        return await self._meet(key, rank, (lo, local), lambda parts: _assemble(parts, n))

    async def rows(self, key: int, rank: int, local: NDArray[Any], wanted: NDArray[np.int64], lo: int, n: int
                   ) -> NDArray[Any]:
        full = await self._meet(key, rank, (lo, local), lambda parts: _assemble(parts, n))
        return full[wanted]

    def tick(self, k: int, per: int) -> None:
        self.ticks.append((k, per))

    def take_ticks(self) -> list[tuple[int, int]]:
        out, self.ticks = self.ticks, []
        return out


def _assemble(parts: list[tuple[int, NDArray[Any]]], n: int) -> NDArray[Any]:
    first = parts[0][1]
    out = np.empty((n, *first.shape[1:]), first.dtype)
    for lo, local in parts:
        out[lo:lo + local.shape[0]] = local
    return out


class _RayComm:
    """``group.Comm`` through the broker; every actor makes the same calls in the same order (SPMD), so a call's
    number names it."""

    def __init__(self, broker: Any, rank: int) -> None:
        self.broker, self.rank, self.calls = broker, rank, 0

    def _call(self, method: str, *args: Any) -> Any:
        self.calls += 1
        return ray.get(getattr(self.broker, method).remote(self.calls, self.rank, *args))

    def sum(self, partial: NDArray[np.int64]) -> NDArray[np.int64]:
        return self._call("sum", np.asarray(partial, np.int64))

    def gather(self, local: NDArray[Any], lo: int, n: int) -> NDArray[Any]:
        return self._call("gather", np.asarray(local), lo, n)

    def rows(self, local: NDArray[Any], wanted: NDArray[np.int64], lo: int, n: int) -> NDArray[Any]:
        return self._call("rows", np.asarray(local), wanted, lo, n)


@ray.remote(num_cpus=1)
class DpuGroup:
    """The DPUs ``[lo, hi)`` of ``n``: their shards, local models and trace."""

    def __init__(self, payload: bytes, rank: int, n: int, lo: int, hi: int, broker: Any) -> None:
        shards, cfg, b = pickle.loads(payload)
        self.rank = rank

        def tick(k: int, per: int) -> None:
            broker.tick.remote(k, per)

        group = Group(n, lo, hi, _RayComm(broker, rank))
        self._epochs = epochs(shards, cfg, b, group, tick if rank == 0 else None)

    def next_epoch(self) -> tuple[int, Any, Any]:
        epoch, weights, tr = next(self._epochs)
        return epoch, weights if self.rank == 0 else None, tr


def run_ray(shards: Shards, cfg: TrainConfig, b: int, options: Options, on_epoch: Any, progress: Progress | None,
            align: int, collect: Any, local_cpus: int) -> RunResult:
    """``engine.run``'s Ray branch: groups bounded on multiples of ``align``; ``collect`` merges an epoch; a local
    cluster gets ``local_cpus`` CPUs unless ``options.workers`` says otherwise."""
    started = False
    if not ray.is_initialized():
        common: dict[str, Any] = dict(include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False,
                      runtime_env={"env_vars": SINGLE_THREAD_ENV})
        if options.address is None:  # a local cluster on loopback, as many CPUs as actors
            ray.init(num_cpus=options.workers or local_cpus, _node_ip_address="127.0.0.1", **common)
        else:
            ray.init(address=options.address, **common)
        started = True
    actors: list[Any] = []
    broker = None
    try:
        workers = options.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        bounds = split(shards.n_dpus, workers, align)
        broker = Broker.options(  # type: ignore[attr-defined]
            max_concurrency=max(16, 4 * len(bounds))).remote(len(bounds))
        for rank, (lo, hi) in enumerate(bounds):
            payload = pickle.dumps((shards.part(lo, hi), cfg, b))
            actors.append(DpuGroup.options(  # type: ignore[attr-defined]
                runtime_env={"env_vars": SINGLE_THREAD_ENV}).remote(
                payload, rank, shards.n_dpus, lo, hi, broker))
        result = RunResult(weights=_initial(shards, cfg), engine=f"ray ({len(bounds)} actors)")
        for _ in range(cfg.epochs):
            futures = [a.next_epoch.remote() for a in actors]
            while True:
                ready, _ = ray.wait(futures, num_returns=len(futures), timeout=POLL_S)
                if progress is not None:
                    for k, per in ray.get(broker.take_ticks.remote()):
                        progress(k, per)
                if len(ready) == len(futures):
                    break
            try:
                parts = ray.get(futures)
            except ray.exceptions.RayTaskError as err:
                cause = getattr(err, "cause", None)
                raise (cause if isinstance(cause, BaseException) else err) from None
            epoch = parts[0][0]
            collect(result, epoch, [(w, tr) for _, w, tr in parts], on_epoch)
        return result
    finally:
        for actor in actors:
            ray.kill(actor)
        if broker is not None:
            ray.kill(broker)
        if started:
            ray.shutdown()

