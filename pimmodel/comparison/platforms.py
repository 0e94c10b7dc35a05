"""One workload on the three platforms of the study, as training jobs (for the accuracy stand-ins) and as time
per epoch. The CPU and GPU runs train the same rows as the study's baselines did
(``baselines.cpu_workload_of`` / ``gpu_workload_of``); the CPU uses the PIM run's shifts (the study's CPU
hyper-parameters equal them), the GPU the study's GA-SGD shifts (LR 2^-4 / 2^-10, SVM 2^-6 / 2^-8,
``baseline/train_yfcc_gpu.py``). The study ran the GPU on YFCC only; on sparse data it is this tool's extension.
"""

from __future__ import annotations

from ..baselines import (
    BaselinePrediction,
    BaselineWorkload,
    CpuSpec,
    GpuSpec,
    cpu_workload_of,
    gpu_workload_of,
    predict_cpu,
    predict_gpu,
)
from ..specs import Workload
from ..specs.workload import study_hyperparams
from .accuracy import TrainingJob


def pim_job(w: Workload) -> TrainingJob:
    hp = w.hp
    return TrainingJob("pim", w.model, w.optimizer, w.dataset.layout, w.dpus, w.rows_per_dpu, w.local_batch,
                       hp.learning_rate_shift, hp.reg_shift, hp.admm_alpha_shift, w.local_epochs, w.epochs,
                       w.kernels)


def cpu_job(w: Workload, bw: BaselineWorkload) -> TrainingJob:
    hp = w.hp
    return TrainingJob("cpu", w.model, w.optimizer, w.dataset.layout, bw.processes,
                       -(-bw.rows // bw.processes), bw.batch_size, hp.learning_rate_shift, hp.reg_shift,
                       hp.admm_alpha_shift, w.local_epochs, w.epochs)


def gpu_job(w: Workload, bw: BaselineWorkload) -> TrainingJob:
    ga = study_hyperparams(w.dataset, w.model, "ga-sgd")
    return TrainingJob("gpu", w.model, "ga-sgd", w.dataset.layout, 1, bw.rows, bw.batch_size,
                       ga.learning_rate_shift, ga.reg_shift, epochs=w.epochs)


def cpu_epoch(w: Workload, spec: CpuSpec) -> BaselinePrediction:
    return predict_cpu(cpu_workload_of(w), spec)


def gpu_epoch(w: Workload, spec: GpuSpec) -> BaselinePrediction:
    return predict_gpu(gpu_workload_of(w), spec)
