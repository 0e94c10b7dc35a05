"""Baseline models of the PIM-Opt study's CPU and GPU runs, and their validation on this machine.

Public API (what ``compare`` and the time-to-accuracy figures call):

* ``BaselineWorkload`` / ``study_workload(dataset, model, optimizer, device)``: a run in plain parameters;
  ``cpu_workload_of(w)`` / ``gpu_workload_of(w)``: the study's CPU and GPU runs of a PIM ``Workload``'s rows;
* ``load_cpu(name)`` / ``load_gpu(name)``: sourced specs from ``hardware_specs/cpu`` and ``hardware_specs/gpu``;
* ``predict_cpu(workload, cpu_spec)`` / ``predict_gpu(workload, gpu_spec)`` -> ``BaselinePrediction``
  (``per_epoch_s`` per phase and ``total``, ``total_s``, ``to_record()``);
* ``run_measurement(quick)``: real numpy training on this machine against the CPU model (``baseline measure``).

Heavy parts (the measurement team, numpy training) are imported lazily.
"""

from __future__ import annotations

from typing import Any

from .cpu import predict_cpu
from .gpu import predict_gpu
from .phases import CPU_PHASES, GPU_PHASES, BaselinePrediction
from .specs import CpuSpec, GpuSpec, load_cpu, load_gpu, spec_names
from .workload import BaselineWorkload, cpu_workload_of, gpu_workload_of, study_workload


def run_measurement(quick: bool = False, progress: Any = None) -> dict[str, Any]:
    """``pimmodel baseline measure`` as a function (see ``measure.run_measurement``)."""
    from .measure import run_measurement as run

    return run(quick=quick, progress=progress)


__all__ = [
    "CPU_PHASES", "GPU_PHASES", "BaselinePrediction", "BaselineWorkload", "CpuSpec", "GpuSpec", "cpu_workload_of",
    "gpu_workload_of", "load_cpu",
    "load_gpu", "predict_cpu", "predict_gpu", "run_measurement", "spec_names", "study_workload",
]
