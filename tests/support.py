"""Helpers shared by the tests (on the path through ``pythonpath = ["tests"]`` in pyproject.toml)."""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pimmodel.calibration.result import coefficients_for
from pimmodel.costmodel import HardwareInputs, evaluate
from pimmodel.specs import REGISTRY, HardwareSpec, Workload, load_hardware, to_toml
from pimmodel.specs.hardware import TOPOLOGIES


def raw(w: Workload, hw: HardwareSpec | Mapping[str, Any], topology: str | None = None,
        coefficients: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """The cost model's raw outputs with the documented default coefficients (unless given): ``hw`` is a spec
    (its topology, unless ``topology`` overrides it) or a dict of hardware values (topology "none")."""
    if isinstance(hw, HardwareSpec):
        inputs = HardwareInputs(hw.numeric(), topology or hw.link_topology)
    else:
        inputs = HardwareInputs(hw, topology or "none")
    return evaluate(w, inputs, coefficients_for(w, coefficients))


def run_emulation(dataset: str, dpus: int, model: str, optimizer: str, hyper: Any = None, **options: Any) -> Any:
    """``pimmodel.api.emulate`` with the emulator's ``Options`` given as keywords (epochs default 1 here)."""
    from pimmodel.api import emulate
    from pimmodel.emulator.api import Options

    return emulate(dataset, dpus, model, optimizer, hyper, Options(**{"epochs": 1, **options}))


def raw_floats(*args: Any, **kwargs: Any) -> dict[str, float]:
    return {k: float(np.asarray(v)) for k, v in raw(*args, **kwargs).items()}


@functools.cache
def hardware_file(topology: str = "none", dpus_per_rank: int | None = None) -> Path | str:
    """upmem-2556, or a TOML file of it with ``topology`` links (2 GB/s, 0.5 us) and/or ``dpus_per_rank`` DPUs
    per rank, named like its file (the emulator takes hardware by name or file)."""
    if topology == "none" and dpus_per_rank is None:
        return "upmem-2556"
    base = load_hardware("upmem-2556")
    name = f"test-{topology}-rank{dpus_per_rank or base.dpus_per_rank}"
    spec = base.replace(name=name, link_topology=topology, link_bytes_per_s=2e9, link_latency_s=0.5e-6,
                        dpus_per_rank=dpus_per_rank or base.dpus_per_rank)
    path = Path(tempfile.mkdtemp(prefix="pimmodel-hw-")) / f"{name}.toml"
    path.write_text(to_toml(spec), encoding="utf-8")
    return path


def emulated_topologies(optimizer: str) -> tuple[str, ...]:
    """The link topologies an optimizer's emulator trains on: "none" where it runs without links, and every link
    topology it runs on if it handles the links itself (``OptimizerInfo.emulated_links``; the registry's
    ``interconnect.linked`` variant of the others is a cost-model what-if, not emulated)."""
    info = REGISTRY[optimizer]
    return tuple(t for t in TOPOLOGIES if t in info.topologies and (t == "none" or info.emulated_links))


def full_ranks_transfer_s(hw: HardwareSpec, nbytes: float, ranks: float, to_pim: bool = True,
                          distinct: bool = True) -> float:
    """One parallel MRAM transfer of ``nbytes`` per DPU to ``ranks`` full ranks of 64 DPUs, by hand (the UPMEM SDK's
    x86 backend as ``primitives.host_transfer_s`` prices it): 8 lines of 8 DPUs per rank; the pool's 4 threads take
    2 lines each from 2 KiB per DPU (2 threads of 4 lines below 2 KiB, 1 thread of all 8 below 1 KiB); a thread
    alone moves a line at the one-DPU (serial) rate plus the per-further-DPU extra, one of several threads at no
    more than 1/8 of PrIM's full-rank rate per DPU of its line; across ranks each further rank adds the share g of
    one rank's bandwidth (the SDK's one pool per memory channel, locked per rank: xeon_sp_acquire_pool), so r ranks
    take r / (1 + g (r - 1)) times one rank, and never less than all their bytes at the ceiling (nor more than the
    ranks one after another)."""
    threads = 1 if nbytes < 1024 else 2 if nbytes < 2048 else 4
    lines = 8 // threads
    on_line = 8 if distinct else 1
    serial = hw.serial_to_pim_bytes_per_s if to_pim else hw.serial_from_pim_bytes_per_s
    extra = hw.push_line_dpu_s_per_byte if to_pim else hw.pull_line_dpu_s_per_byte
    per_rank = hw.push_bytes_per_s_per_rank if to_pim else hw.pull_bytes_per_s_per_rank
    alone = 1 / serial + extra * (on_line - 1)
    per_byte = max(alone, on_line * 8 / per_rank) if threads > 1 else alone
    call = hw.transfer_call_overhead_s + (0 if to_pim else hw.pull_call_extra_s)
    growth = hw.push_rank_growth if to_pim else hw.pull_rank_growth
    ceiling = hw.push_saturation_bytes_per_s if to_pim else hw.pull_saturation_bytes_per_s
    one_rank = lines * nbytes * per_byte
    return call + max(ranks / (1 + growth * (ranks - 1)) * one_rank, min(nbytes * 64 * ranks / ceiling,
                                                                          ranks * one_rank))


@dataclasses.dataclass(frozen=True)
class CliResult:
    """What ``pimmodel ARGS`` did: the shape of ``subprocess.CompletedProcess`` (``returncode``, ``stdout``,
    ``stderr``), so a test reads the same either way."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def cli(*args: str, cwd: Path | str | None = None, env: Mapping[str, str] | None = None) -> CliResult:
    """``pimmodel ARGS`` run in this process through the console entry point ``pimmodel.cli.app.main`` (its one
    error boundary, exit codes included) with typer's CliRunner's isolated streams: the same exit code, stdout and
    stderr as the installed script, without a new interpreter's import cost. ``cwd`` and ``env`` (added to the
    environment) are set for the call and restored after it. Tests of what only a real process shows (signals,
    resource limits, a terminal, cold start) use ``subprocess`` instead."""
    from typer.testing import CliRunner

    from pimmodel.cli.app import main

    argv, here = sys.argv, os.getcwd()
    saved = {k: os.environ.get(k) for k in (env or {})}
    with CliRunner().isolation() as streams:
        sys.argv = ["pimmodel", *args]
        os.environ.update(env or {})
        try:
            if cwd is not None:
                os.chdir(cwd)
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.argv = argv
            os.chdir(here)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        out, err = streams[0].getvalue().decode(), streams[1].getvalue().decode()
    return CliResult(["pimmodel", *args], code, out, err)


def first_fast(cases: list[Any] | tuple[Any, ...], unpack: bool = True) -> list[Any]:
    """``cases`` for ``pytest.mark.parametrize`` with the first in the fast default tier and the rest marked
    ``slow`` (run by CI after the default tier): a costly check keeps one representative in every quick run.
    ``unpack``: a tuple case holds one value per argument name (False: the parametrize has one name)."""
    import pytest

    return [c if i == 0 else pytest.param(*(c if unpack and isinstance(c, tuple) else (c,)), marks=pytest.mark.slow)
            for i, c in enumerate(cases)]


def train_config(model: str = "lr", optimizer: str = "ma-sgd", **fields: Any) -> Any:
    """An emulator ``TrainConfig`` for a test without a workload: every workload and hardware field written out
    here (the study's YFCC values, the upmem-2556 hardware), ``fields`` overriding any of them."""
    from pimmodel.emulator.config import TrainConfig

    hw = load_hardware("upmem-2556")
    values: dict[str, Any] = dict(
        model=model, optimizer=optimizer, batch_size=8, global_batch_size=8192, learning_rate_shift=6, reg_shift=12,
        alpha_shift=4, task_epochs=1, sync_every=1, epochs=1, tasklets=16, kernels="study",
        dma_max_bytes=hw.dma_max_bytes, link_topology=hw.link_topology, dpus_per_rank=hw.dpus_per_rank)
    return TrainConfig(**{**values, **fields})


def model_inputs(**workload: float) -> dict[str, float]:
    """Every input of a compiled cost model at one design point: upmem-2556's numbers, the default coefficients
    and the workload symbols ``workload`` gives (dpus, tasklets, rows_per_dpu, local_batch, sync_every,
    torus_rows; the dense study shape for the rest)."""
    from pimmodel.costmodel.coefficients import COEFFICIENT_DEFAULTS
    from pimmodel.specs import load_hardware

    shape = {"features": 4096.0, "nonzeros": 40.0, "bytes_per_value": 4.0, "bias_slot": 1.0, "local_epochs": 1.0}
    base = {**load_hardware("upmem-2556").numeric(), **COEFFICIENT_DEFAULTS, **shape, **workload}
    return {k: float(v) for k, v in base.items()}
