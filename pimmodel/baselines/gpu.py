"""The GPU baseline model: the study's single-GPU mini-batch SGD (``baseline/model.py::train_GPU``), per epoch.

UNVALIDATED: there is no GPU on the measuring machine; every prediction says so and lists its assumptions.

What one epoch does (batch b, d features, ``rows / b`` steps, the whole data set streamed from host memory
every epoch by a ``DataLoader`` with one worker and ``pin_memory=True``). Three stages run concurrently, so the
epoch is the slowest of them (``combine = "max"``):

* loader worker: ``worker_start`` (a worker is forked every epoch) + per batch b x sample_fetch (the Dataset's
  per-sample ``__getitem__``) + the collate copy of b rows (batch_bytes / host_copy);
* pin-memory thread: copies every batch into pinned memory (batch_bytes / host_copy);
* main thread + GPU, per step: the synchronous host-to-device copy (batch_bytes / PCIe), then the step, whose
  host-side dispatch (framework + launches) and GPU work (HBM traffic and arithmetic) overlap: the larger wins.

``data_on_gpu=True`` models the alternative the study did not run: the data set resident in HBM (it must fit),
so the loader, pin-memory and PCIe stages vanish.
"""

from __future__ import annotations

import math

from ..errors import SpecError
from .phases import BaselinePrediction
from .specs import GpuSpec, assumptions_of
from .workload import ONE_DEVICE_OPTIMIZERS, BaselineWorkload

KERNELS_PER_STEP = 13
"""D: CUDA kernels of one step in train_GPU: addmm; BCEWithLogits (~3); its backward and the weight gradient
(~5: sigmoid-minus-target, mm, sum for the bias, ...); SGD with weight decay for weight and bias (4). The two
host-to-device copies are the ``host_transfer`` phase."""
HBM_PASSES_OVER_BATCH = 2
"""The forward product and the weight gradient each read the batch once from HBM."""
GATHER_SECTOR_BYTES = 32
"""Sparse rows (this tool's extension; the study ran no GPU on Criteo): every active feature's weight is gathered
in the forward pass and scatter-added in the backward pass, each touching one 32-byte DRAM sector (the A100's
access granularity) - an assumption, unvalidated like the rest of the GPU model."""


def gpu_model_assumptions(streamed: bool, sparse: bool = False) -> list[str]:
    """The model's structural assumptions, listed with every GPU prediction."""
    out = ["model unvalidated: no GPU on the measuring machine; constants are datasheet values and assumptions",
           "matrix-vector shaped kernels: the GPU time is HBM traffic (two passes over the batch) plus arithmetic "
           "at the FP32 rate; small per-step vector work ignored",
           "the host-side dispatch of a step overlaps the GPU work of the same step (asynchronous launches); "
           "the synchronous host-to-device copy does not"]
    if sparse:
        out += ["sparse rows: no study run to compare with; per step the batch's int32 indices are read once and "
                f"each active feature's weight is gathered and scatter-added at {GATHER_SECTOR_BYTES}-byte sectors"]
    if streamed:
        out += ["the whole data set is streamed from host memory every epoch by the DataLoader (the study's code "
                "does so whether or not it fits in GPU memory; YFCC float32 is 111.7 GB > 80 GB)",
                "loader worker, pin-memory thread and main thread run concurrently with enough prefetch "
                "(prefetch_factor 2) that the slowest stage sets the epoch; the host-side loader, not the GPU, "
                "is expected to bind"]
    return out


def predict_gpu(w: BaselineWorkload, spec: GpuSpec, data_on_gpu: bool = False) -> BaselinePrediction:
    """Seconds per epoch of every GPU phase (and stage) for single-GPU mini-batch SGD on ``spec``."""
    if w.processes != 1:
        raise SpecError(f"the GPU baseline runs one process on one GPU, not {w.processes}")
    if w.optimizer not in ONE_DEVICE_OPTIMIZERS:
        raise SpecError(f"the GPU baseline is single-GPU mini-batch SGD, not {w.optimizer!r}")
    if data_on_gpu and w.dataset_bytes > spec.hbm_bytes:
        raise SpecError(f"the data set ({w.dataset_bytes / 1e9:.1f} GB) does not fit in the GPU's "
                        f"{spec.hbm_bytes / 1024**3:.0f} GiB; it must be streamed from host memory (data_on_gpu=False)")
    steps = math.ceil(w.rows / w.batch_size)
    batch_bytes = w.batch_size * w.row_bytes
    host_copy = min(spec.host_copy_bytes_per_s, spec.host_dram_bytes_per_s)
    pcie = spec.pcie_peak_bytes_per_s * spec.pcie_sustained_fraction
    hbm = spec.hbm_peak_bytes_per_s * spec.hbm_sustained_fraction
    dispatch_step = spec.host_step_s + KERNELS_PER_STEP * spec.kernel_launch_s
    sparse = w.layout == "sparse"
    if sparse:
        memory_step = (batch_bytes + 2.0 * w.batch_size * w.active_features * GATHER_SECTOR_BYTES) / hbm
    else:
        memory_step = HBM_PASSES_OVER_BATCH * w.batch_size * 4.0 * w.features / hbm
    compute_step = 4.0 * w.batch_size * w.active_features / (spec.fp32_flops_per_s * spec.compute_efficiency)
    streamed = not data_on_gpu
    per_batch_loader = w.batch_size * spec.sample_fetch_s + batch_bytes / host_copy
    per_epoch = {
        "loader": (spec.worker_start_s + steps * per_batch_loader / spec.loader_workers) if streamed else 0.0,
        "host_copy": steps * batch_bytes / host_copy if streamed else 0.0,
        "host_transfer": steps * batch_bytes / pcie if streamed else 0.0,
        "dispatch": steps * dispatch_step,
        "memory": steps * memory_step,
        "compute": steps * compute_step,
    }
    main = per_epoch["host_transfer"] + steps * max(dispatch_step, memory_step + compute_step)
    stages = {"loader worker": per_epoch["loader"], "pin-memory thread": per_epoch["host_copy"],
              "main thread + GPU": main}
    per_epoch["total"] = max(stages.values())
    bottleneck = max(stages, key=lambda s: stages[s])
    details = {"batch_bytes": float(batch_bytes), "dataset_bytes": float(w.dataset_bytes),
               "fits_in_gpu_memory": float(w.dataset_bytes <= spec.hbm_bytes),
               "stage_loader_worker_s": stages["loader worker"],
               "stage_pin_memory_thread_s": stages["pin-memory thread"], "stage_main_thread_gpu_s": main}
    return BaselinePrediction(
        device="gpu", spec=spec.name, workload=w.to_record(), per_epoch_s=per_epoch, epochs=w.epochs,
        steps_per_epoch=steps, combine="max", bottleneck=bottleneck, validated=False,
        validation="unvalidated: no GPU on the measuring machine; datasheet constants and tagged assumptions",
        assumptions=tuple(gpu_model_assumptions(streamed, sparse) + assumptions_of(spec)), details=details)
