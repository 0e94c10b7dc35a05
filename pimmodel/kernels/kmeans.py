"""UPMEM's K-means (``upmem/dpu_kmeans``), described in the kernel vocabulary: one Lloyd iteration per launch.

Source: the version behind the real runs of ``validation/upmem-scale/dpu-kmeans.csv``, ``upmem/dpu_kmeans @
df30f5c``, cited ``K/<file>:<line>`` with ``K/dpu`` = ``src/dpu_program/kmeans_dpu_kernel.c``, ``K/iter`` =
``src/host_program/lloyd_iter.c``, ``K/dimm`` = ``src/host_program/dimm_manager.c``, ``K/py`` =
``src/dpu_kmeans/_kmeans.py``, ``K/h`` = ``src/kmeans.h``. Structure:

- the host quantizes the (mean-centred, K/py:401-405) features to int16 (``FEATURE_TYPE 16``, K/h:76; scale
  ``int16 max / max|x| / 2.1``, ``src/dpu_kmeans/_dimm.py``), pads the points to a multiple of 8 per DPU
  (``npadded``, ``src/main.cpp:95-96``) and pushes every DPU its block once (K/dimm:105-133): the CPU->PIM phase;
- a tasklet takes tasks of ``task_points`` points (512 B of WRAM, K/h:38-39; sized by ``get_task_size``,
  K/dimm:165-200) through the ``task_mutex`` (K/dpu:151-161), reads them with one ``mram_read`` (K/dpu:424-425)
  and, per point, computes the squared distance to every centroid in int16/int64 (K/dpu:441-462; ``diff`` is
  ``volatile``: one store and two loads per product), keeps the first minimum (K/dpu:458-461), then adds the
  point to its cluster under ``write_count_mutex`` and ``write_mutex`` (K/dpu:281-299);
- after a barrier tasklet 0 writes the counts and the int64 sums to MRAM (K/dpu:340-354);
- per iteration the host broadcasts the int16 centroids to the WRAM symbol ``c_clusters`` (K/iter:65-67), launches
  (timed: the kernel phase, K/iter:69-74), pulls the counts and the sums (K/iter:138-162), adds them over the DPUs
  (K/iter:167-178) and divides in numpy (K/py:120-125);
- after the last iteration one more launch computes the inertia (``compute_inertia``, K/iter:203-252; its pull and
  broadcasts are the PIM->CPU timer, K/iter:229-250).

Instruction counts follow the PrIM counting rule (``prim_counts``); the constants below that the source does not
fix are assumptions (tag A), chosen from the instruction set and never from a measured time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from .. import primitives as P
from .prim_counts import ACCESS, CALL, DMA_SETUP, LOOP
from .vocabulary import Chain, Dma, HostCall, KernelRun, Num, Section, Work

TASKLETS = 16
"""``-DNR_TASKLETS=16`` (``setup.py:43`` of the same commit)."""
FEATURE_BYTES = 2
"""int16 features (K/h:76-81)."""
WRAM_FEATURES_BYTES = 512
"""``WRAM_FEATURES_SIZE`` (K/h:38-39): the WRAM buffer of one task."""
MAX_CLUSTERS = 32
MAX_FEATURES = 34
"""``ASSUMED_NR_CLUSTERS``, ``ASSUMED_NR_FEATURES`` (K/h:36-37)."""
MRAM_BYTES = 64 * 1024 * 1024
MAX_FEATURES_PER_DPU = MRAM_BYTES // FEATURE_BYTES // 2
"""``MAX_FEATURE_DPU`` (K/h:86): half of MRAM holds the features."""

MUL16 = 7
"""A: the int16 x int16 product of ``diff * diff`` (K/dpu:453) as the DPU's 8x8 multiplies: four byte products
(``mul_sl_sl``, ``mul_sl_sh``, ``mul_sh_sl``, ``mul_sh_sh``) and three ``lsl_add``; no ``__mulsi3`` call (the
reason the code quantizes to int16). No compiled dpu_kmeans binary was available to confirm it."""
PER_PRODUCT = dict(bookkeeping=2 * 1 + 1 + 2 * 1 + 1, int32_add=1, int64_add=1)
"""One (cluster, feature) term of the unrolled distance loop (K/dpu:445-455, ``#pragma unroll``: immediate
offsets, no loop control): load the point's and the centroid's int16 (2), store the volatile ``diff`` (1), load it
twice (2), sign-extend the product to 64 bits (1); the subtraction (int32_add) and ``dist +=`` (int64_add); plus
``MUL16`` instructions of bookkeeping for the product."""
PER_CLUSTER = 2 + ACCESS + 3 + LOOP
"""Per centroid (K/dpu:441-462): ``dist = 0`` (two registers), the ``cluster_base_indices`` load, the 64-bit
``dist < min_dist`` (sub, subc, branch) and the loop's increment and branch."""
MIN_UPDATE = 2
"""``min_dist = dist; index = icluster`` when the distance is smaller (K/dpu:458-461): two moves (a pair of
registers for the 64-bit minimum counts as one ``movd``)."""
PER_POINT = 6 + ACCESS + LOOP + CALL
"""Per point besides the clusters (K/dpu:431-435, 468-473): ``min_dist``/``index`` set-up (3), the point base index
load, the ``task_reduce`` call with its arguments (K/dpu:470-471, 5 arguments: 3 besides ``CALL``), the loop."""
MUTEX = 3
"""A ``mutex_lock``/``mutex_unlock`` pair's instructions on the lock holder's path (acquire with its retry branch,
release)."""
COUNT_LOCKED = MUTEX + ACCESS + 1 + 1
"""``centers_count[icluster]++`` under ``write_count_mutex`` (K/dpu:281-283): address + load, add, store."""
SUM_LOCKED_PER_FEATURE = dict(bookkeeping=1 + 1 + 1 + 1, int64_add=1)
"""Per feature under ``write_mutex`` (K/dpu:290-299, unrolled): load the int16, sign-extend, load and store the
int64 sum (``ld``/``sd`` one each), the 64-bit add."""
DISPATCH_LOCKED = MUTEX + 2 * ACCESS + 2 + 2 * 1
"""``taskDispatch`` under ``task_mutex`` (K/dpu:151-161): two loads, two adds, two stores."""
PER_TASK = DISPATCH_LOCKED + 4 + DMA_SETUP + 6
"""Per task outside the locks: the dispatch call and its bound test (4), the ``mram_read`` (``DMA_SETUP``), the
``max_ipoint`` computation (K/dpu:427-430: 6)."""
INIT_SERIAL_PER_WORD = 2
"""Tasklet 0's ``memset`` of the counts and sums (K/dpu:211-218): store + loop per 8-B word (A: the SDK's memset
stores double words)."""
SETUP = 40
"""Per tasklet and launch: ``me()``, the globals' set-up (K/dpu:176-203), the calls (as ``prim_counts.SETUP``)."""
LOOKUP_PER_ENTRY = 4
"""One entry of the lookup tables (K/dpu:224-236): store, add, compare, branch."""


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class KmeansShape:
    """One K-means problem on ``dpus`` DPUs: ``points`` x ``dims`` int16 features, ``clusters`` centroids."""

    points: int
    dims: int
    clusters: int
    dpus: int

    def __post_init__(self) -> None:
        if min(self.points, self.dims, self.clusters, self.dpus) < 1:
            raise ValueError("points, dims, clusters and dpus must be positive")

    @property
    def points_per_dpu(self) -> int:
        """``npointperdpu``: the points padded to a multiple of 8 per DPU (src/main.cpp:95-96)."""
        return ceil_div(self.points, 8 * self.dpus) * 8

    def real_points(self) -> list[int]:
        """Real (unpadded) points of each DPU: the first DPUs are full (K/dimm:112-119)."""
        per = self.points_per_dpu
        return [max(0, min(per, self.points - i * per)) for i in range(self.dpus)]

    @property
    def task_bytes(self) -> int:
        """``get_task_size`` (K/dimm:165-200)."""
        max_task = (WRAM_FEATURES_BYTES // FEATURE_BYTES) // self.dims
        per = self.points_per_dpu
        ntasks = ceil_div(ceil_div(per, max(max_task, 1)), TASKLETS) * TASKLETS
        points = max(1, min(ceil_div(per, ntasks), max_task))
        nbytes = points * self.dims * FEATURE_BYTES
        lcm = self.dims * FEATURE_BYTES * 8 // math.gcd(self.dims * FEATURE_BYTES, 8)
        nbytes = nbytes // lcm * lcm
        return max(nbytes, lcm)

    @property
    def task_points(self) -> int:
        """Points per task (K/dimm:219-220)."""
        return self.task_bytes // FEATURE_BYTES // self.dims


def fits(shape: KmeansShape) -> str:
    """'' if the kernel can run ``shape``, else why not (K/h:36-37, 86; K/dimm:193-196)."""
    if shape.clusters > MAX_CLUSTERS:
        return f"{shape.clusters} clusters exceed the kernel's ASSUMED_NR_CLUSTERS = {MAX_CLUSTERS}"
    if shape.dims > MAX_FEATURES:
        return f"{shape.dims} features exceed the kernel's ASSUMED_NR_FEATURES = {MAX_FEATURES}"
    if shape.points_per_dpu * shape.dims > MAX_FEATURES_PER_DPU:
        return (f"{shape.points_per_dpu * shape.dims:,} features per DPU exceed MAX_FEATURE_DPU = "
                f"{MAX_FEATURES_PER_DPU:,}")
    return ""


def _mul_bookkeeping() -> dict[str, float]:
    ops: dict[str, float] = dict(PER_PRODUCT)
    ops["bookkeeping"] += MUL16
    return ops


def _assign_section(name: str, points: Num, tasks: Num, task_bytes: Num, dims: Num, clusters: Num,
                    updates_per_point: Num, reduce: bool) -> Section:
    """The main loop over tasks (K/dpu:415-484) on one DPU: ``points`` real points in ``tasks`` tasks; ``reduce``:
    the Lloyd launch (``task_reduce``), else the inertia launch (``inertia_tasklets[...] += min_dist``)."""
    products = points * clusters * dims
    per = _mul_bookkeeping()
    ops: dict[str, Num] = {k: v * products for k, v in per.items()}
    ops["bookkeeping"] = (ops["bookkeeping"] + points * clusters * PER_CLUSTER + points * updates_per_point * MIN_UPDATE
                          + points * PER_POINT + tasks * PER_TASK)
    dispatch = Chain("mutex", tasks + TASKLETS, {"bookkeeping": DISPATCH_LOCKED}, lock="task")
    chains: tuple[Chain, ...] = (dispatch,)
    if reduce:
        count = Chain("mutex", points, {"bookkeeping": COUNT_LOCKED}, lock="count")
        sums = Chain("mutex", points, {"bookkeeping": MUTEX + SUM_LOCKED_PER_FEATURE["bookkeeping"] * dims,
                                       "int64_add": SUM_LOCKED_PER_FEATURE["int64_add"] * dims}, lock="write")
        chains = (dispatch, count, sums)
    else:
        ops["bookkeeping"] = ops["bookkeeping"] + points * 2 * ACCESS
        ops["int64_add"] = ops["int64_add"] + points
    read = Dma("read", task_bytes, TASKLETS, tasks)
    return Section(name, True, 1, Work(ops, dmas=(read,), chains=chains))


def lloyd_sections(points: Num, tasks: Num, task_bytes: Num, task_points: Num, dims: Num, clusters: Num,
                   updates_per_point: Num, reduce: bool = True) -> tuple[Section, ...]:
    """One launch's sections on the DPU with ``points`` real points (see the module docstring)."""
    words = clusters / 2 + clusters * dims if reduce else TASKLETS
    init_serial = Section("init", False, 1, Work({"bookkeeping": 10 + INIT_SERIAL_PER_WORD * words}))
    lookup = Section("lookup", True, 1, Work(
        {"bookkeeping": TASKLETS * SETUP + LOOKUP_PER_ENTRY * (clusters + task_points)}, barriers=2))
    assign = _assign_section("assign", points, tasks, task_bytes, dims, clusters, updates_per_point, reduce)
    if reduce:
        count_bytes = 8 * P.ceil(4 * clusters / 8)
        final = Section("final", False, 1, Work({"bookkeeping": 2 * DMA_SETUP + 6},
                                                dmas=(Dma("write", count_bytes, 1, 1),
                                                      Dma("write", 8 * clusters * dims, 1, 1)), barriers=1))
    else:
        final = Section("final", False, 1, Work({"bookkeeping": TASKLETS * (ACCESS + LOOP), "int64_add": TASKLETS},
                                                barriers=1))
    return (init_serial, lookup, assign, final)


def lloyd_run(shape: KmeansShape, updates_per_point: float, reduce: bool = True, points: Num | None = None,
              tasks: Num | None = None) -> KernelRun:
    """One timed launch (K/iter:69-74 or 222-227) on the busiest DPU (or on ``points`` real points in ``tasks``
    tasks, e.g. the emulator's per-DPU arrays), with the host calls around it."""
    n = shape.points_per_dpu if points is None else points
    t = ceil_div(shape.points_per_dpu, shape.task_points) if tasks is None else tasks
    sections = lloyd_sections(n, t, shape.task_bytes, shape.task_points, shape.dims, shape.clusters,
                              updates_per_point, reduce)
    return KernelRun("kmeans-lloyd" if reduce else "kmeans-inertia", 1, sections,
                     iteration_calls(shape) if reduce else inertia_calls(shape),
                     tasklets=TASKLETS, mram_bytes=shape.points_per_dpu * shape.dims * FEATURE_BYTES)


def iteration_calls(shape: KmeansShape) -> tuple[HostCall, ...]:
    """Host transfers of one Lloyd iteration (K/iter:65-67, 138-162)."""
    counts = 8 * ceil_div(4 * shape.clusters, 8)  # rounded up to 8 B (K/iter:134-144)
    return (HostCall("centroids", shape.clusters * shape.dims * FEATURE_BYTES, True, mode="broadcast", memory="wram"),
            HostCall("counts", counts, False),
            HostCall("sums", 8 * shape.clusters * shape.dims, False))


def inertia_calls(shape: KmeansShape) -> tuple[HostCall, ...]:
    """Host transfers of the inertia launch (K/iter:215-220 before it, 231-246 after: the PIM->CPU timer)."""
    return (HostCall("centroids", shape.clusters * shape.dims * FEATURE_BYTES, True, mode="broadcast", memory="wram"),
            HostCall("compute_inertia", 4, True, mode="broadcast", memory="wram"),
            HostCall("inertia", 8, False, memory="wram"),
            HostCall("compute_inertia_off", 4, True, mode="broadcast", memory="wram"))


def load_calls(shape: KmeansShape) -> tuple[HostCall, ...]:
    """The one-off load of the points (K/dimm:105-133: the CPU->PIM timer)."""
    return (HostCall("t_features", shape.points_per_dpu * shape.dims * FEATURE_BYTES, True),
            HostCall("npoints", 4, True, memory="wram"))


def host_reduce_bytes(shape: KmeansShape) -> int:
    """Bytes the host's C loop streams to add the partial counts and sums over the DPUs (K/iter:167-178)."""
    return shape.dpus * (8 * ceil_div(4 * shape.clusters, 8) + 8 * shape.clusters * shape.dims)


def harmonic(k: int) -> float:
    """A: the expected number of times the running minimum improves over ``k`` distances in random order (the
    k-th harmonic number); the emulator counts the real number."""
    return sum(1.0 / i for i in range(1, k + 1))


def run_times(phases: Mapping[str, float], iterations: float) -> dict[str, float]:
    """The real runs' timers (``validation/upmem-scale/dpu-kmeans.csv``) from the phases, for ``iterations``
    Lloyd iterations of one ``n_init`` restart (K/py:436-463; the best restart's timers are reported):
    kernel (every launch, K/iter:74 and 227), cpu_pim (the load), pim_cpu (the inertia pull and broadcast,
    K/iter:229-250), inter_core (the restart's wall time minus its kernel time), per_iteration."""
    kernel = iterations * (phases["dpu_compute"] + phases["mram_wram_dma"] + phases["launch"]) \
        + phases["inertia_kernel"]
    inter = iterations * (phases["host_to_pim"] + phases["pim_to_host"] + phases["host_aggregate"]) \
        + phases["inertia_before"] + phases["inertia_after"]
    return {"kernel": kernel, "cpu_pim": phases["load"], "pim_cpu": phases["inertia_after"], "inter_core": inter,
            "per_iteration": (kernel + inter) / iterations}
