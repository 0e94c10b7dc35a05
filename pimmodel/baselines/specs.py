"""CPU and GPU specifications for the baselines: frozen, validated records loaded from
``hardware_specs/cpu/*.toml`` and ``hardware_specs/gpu/*.toml`` (subfolders, so the PIM loader's non-recursive
glob never sees them).

House style of ``pimmodel/specs/hardware.py``: SI fields inside, prefixed unit-suffixed keys in TOML, a source
for every constant as ``key = { value = ..., source = "..." }``, unknown or missing keys are one-line errors, and
one field table per record maps TOML keys to fields, scales and allowed ranges. Source tags: T = vendor
documentation, C = code (the PIM-Opt artifact or a library), D = derived (formula in the text), A = assumption
(no published measurement; override it when you have one), P = measured on this machine by ``probe.py``.

A CPU spec describes the system *as run*, software included: the ``[framework]`` costs and the ``[sync]``
algorithm are those of the implementation named by ``framework.implementation`` (the study's PyTorch code, or
the numpy reference of ``reference.py``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from ..errors import SpecError, unknown
from ..resources import data_dir
from ..specs._toml import dumps, read_toml
from ..specs.hardware import Field, SpecRecord, _f, check_numbers, read_fields, write_fields

IMPLEMENTATIONS = ("pytorch-study", "numpy-reference")
"""``pytorch-study``: ``baseline/model.py``/``smodel.py`` of the artifact; ``numpy-reference``: ``reference.py``."""
SYNC_ALGORITHMS = ("ring", "shared-memory")
"""``ring``: gloo's default all-reduce (reduce-scatter + all-gather, 2(p-1) steps); ``shared-memory``: every
process writes its vector, one barrier, every process reads all (``worker_tasks.SharedExchange``)."""
STEP_KINDS = tuple(f"{o}_{m}" for o in ("ma_sgd", "ga_sgd", "admm") for m in ("lr", "svm"))


@dataclass(frozen=True, slots=True)
class TextField:
    """A string-valued field and its allowed values."""

    name: str
    section: str
    key: str
    choices: tuple[str, ...]


CPU_FIELDS: tuple[Field, ...] = (
    _f("sockets", "cpu", "sockets", 1, 1, 64, True),
    _f("cores_per_socket", "cpu", "cores_per_socket", 1, 1, 1 << 14, True),
    _f("clock_hz", "cpu", "clock_ghz", 1e9, 1e8, 1e11, doc="clock while all cores are busy"),
    _f("l2_bytes", "cache", "l2_kib_per_core", 1024, 16 * 1024, 1 << 40, True, doc="private L2 per core"),
    _f("llc_bytes", "cache", "llc_mib_per_group", 1024**2, 0, 1 << 50,
       doc="last-level cache of one group of cores (AMD: one CCX)"),
    _f("llc_cores_per_group", "cache", "llc_cores_per_group", 1, 1, 1 << 14, True),
    _f("llc_bytes_per_s", "cache", "llc_gb_per_s_per_core", 1e9, 1e8, 1e13,
       doc="read bandwidth of one core from the last-level cache"),
    _f("dram_peak_bytes_per_s", "memory", "peak_gb_per_s_per_socket", 1e9, 1e8, 1e14),
    _f("dram_sustained_fraction", "memory", "sustained_fraction", 1, 0.01, 1.0,
       doc="sustained / peak DRAM bandwidth when every core of a socket streams"),
    _f("dram_core_bytes_per_s", "memory", "core_gb_per_s", 1e9, 1e8, 1e13,
       doc="DRAM read bandwidth of one core streaming alone (outstanding-miss limit)"),
    _f("dram_random_access_s", "memory", "random_access_ns", 1e-9, 0, 1e-5,
       doc="effective cost of one independent random 4-byte access that misses the caches"),
    _f("matvec_flops_per_s", "rates", "matvec_gflops_per_core", 1e9, 1e7, 1e14,
       doc="float32 matrix-vector products on an in-cache block, one core, fixed call cost excluded"),
    _f("vector_bytes_per_s", "rates", "vector_gb_per_s_per_core", 1e9, 1e7, 1e14,
       doc="in-cache element-wise float32 updates (bytes read + written), one core"),
    _f("sign_bytes_per_s", "rates", "sign_gb_per_s_per_core", 1e9, 1e7, 1e14,
       doc="in-cache element-wise sign (ADMM's L1 subgradient), bytes read + written, one core"),
    *(_f(f"{kind}_step_s", "framework", f"{kind}_step_us", 1e-6, 0, 1e6,
         doc=f"fixed cost of one {kind.replace('_', ' ')} step's calls with negligible operands "
             "(data fetch and exchange excluded)")
      for kind in STEP_KINDS),
    _f("index_op_s", "framework", "index_op_us", 1e-6, 0, 1e6,
       doc="one framework call on a single sample (a tensor index or gather in a per-sample Python loop)"),
    _f("sync_latency_s", "sync", "latency_us", 1e-6, 0, 1e6,
       doc="ring: one step between neighbours; shared-memory: one exchange (barrier and calls)"),
    _f("sync_bytes_per_s", "sync", "gb_per_s", 1e9, 1e6, 1e14,
       doc="ring: bytes per second between neighbours; shared-memory: vector bytes exchanged per second"),
    _f("sync_call_s", "sync", "call_us", 1e-6, 0, 1e6, doc="fixed cost of one collective call"),
)
CPU_TEXT_FIELDS: tuple[TextField, ...] = (
    TextField("implementation", "framework", "implementation", IMPLEMENTATIONS),
    TextField("sync_algorithm", "sync", "algorithm", SYNC_ALGORITHMS),
)

GPU_FIELDS: tuple[Field, ...] = (
    _f("hbm_bytes", "gpu", "memory_gib", 1024**3, 1024**2, 1 << 50),
    _f("hbm_peak_bytes_per_s", "gpu", "hbm_gb_per_s", 1e9, 1e9, 1e15),
    _f("hbm_sustained_fraction", "gpu", "hbm_sustained_fraction", 1, 0.01, 1.0),
    _f("fp32_flops_per_s", "gpu", "fp32_tflops", 1e12, 1e9, 1e17, doc="non-tensor-core float32 peak"),
    _f("tf32_flops_per_s", "gpu", "tf32_tflops", 1e12, 1e9, 1e17, doc="dense TF32 tensor-core peak"),
    _f("compute_efficiency", "gpu", "compute_efficiency", 1, 0.001, 1.0,
       doc="achieved / peak flop rate of the training step's kernels"),
    _f("pcie_peak_bytes_per_s", "pcie", "gb_per_s_per_direction", 1e9, 1e8, 1e13),
    _f("pcie_sustained_fraction", "pcie", "sustained_fraction", 1, 0.01, 1.0),
    _f("kernel_launch_s", "launch", "kernel_launch_us", 1e-6, 0, 1e4),
    _f("host_step_s", "launch", "host_step_us", 1e-6, 0, 1e6,
       doc="host-side framework time per step besides the launches (Python, autograd, optimizer)"),
    _f("loader_workers", "loader", "workers", 1, 1, 1024, True),
    _f("sample_fetch_s", "loader", "sample_fetch_us", 1e-6, 0, 1e6,
       doc="one Dataset.__getitem__ plus its share of the collate, per sample, in a loader worker"),
    _f("host_copy_bytes_per_s", "loader", "copy_gb_per_s", 1e9, 1e7, 1e13,
       doc="one host thread copying batch rows (collate, pin-memory)"),
    _f("worker_start_s", "loader", "worker_start_s", 1, 0, 1e4, doc="starting the loader workers, once per epoch"),
    _f("host_dram_bytes_per_s", "host", "dram_gb_per_s", 1e9, 1e8, 1e14, doc="host memory bandwidth, peak"),
)


@dataclass(frozen=True, slots=True)
class CpuSpec(SpecRecord):
    """A CPU system and the training implementation that runs on it (see the module docstring)."""

    FIELDS: ClassVar[tuple[Field, ...]] = CPU_FIELDS
    name: str
    description: str
    implementation: str
    sockets: int
    cores_per_socket: int
    clock_hz: float
    l2_bytes: int
    llc_bytes: float
    llc_cores_per_group: int
    llc_bytes_per_s: float
    dram_peak_bytes_per_s: float
    dram_sustained_fraction: float
    dram_core_bytes_per_s: float
    dram_random_access_s: float
    matvec_flops_per_s: float
    vector_bytes_per_s: float
    sign_bytes_per_s: float
    ma_sgd_lr_step_s: float
    ma_sgd_svm_step_s: float
    ga_sgd_lr_step_s: float
    ga_sgd_svm_step_s: float
    admm_lr_step_s: float
    admm_svm_step_s: float
    index_op_s: float
    sync_algorithm: str
    sync_latency_s: float
    sync_bytes_per_s: float
    sync_call_s: float
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_numbers(repr(self.name), self, CPU_FIELDS)
        for t in CPU_TEXT_FIELDS:
            if getattr(self, t.name) not in t.choices:
                raise unknown(f"{t.section}.{t.key}", str(getattr(self, t.name)), t.choices)

    @property
    def cores(self) -> int:
        return self.sockets * self.cores_per_socket

    def step_overhead_s(self, optimizer: str, model: str) -> float:
        """Fixed cost of one step of ``optimizer`` x ``model`` (``ma-sgd``/``lr`` style names)."""
        return float(getattr(self, f"{optimizer.replace('-', '_')}_{model}_step_s"))


@dataclass(frozen=True, slots=True)
class GpuSpec(SpecRecord):
    """A GPU, its host link and the host-side data loader of the study's single-GPU run."""

    FIELDS: ClassVar[tuple[Field, ...]] = GPU_FIELDS
    name: str
    description: str
    hbm_bytes: float
    hbm_peak_bytes_per_s: float
    hbm_sustained_fraction: float
    fp32_flops_per_s: float
    tf32_flops_per_s: float
    compute_efficiency: float
    pcie_peak_bytes_per_s: float
    pcie_sustained_fraction: float
    kernel_launch_s: float
    host_step_s: float
    loader_workers: int
    sample_fetch_s: float
    host_copy_bytes_per_s: float
    worker_start_s: float
    host_dram_bytes_per_s: float
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_numbers(repr(self.name), self, GPU_FIELDS)


