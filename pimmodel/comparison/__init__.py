"""The study's comparison: time to accuracy on PIM, CPU and GPU, side by side (``pimmodel compare``).

Accuracy per epoch comes from real training on a reduced stand-in of each platform's job (``accuracy``): the
emulator's fixed-point kernels for PIM, its float64 mode with the baselines' conventions for the PyTorch CPU and
GPU runs. Time per epoch comes from the models at the full deployment (the cost model for PIM, ``baselines`` for
CPU and GPU, ``platforms`` maps one workload onto them). A run is the product (``timeline``): "reaches X at T s".
``compare`` puts them side by side and finds the break-even DPU count or batch size.
"""

from .accuracy import Curve, StandIn, TrainingJob, cached, curve
from .compare import BreakEven, Comparison, break_even, compare, runs_of
from .platforms import cpu_job, gpu_job, pim_job
from .timeline import Run, default_target

__all__ = ["BreakEven", "Comparison", "Curve", "Run", "StandIn", "TrainingJob", "break_even", "cached", "compare",
           "cpu_job", "curve", "default_target", "gpu_job", "pim_job", "runs_of"]
