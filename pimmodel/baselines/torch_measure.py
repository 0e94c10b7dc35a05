"""The study's own CPU stack on this machine: PyTorch with ``torch.distributed`` gloo (optional extra ``torch``).

``run_torch_measurement`` spawns as many processes as the machine has cores (``mp.spawn``, gloo over loopback
TCP, one thread each, as the study's ``baseline/train_*_cpu.py``), and in that team

1. probes the primitives the CPU model's ``pytorch-study`` implementation needs, none of them a training loop:
   the cost of one eager PyTorch call with autograd (a mix of small tensor ops, forward and backward), of one
   tensor-indexing call (each the median of ``CHUNKS`` chunks, the statistic the cases' epochs use too), and
   the gloo all-reduce curve (median per size) (seconds against bytes, 4 B to 1 MiB), fitted as
   ``t(n) = t0 + n / bw``; with p processes a ring all-reduce is ``2 (p - 1)`` steps, so the step latency is
   ``t0 / (2 (p - 1))`` (the call cost cannot be told apart from it with 2 processes and is folded into it);
2. trains MA-SGD, GA-SGD and ADMM x LR and SVM the way the study's ``baseline/model.py`` does (a Dataset whose
   ``__getitem__`` slices a row, a DataLoader that collates each batch, ``nn.Linear``, BCE-with-logits or hinge
   loss with margin 0.5, SGD with weight decay; MA-SGD all-reduces weight and bias after every step, GA-SGD one
   bucket of gradients, ADMM a local epoch then a gather and a scatter of the model on rank 0);
3. predicts each case with ``predict_cpu`` on a spec built from the probe (the framework's per-step costs as the
   spec's counted calls per step x the probed call cost); the arithmetic and memory rates stay the EPYC spec's
   assumptions (on these 64-feature cases they are a small share of the epoch; each case reports it).

Measured time is the epoch a user sees: the median over the timed epochs of the slowest process's wall-clock
epoch; the error is computed on it. Timings on a shared 2-core machine are under load.
"""

from __future__ import annotations

import importlib.util
import math
import os
import socket
import statistics
import time
from dataclasses import replace
from typing import Any

from ..specs.workload import MODELS
from .cpu import predict_cpu
from .reference import study_config
from .specs import CpuSpec, load_cpu
from .workload import MULTI_PROCESS_OPTIMIZERS, BaselineWorkload, baseline_optimizer

CALLS_PER_STEP = {"ma_sgd_lr": 27, "ma_sgd_svm": 32, "ga_sgd_lr": 32, "ga_sgd_svm": 37, "admm_lr": 31,
                  "admm_svm": 36}
"""Framework calls per training step of the study's loop, counted from its code (the EPYC spec's ``framework``
section: its step costs are these counts x 6 us)."""
ROWS, FEATURES, EPOCHS, WARMUP = 4096, 64, 3, 1
SIZES_BYTES = (4, 256, 4096, 65536, 1 << 20)
OPTIMIZERS = MULTI_PROCESS_OPTIMIZERS
SEED = 2024
CHUNKS = 15


def available() -> bool:
    """Whether torch with gloo is installed (``pip install 'pimmodel[torch]'``)."""
    return importlib.util.find_spec("torch") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fit_allreduce(curve: list[tuple[int, float]]) -> tuple[float, float]:
    """(t0 in s, bandwidth in B/s) of the least-squares line t = t0 + n / bw through (bytes, seconds)."""
    xs, ys = [float(n) for n, _ in curve], [t for _, t in curve]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    slope = max(slope, 1e-13)
    return max(0.0, my - slope * mx), 1.0 / slope


def machine_torch_spec(probe: dict[str, Any], processes: int, base: CpuSpec | None = None) -> CpuSpec:
    """The CPU spec of this machine for the ``pytorch-study`` implementation from the probe: call costs, the
    all-reduce fit; every other constant is ``base``'s (the EPYC spec: assumptions here)."""
    spec = base or load_cpu()
    t0, bw = probe["allreduce_t0_s"], probe["allreduce_bytes_per_s"]
    steps = max(1, 2 * (processes - 1))
    call = probe["call_s"]
    return replace(spec, name="this-machine-torch", sockets=1, cores_per_socket=max(processes, os.cpu_count() or 1),
                   index_op_s=probe["index_op_s"], sync_call_s=0.0, sync_latency_s=t0 / steps,
                   sync_bytes_per_s=bw * processes / steps if processes > 1 else bw,
                   **{f"{k}_step_s": n * call for k, n in CALLS_PER_STEP.items()})