def schema(fields: tuple[Field, ...], text_fields: tuple[TextField, ...], name: str) -> Any:
    """The schema of a CPU or GPU spec file, generated from its field tables (``specs.schema``)."""
    # lazy imports keep the CLI's cold start fast (msgspec is imported only when a file is validated)
    from ..specs.schema import literal, schema_for_fields, with_source

    extra: dict[str, list[Any]] = {}
    for t in text_fields:
        extra.setdefault(t.section, []).append((t.key, with_source(literal(t.choices), f"{name}_{t.section}_{t.key}")))
    return schema_for_fields(name, fields, extra=extra)


@lru_cache(maxsize=1)
def cpu_schema() -> Any:
    return schema(CPU_FIELDS, CPU_TEXT_FIELDS, "cpu")


@lru_cache(maxsize=1)
def gpu_schema() -> Any:
    return schema(GPU_FIELDS, (), "gpu")


def _read_value(raw: Any) -> tuple[Any, str]:
    if isinstance(raw, Mapping):
        return raw["value"], str(raw.get("source", ""))
    return raw, ""


def _from_mapping(data: Mapping[str, Any], origin: str, fields: tuple[Field, ...],
                  text_fields: tuple[TextField, ...], struct: Any) -> dict[str, Any]:
    """Field values and sources from parsed TOML checked against ``struct`` (one line naming the key)."""
    # lazy imports keep the CLI's cold start fast
    from ..specs.schema import validate

    validate(data, struct, origin)
    values, sources = read_fields(data, fields, origin)
    for t in text_fields:
        raw, source = _read_value(data[t.section][t.key])
        values[t.name] = str(raw)
        sources[t.name] = source
    values["sources"] = sources
    values["name"] = data["name"]
    values["description"] = str(data.get("description", ""))
    return values


