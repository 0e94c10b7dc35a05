"""Measure this machine's primitives and write them as CPU spec records (``framework.implementation =
numpy-reference``) for the CPU model to predict the measured cases.

Only primitives are timed here, never a measured case: STREAM-like copy/triad/read bandwidth over a ladder of
working sets (1 process, then 2 at once), float32 matrix-vector products and element-wise updates on in-cache
operands, the fixed cost of a numpy call and of one training step on 8 features (the calls without their
arithmetic), random accesses, and the shared-memory exchange between processes. Rates taken with p processes
running at once describe the machine for p-process cases; between concurrent processes the slower one counts
(lockstep training waits for it).

A shared machine changes speed as other tenants' jobs come and go, so ``measure.py`` probes the memory ladder
once and re-probes the per-core rates, the step costs and the exchange right before each case: the spec that
predicts a case describes the machine as it was when the case ran. Every short timing is the low quantile of
many ~1 ms samples (``worker_tasks.LOW_QUANTILE``), the same statistic the cases use.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..units import MiB
from .parallel import Team
from .reference import study_config
from .specs import STEP_KINDS, CpuSpec
from .worker_tasks import CHUNK_MIN_STEPS, VECTOR_MIX_BYTES_PER_ELEMENT, VECTOR_MIX_CALLS

Progress = Callable[[str], None]

LADDER_MIB = (4, 8, 16, 32, 64, 128)
QUICK_LADDER_MIB = (4, 8, 32)
LLC_PROBE_MIB = 8
DRAM_PROBE_MIB = 256
QUICK_DRAM_PROBE_MIB = 64
L2_PROBE_FRACTION = 0.25
STREAM_KEY = "matvec_read_bytes_per_s"
"""The bandwidth the model uses: the training kernel's own read stream (a matrix-vector product), which
reads one array where STREAM's kernels read two or three (recorded too)."""
EXCHANGE_WORK_S = 20e-6
EXCHANGE_SMALL_FLOATS = 16
EXCHANGE_LARGE_FLOATS = 65536
"""Busy work between two exchanges of the bandwidth probe, about one small training step."""
TINY_FEATURES_STEPS = CHUNK_MIN_STEPS
"""Steps per timing sample of the step-cost probes: as many as a case's timing chunk."""


def _sysfs_cache_bytes(level: int) -> int | None:
    """Cache size of cpu0 at ``level`` from sysfs (None if unknown)."""
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(base.glob("index*")) if base.exists() else []:
        try:
            if int((index / "level").read_text()) != level or (index / "type").read_text().strip() == "Instruction":
                continue
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        scale = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(text[-1:], 1)
        return int(text.rstrip("KMG")) * scale
    return None


def _sockets() -> int:
    ids = set()
    for path in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology/physical_package_id"):
        try:
            ids.add(path.read_text().strip())
        except OSError:
            continue
    return max(1, len(ids))


def _clock_hz() -> float:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("cpu mhz"):
                return float(line.split(":")[1]) * 1e6
    except (OSError, ValueError, IndexError):
        pass
    return 1e9


def _slowest(payloads: list[dict[str, float]], key: str, rate: bool) -> float:
    values = [p[key] for p in payloads]
    return min(values) if rate else max(values)


def kind_of(optimizer: str, model: str) -> str:
    """The spec's step-kind name (``ma_sgd_lr``) of an optimizer and model."""
    return f"{optimizer.replace('-', '_')}_{model}"