# ---------------------------------------------------------------- in each spawned process
def _probe(torch: Any, dist: Any, rank: int, world: int) -> dict[str, Any]:
    x = torch.randn(8, 8, requires_grad=True)
    w = torch.randn(8, 1, requires_grad=True)
    calls = []
    for _ in range(CHUNKS):  # the median of several chunks: a spike of another tenant's load moves one chunk
        start = time.perf_counter()
        for _ in range(30):
            y = (x @ w).clamp(min=0).mul(0.5).sum()  # 4 forward calls
            y.backward()  # ~4 backward nodes + the engine call
            with torch.no_grad():
                w.add_(w.grad, alpha=-1e-3)
                w.grad.zero_()
        calls.append((time.perf_counter() - start) / (30 * 11))
    data = torch.randn(512, 65)
    indexing = []
    for _ in range(CHUNKS):
        start = time.perf_counter()
        for i in range(200):
            data[i % 512][1:]
        indexing.append((time.perf_counter() - start) / 400)  # two indexing calls each
    call_s, index_op_s = statistics.median(calls), statistics.median(indexing)
    curve = []
    for n in SIZES_BYTES:
        t = torch.zeros(max(1, n // 4))
        reps = 200 if n <= 4096 else 40
        for _ in range(5):
            dist.all_reduce(t)
        dist.barrier()
        samples = []
        for _ in range(reps):
            s = time.perf_counter()
            dist.all_reduce(t)
            samples.append(time.perf_counter() - s)
        curve.append((n, statistics.median(samples)))
    t0, bw = fit_allreduce(curve)
    return {"call_s": call_s, "index_op_s": index_op_s, "allreduce_curve": curve, "allreduce_t0_s": t0,
            "allreduce_bytes_per_s": bw}


def _train(torch: Any, dist: Any, rank: int, world: int, model: str, optimizer: str) -> list[float]:
    """Wall-clock seconds of each timed epoch of this process (warm-up epochs excluded)."""
    nn = torch.nn
    cfg = study_config(model, optimizer)
    g = torch.Generator().manual_seed(SEED)
    full = torch.randn(ROWS, FEATURES + 1, generator=g)
    full[:, 0] = (full[:, 1] + 0.3 * full[:, 2] > 0).float()
    shard = full[rank * ROWS // world:(rank + 1) * ROWS // world]

    class Rows(torch.utils.data.Dataset):  # type: ignore[misc]
        def __len__(self) -> int:
            return len(shard)

        def __getitem__(self, i: int) -> tuple[Any, Any]:
            return shard[i][1:], shard[i][:1]

    loader = torch.utils.data.DataLoader(Rows(), batch_size=cfg.batch_size, shuffle=False)
    net = nn.Linear(FEATURES, 1)
    averages = baseline_optimizer(optimizer).averages
    admm = baseline_optimizer(optimizer).epoch_round
    opt = torch.optim.SGD(net.parameters(), lr=2.0 ** -cfg.lr_shift, weight_decay=0.0 if admm else 2.0 ** -cfg.wd_shift)
    u_z = [torch.zeros_like(p) for p in net.parameters()]

    def loss_of(out: Any, y: Any) -> Any:
        if model == "lr":
            loss = nn.functional.binary_cross_entropy_with_logits(out, y)
        else:
            loss = torch.clamp(0.5 - (2 * y - 1) * out, min=0).mean()
        if admm:
            penalty = sum((p + c).norm(p=1 if model == "lr" else 2) for p, c in zip(net.parameters(), u_z, strict=True))
            loss = loss + 2.0 ** -cfg.wd_shift * penalty
        return loss

    times = []
    for epoch in range(WARMUP + EPOCHS):
        dist.barrier()
        start = time.perf_counter()
        for xb, yb in loader:
            opt.zero_grad()
            loss_of(net(xb), yb).backward()
            if averages == "gradients":
                bucket = torch.cat([p.grad.reshape(-1) for p in net.parameters()])
                dist.all_reduce(bucket)
                bucket /= world
                offset = 0
                for p in net.parameters():
                    p.grad.copy_(bucket[offset:offset + p.numel()].view_as(p))
                    offset += p.numel()
            opt.step()
            if averages == "models":
                with torch.no_grad():
                    for p in net.parameters():
                        dist.all_reduce(p.data)
                        p.data /= world
        if admm:
            with torch.no_grad():
                for k, p in enumerate(net.parameters()):
                    gathered = [torch.zeros_like(p) for _ in range(world)] if rank == 0 else None
                    dist.gather(p.data, gathered, dst=0)
                    scattered = [q - torch.stack(gathered).mean(0) for q in gathered] if gathered else None
                    dist.scatter(u_z[k], scattered, src=0)
        elapsed = time.perf_counter() - start
        if epoch >= WARMUP:
            times.append(elapsed)
    return times


def _worker(rank: int, world: int, port: int, queue: Any) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        out: dict[str, Any] = {"rank": rank, "probe": _probe(torch, dist, rank, world), "cases": {}}
        for optimizer in OPTIMIZERS:
            for model in MODELS:
                out["cases"][f"{optimizer}/{model}"] = _train(torch, dist, rank, world, model, optimizer)
        queue.put(out)
    finally:
        dist.destroy_process_group()


def run_torch_measurement(processes: int | None = None) -> dict[str, Any]:
    """Probe, train and predict every case on ``processes`` gloo processes (default: the machine's cores)."""
    import torch.multiprocessing as mp

    world = processes or min(os.cpu_count() or 1, 128)
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.spawn(_worker, args=(world, _free_port(), queue), nprocs=world, join=True)
    results = sorted((queue.get() for _ in range(world)), key=lambda r: r["rank"])
    probe = results[0]["probe"]
    spec = machine_torch_spec(probe, world)
    rows = []
    for key in results[0]["cases"]:
        optimizer, model = key.split("/")
        per_epoch = [max(r["cases"][key][e] for r in results) for e in range(EPOCHS)]
        measured = statistics.median(per_epoch)
        cfg = study_config(model, optimizer)
        w = BaselineWorkload(rows=ROWS, features=FEATURES, model=model, optimizer=optimizer,
                             batch_size=cfg.batch_size, processes=world, epochs=1, name="measure-torch")
        p = predict_cpu(w, spec)
        assumed = (p.per_epoch_s["compute"] + p.per_epoch_s["memory"]) / p.epoch_s
        rows.append({"optimizer": optimizer, "model": model, "processes": world, "rows": ROWS,
                     "features": FEATURES, "measured_s": measured, "epochs_s": per_epoch,
                     "predicted_s": p.epoch_s, "rel_error": (p.epoch_s - measured) / measured,
                     "predicted_phases_s": {k: v for k, v in p.per_epoch_s.items() if k != "total"},
                     "bottleneck": p.bottleneck, "share_from_assumed_rates": assumed})
    errors = [abs(r["rel_error"]) for r in rows]
    summary = {"cases": len(rows), "median_abs_rel_error": statistics.median(errors),
               "max_abs_rel_error": max(errors), "within_25_percent": sum(e <= 0.25 for e in errors),
               "error_on": "median wall-clock epoch of the slowest process (the epoch a user sees)"}
    return {"processes": world, "probe": {k: v for k, v in probe.items()},
            "per_process_probe": [r["probe"]["call_s"] for r in results],
            "spec": {"sync_latency_us": spec.sync_latency_s * 1e6, "sync_gb_per_s": spec.sync_bytes_per_s / 1e9,
                     "call_us": probe["call_s"] * 1e6, "index_op_us": probe["index_op_s"] * 1e6},
            "cases": rows, "summary": summary,
            "finite": all(math.isfinite(r["rel_error"]) for r in rows)}