def cpu_from_mapping(data: Mapping[str, Any], origin: str) -> CpuSpec:
    return CpuSpec(**_from_mapping(data, origin, CPU_FIELDS, CPU_TEXT_FIELDS, cpu_schema()))


def gpu_from_mapping(data: Mapping[str, Any], origin: str) -> GpuSpec:
    return GpuSpec(**_from_mapping(data, origin, GPU_FIELDS, (), gpu_schema()))


def _to_mapping(spec: CpuSpec | GpuSpec, fields: tuple[Field, ...],
                text_fields: tuple[TextField, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": spec.name, "description": spec.description}
    for t in text_fields:
        source = spec.sources.get(t.name, "")
        value = getattr(spec, t.name)
        out.setdefault(t.section, {})[t.key] = {"value": value, "source": source} if source else value
    return write_fields(out, spec, fields)


def cpu_to_mapping(spec: CpuSpec) -> dict[str, Any]:
    """The TOML tables of a CPU spec (inverse of ``cpu_from_mapping``), with sources."""
    return _to_mapping(spec, CPU_FIELDS, CPU_TEXT_FIELDS)


def gpu_to_mapping(spec: GpuSpec) -> dict[str, Any]:
    return _to_mapping(spec, GPU_FIELDS, ())


def cpu_to_toml(spec: CpuSpec) -> str:
    return dumps(cpu_to_mapping(spec))


def gpu_to_toml(spec: GpuSpec) -> str:
    return dumps(gpu_to_mapping(spec))


def specs_dir() -> Path:
    """The shipped ``hardware_specs/`` (package data; ``PIMMODEL_BASELINE_SPECS_DIR`` overrides: a folder holding
    ``cpu/`` and ``gpu/``)."""
    env = os.environ.get("PIMMODEL_BASELINE_SPECS_DIR")
    return Path(env) if env else data_dir("hardware_specs")


def spec_names(device: str) -> list[str]:
    """The shipped spec names of one device kind (``cpu`` or ``gpu``)."""
    if device not in ("cpu", "gpu"):
        raise unknown("device", device, ("cpu", "gpu"))
    return sorted(p.stem for p in (specs_dir() / device).glob("*.toml"))


def _resolve(device: str, name_or_path: str) -> tuple[Path, str]:
    if name_or_path in spec_names(device):
        return specs_dir() / device / f"{name_or_path}.toml", name_or_path
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists() or os.sep in name_or_path:
        if path.is_dir():
            raise SpecError(f"{device} spec {name_or_path!r} is a directory; give a .toml file or a name")
        return path, str(path)
    raise unknown(f"{device} spec", name_or_path, spec_names(device))


def load_cpu(name_or_path: str = "amd-epyc-7742-2s") -> CpuSpec:
    """A shipped CPU spec by name (``hardware_specs/cpu/NAME.toml``) or a TOML file path."""
    path, origin = _resolve("cpu", name_or_path)
    return cpu_from_mapping(read_toml(path, "CPU spec"), origin)


def load_gpu(name_or_path: str = "nvidia-a100-pcie-80gb") -> GpuSpec:
    """A shipped GPU spec by name (``hardware_specs/gpu/NAME.toml``) or a TOML file path."""
    path, origin = _resolve("gpu", name_or_path)
    return gpu_from_mapping(read_toml(path, "GPU spec"), origin)


_ASSUMPTION_TAG = re.compile(r"(^|[\s(;])A[:)]")


def assumptions_of(spec: CpuSpec | GpuSpec) -> list[str]:
    """Every constant whose source is or contains an assumption (tag A), as 'section.key = value: source'."""
    fields: tuple[Field, ...] = CPU_FIELDS if isinstance(spec, CpuSpec) else GPU_FIELDS
    out = []
    for f in fields:
        source = spec.sources.get(f.name, "")
        if _ASSUMPTION_TAG.search(source):
            out.append(f"{f.section}.{f.key} = {getattr(spec, f.name) / f.scale:g}: {source}")
    return out