class MachineProber:
    """Runs the probe tasks on a team, keeps every reading, and writes spec records from the latest ones."""

    def __init__(self, team: Team, quick: bool = False, progress: Progress | None = None) -> None:
        self.team = team
        self.quick = quick
        self.progress = progress or (lambda _message: None)
        self.readings: dict[str, float] = {}
        self.l2_bytes = _sysfs_cache_bytes(2) or 1 * MiB

    def _repeats(self, full: int) -> int:
        return max(7, full // 3) if self.quick else full

    def stream(self, processes: int, mib: float, kernels: tuple[str, ...] | None = None) -> dict[str, float]:
        repeats = self._repeats(max(11, min(21, int(512 / mib))))
        extra = {} if kernels is None else {"kernels": kernels}
        payloads = self.team.run("stream", processes, working_set_bytes=int(mib * MiB), repeats=repeats, **extra)
        return {k: _slowest(payloads, k, rate=True) for k in payloads[0]}

    def bandwidths(self) -> None:
        """The read-bandwidth ladder (1 process), its effective last-level cache, and DRAM with 1 and all
        processes streaming at once."""
        self.progress("probe: memory bandwidth ladder")
        r = self.readings
        r["l2_read_bytes_per_s"] = self.stream(1, L2_PROBE_FRACTION * self.l2_bytes / MiB)["read_bytes_per_s"]
        sizes = QUICK_LADDER_MIB if self.quick else LADDER_MIB
        ladder = {mib: self.stream(1, mib) for mib in sizes}
        for mib, bw in ladder.items():
            r.update({f"ladder_{mib}mib_{k}": v for k, v in bw.items()})
        r.update({f"llc_1p_{k}": v for k, v in ladder[LLC_PROBE_MIB].items()})
        if self.team.size > 1:
            llc = self.stream(self.team.size, LLC_PROBE_MIB / self.team.size)
            r.update({f"llc_{self.team.size}p_{k}": v for k, v in llc.items()})
        self.dram()
        reads = {mib: bw[STREAM_KEY] for mib, bw in ladder.items()}
        midpoint = math.sqrt(reads[sizes[0]] * r[f"dram_1p_{STREAM_KEY}"])
        fits = [mib for mib, bw in reads.items() if bw >= midpoint]
        r["llc_effective_bytes"] = float(max(fits) * MiB) if fits else float(sizes[0] * MiB)

    def dram(self, processes: int | None = None) -> None:
        """DRAM bandwidth with 1 process and with all processes streaming at once (every STREAM kernel); with
        ``processes``, only the model's kernel for that count (a quick re-probe before a DRAM case)."""
        self.progress("probe: DRAM bandwidth")
        mib = QUICK_DRAM_PROBE_MIB if self.quick else DRAM_PROBE_MIB
        counts = sorted({1, self.team.size}) if processes is None else [processes]
        kernels = None if processes is None else ("matvec_read",)
        for p in counts:
            self.readings.update({f"dram_{p}p_{k}": v for k, v in self.stream(p, mib, kernels).items()})

    def rates(self, processes: int, random_access: bool = True) -> None:
        """Call overheads, in-cache matrix-vector and element-wise rates, random accesses; p at once."""
        p, r = processes, self.readings
        self.progress(f"probe: per-core rates, {p} process(es)")
        calls = self.team.run("calls", p, repeats=self._repeats(31), inner=1000)
        ufunc = _slowest(calls, "ufunc_call_s", rate=False)
        matmul = _slowest(calls, "matmul_call_s", rate=False)
        rows, cols = 32, 2048
        mv = self.team.run("matvec", p, rows=rows, features=cols, repeats=self._repeats(31), inner=50)
        pair_s = 4.0 * rows * cols / _slowest(mv, "matvec_flops_per_s", rate=True)
        length = 4096
        vec = self.team.run("vector", p, length=length, repeats=self._repeats(31), inner=200)
        mix_bytes = VECTOR_MIX_BYTES_PER_ELEMENT * length
        mix_s = mix_bytes / _slowest(vec, "vector_bytes_per_s", rate=True)
        sign_s = 8.0 * length / _slowest(vec, "sign_bytes_per_s", rate=True)
        if random_access:
            rnd = self.team.run("random", p, array_bytes=64 * MiB, accesses=1 << 15, repeats=self._repeats(21))
            r[f"random_access_s_{p}p"] = _slowest(rnd, "random_access_s", rate=False)
        r.update({f"ufunc_call_s_{p}p": ufunc, f"matmul_call_s_{p}p": matmul,
                  f"matvec_flops_per_s_{p}p": 4.0 * rows * cols / max(pair_s - 2 * matmul, 0.25 * pair_s),
                  f"vector_bytes_per_s_{p}p": mix_bytes / max(mix_s - VECTOR_MIX_CALLS * ufunc, 0.25 * mix_s),
                  f"sign_bytes_per_s_{p}p": 8.0 * length / max(sign_s - ufunc, 0.25 * sign_s)})

    def steps(self, processes: int, kinds: tuple[str, ...] = STEP_KINDS) -> None:
        """The fixed cost per step of each kind: the reference's steps on 8 features, no exchange."""
        p = processes
        self.progress(f"probe: fixed cost of a training step, {p} process(es)")
        for kind in kinds:
            optimizer, model = kind.rsplit("_", 1)
            config = study_config(model, optimizer.replace("_", "-"))
            payloads = self.team.run("step", p, model=model, optimizer=config.optimizer,
                                     batch_size=config.batch_size, steps=TINY_FEATURES_STEPS,
                                     repeats=self._repeats(31))
            self.readings[f"{kind}_step_s_{p}p"] = _slowest(payloads, "step_s", rate=False)

    def exchange(self, processes: int, kind: str = "ma_sgd_lr") -> None:
        """The exchange between ``processes`` processes: its fixed cost as lockstep training meets it (the
        lockstep step of ``kind`` on 8 features minus the same step without exchange: how long partners wait
        for each other depends on the work between exchanges), and its bytes per second from two vector sizes
        exchanged after the same busy work."""
        p = processes
        if p == 1:
            return
        self.progress(f"probe: exchange between {p} processes")
        optimizer, model = kind.rsplit("_", 1)
        config = study_config(model, optimizer.replace("_", "-"))
        self.readings[f"lockstep_{kind}_step_s_{p}p"] = _slowest(
            self.team.run("step", p, model=model, optimizer=config.optimizer, batch_size=config.batch_size,
                          steps=TINY_FEATURES_STEPS, repeats=self._repeats(31), exchange=True), "step_s", rate=False)
        self.steps(p, (kind,))
        for floats, inner in ((EXCHANGE_SMALL_FLOATS, 8), (EXCHANGE_LARGE_FLOATS, 4)):
            self.readings[f"exchange_{floats}_s_{p}p"] = _slowest(
                self.team.run("exchange", p, floats=floats, repeats=self._repeats(41), inner=inner,
                              work_s=EXCHANGE_WORK_S), "exchange_s", rate=False)

    def probe_all(self) -> None:
        """Every primitive, for 1 process and for the whole team."""
        self.bandwidths()
        for p in sorted({1, self.team.size}):
            self.rates(p)
            self.steps(p)
            self.exchange(p)

    def spec(self, processes: int) -> CpuSpec:
        """This machine for ``processes``-process cases, from the latest readings."""
        return machine_spec(processes, self.team.size, self.readings, self.l2_bytes)

    def record(self) -> dict[str, Any]:
        return {"cores": os.cpu_count() or 1, "l2_bytes": self.l2_bytes,
                "llc_effective_bytes": self.readings.get("llc_effective_bytes"), "readings": dict(self.readings)}


def exchange_constants(r: dict[str, float], processes: int, kind: str = "ma_sgd_lr") -> dict[str, float]:
    """Latency and bytes per second of the exchange between ``processes`` processes from the readings: the
    latency is what lockstep adds to a step of ``kind`` (MA-SGD LR if that kind was not probed) on 8 features;
    the bandwidth comes from the time difference between a large and a small vector (if noise hides it, the
    large vector's time bounds it)."""
    p = processes
    if f"lockstep_{kind}_step_s_{p}p" not in r:
        kind = "ma_sgd_lr"
    if f"lockstep_{kind}_step_s_{p}p" not in r:
        return {"sync_latency_s": 0.0, "sync_bytes_per_s": 1e9}
    latency = max(0.0, r[f"lockstep_{kind}_step_s_{p}p"] - r[f"{kind}_step_s_{p}p"])
    t_small, t_large = r[f"exchange_{EXCHANGE_SMALL_FLOATS}_s_{p}p"], r[f"exchange_{EXCHANGE_LARGE_FLOATS}_s_{p}p"]
    extra_bytes = 4.0 * (EXCHANGE_LARGE_FLOATS - EXCHANGE_SMALL_FLOATS)
    if t_large - t_small > 0.05 * t_large:
        bytes_per_s = extra_bytes / (t_large - t_small)
    else:
        bytes_per_s = extra_bytes / max(t_large, 1e-9)
    return {"sync_latency_s": latency, "sync_bytes_per_s": min(bytes_per_s, 1e13)}


def machine_spec(processes: int, team_size: int, r: dict[str, float], l2_bytes: int,
                 kind: str = "ma_sgd_lr") -> CpuSpec:
    """A CPU spec record from probe readings (``MachineProber.readings``); the exchange latency is the one
    probed with steps of ``kind`` (the case's own step kind when measuring)."""
    p = processes
    exchange_p = team_size if p == 1 else p
    dram_core = r[f"dram_1p_{STREAM_KEY}"] if p == 1 else r[f"dram_{team_size}p_{STREAM_KEY}"]
    when = f"P: probe.py, {p} process(es) running at once"
    values: dict[str, Any] = {
        "sockets": _sockets(), "cores_per_socket": max(1, (os.cpu_count() or 1) // _sockets()),
        "clock_hz": _clock_hz(), "l2_bytes": l2_bytes, "llc_bytes": r["llc_effective_bytes"],
        "llc_cores_per_group": os.cpu_count() or 1, "llc_bytes_per_s": r[f"llc_{p}p_{STREAM_KEY}"],
        "dram_peak_bytes_per_s": team_size * r[f"dram_{team_size}p_{STREAM_KEY}"],
        "dram_sustained_fraction": 1.0, "dram_core_bytes_per_s": dram_core,
        "dram_random_access_s": r[f"random_access_s_{p}p"], "matvec_flops_per_s": r[f"matvec_flops_per_s_{p}p"],
        "vector_bytes_per_s": r[f"vector_bytes_per_s_{p}p"], "sign_bytes_per_s": r[f"sign_bytes_per_s_{p}p"],
        "index_op_s": r[f"ufunc_call_s_{p}p"],
        **{f"{kind}_step_s": r[f"{kind}_step_s_{p}p"] for kind in STEP_KINDS},
        "sync_algorithm": "shared-memory", **exchange_constants(r, exchange_p, kind), "sync_call_s": 0.0,
    }
    sources = {
        "sockets": "P: sysfs physical_package_id", "cores_per_socket": "P: os.cpu_count()",
        "clock_hz": "P: /proc/cpuinfo (informational; the model uses measured rates)",
        "l2_bytes": "P: sysfs cache index2", "llc_cores_per_group": "P: os.cpu_count() (one shared LLC assumed)",
        "llc_bytes": "P: largest working set whose matrix-vector read bandwidth stays above the geometric mean "
                     "of the 4 MiB and DRAM readings (effective, shared with other tenants)",
        "llc_bytes_per_s": f"{when}: matrix-vector read bandwidth, 8 MiB working set in total",
        "dram_peak_bytes_per_s": f"P: {team_size} processes streaming at once, matrix-vector read bandwidth "
                                 "summed",
        "dram_sustained_fraction": "P: the peak above is already a sustained measurement",
        "dram_core_bytes_per_s": f"{when}: matrix-vector read bandwidth of one process from DRAM",
        "dram_random_access_s": f"{when}: np.take of random indices in 64 MiB, per access",
        "matvec_flops_per_s": f"{when}: 32 x 2048 block in L2, forward + backward matmul, call cost removed",
        "vector_bytes_per_s": f"{when}: add, scale, subtract over 4,096 floats in L1, call costs removed",
        "sign_bytes_per_s": f"{when}: np.sign over 4,096 floats in L1, call cost removed",
        "index_op_s": f"{when}: one np.multiply on 8 floats",
        **{f"{kind}_step_s": f"{when}: reference steps on 8 features, per step" for kind in STEP_KINDS},
        "implementation": "C: reference.py (numpy, one BLAS thread per process)",
        "sync_algorithm": "C: worker_tasks.SharedExchange (shared memory + a polling flag barrier)",
        "sync_latency_s": f"P: {exchange_p} processes, lockstep {kind} steps on 8 features minus the same "
                          "steps without exchange",
        "sync_bytes_per_s": f"P: {exchange_p} processes, (65,536 - 16) floats / (t(65,536) - t(16)), "
                            "exchanges after 20 us of work",
        "sync_call_s": "C: included in the latency",
    }
    return CpuSpec(name=f"this-machine-{p}p", description=f"this machine as probed with {p} busy process(es)",
                   implementation="numpy-reference", sources=sources, **values)
