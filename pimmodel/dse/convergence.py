"""Epochs to a target accuracy per optimizer: the statistical side of the co-design study, from training for real on
reduced stand-ins of the study's jobs, computed once and looked up per trial.

``build_table`` trains every (dataset, model, optimizer, H, gossip graph) variant the co-design study can pick on
the emulator (Q31, the study's kernels) and records the test metric (accuracy for the dense YFCC-like data, ROC AUC
for the imbalanced sparse Criteo-like data) at ``StandIn.checkpoints`` points per epoch: the model the host holds
at that point (the last global average; ADMM's changes once per epoch), or for decentralized SGD the average of
the DPUs' models. The table is stored as package data (``studies/convergence.json``, with the stand-in that made
it); ``Convergence.epochs_to`` interpolates linearly between checkpoints.

What a stand-in keeps from the study's job at 2,048 DPUs: the algorithm, its learning-rate, decay and ADMM shifts,
H, the local steps per epoch (the batch shrinks with the rows: YFCC b = 8 -> 2, GA 4 -> 1 row per DPU and round;
Criteo b = 2,048 -> 16, GA 128 -> 1) and the number of ranks (ranks of 2 of the stand-in's 64 DPUs, as 64 of
2,048). What it shrinks: 64 DPUs, 832 (dense) or 1,536 (sparse) synthetic rows per DPU, 256 dense features or
20,000 hashed ones. Caveats: a ring or torus of 64 DPUs mixes far faster than one of 2,048 (a ring's spectral gap
falls as 1/N^2), so decentralized SGD's consensus error is understated; MA-SGD averages 64 models, not 2,048; the
synthetic data are easier than YFCC100M or Criteo (every optimizer is near its plateau within an epoch). The
table ranks optimizers by statistical efficiency per epoch on these data; it is not the study's accuracy.
allreduce-sgd trains GA-SGD's model bit for bit (``tests/emulator/test_decentral.py``), so it shares GA-SGD's
curve, and hier-sgd's curve is its host variant (over links it rounds each DPU's share down instead of the
host's sum: a difference below one Q31 unit per weight and step).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import StudyError
from ..resources import DATA_DIR
from ..specs import DATASETS, REGISTRY, study_hyperparams
from ..specs.optimizers import takers

TABLE_FILE = DATA_DIR / "studies" / "convergence.json"
SYNC_CHOICES = (1, 4, 16, 64)
"""The H values the table holds for the optimizers that take ``sync_every``."""
GRAPHS = {"ring": "ring", "torus": "torus", "all-to-all": "torus"}
"""The gossip graph decentralized SGD uses on each link topology."""


@dataclass(frozen=True, slots=True)
class StandIn:
    """How the study's jobs are reduced for the table (see the module docstring)."""

    dpus: int = 64
    rank_dpus: int = 2
    dense_rows: int = 832
    sparse_rows: int = 1536
    dense_features: int = 256
    sparse_features: int = 20_000
    test_rows: int = 4096
    epochs: int = 10
    checkpoints: int = 8
    seed: int = 0

    def rows(self, layout: str) -> int:
        return self.dense_rows if layout == "dense" else self.sparse_rows


@dataclass(frozen=True, slots=True)
class Variant:
    """One curve of the table."""

    dataset: str
    model: str
    optimizer: str
    sync_every: int = 1
    graph: str = ""

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.model}/{self.optimizer}/H{self.sync_every}/{self.graph or '-'}"


def variants(datasets: Sequence[str], models: Sequence[str]) -> list[Variant]:
    """Every variant the co-design study can pick: each optimizer; H in ``SYNC_CHOICES`` where it takes H; both
    gossip graphs for decentralized SGD."""
    out = []
    for dataset in datasets:
        for model in models:
            for name in REGISTRY:
                if name in takers("sync_every"):
                    out += [Variant(dataset, model, name, h) for h in SYNC_CHOICES]
                elif REGISTRY[name].gossips:
                    out += [Variant(dataset, model, name, 1, g) for g in ("ring", "torus")]
                else:
                    out.append(Variant(dataset, model, name))
    return out


def twin(v: Variant) -> Variant:
    """The variant whose curve ``v`` shares: its entry's ``curve_of`` (allreduce-sgd: GA-SGD's); with H = 1, the
    optimizer whose step it repeats (local/hier-sgd: MA-SGD's); both bit for bit, tested."""
    info = REGISTRY[v.optimizer]
    if info.curve_of:
        return Variant(v.dataset, v.model, info.curve_of)
    if v.optimizer in takers("sync_every") and v.sync_every == 1:
        return Variant(v.dataset, v.model, info.study_name)
    return v


@dataclass(frozen=True)
class Convergence:
    """The table: per variant key, the test metric at each checkpoint (``checkpoints`` per epoch)."""

    stand_in: StandIn
    curves: dict[str, list[float]] = field(default_factory=dict)
    metric: dict[str, str] = field(default_factory=dict)
    """per (dataset) the metric: accuracy or auc."""

    def curve(self, v: Variant) -> list[float]:
        try:
            return self.curves[twin(v).key]
        except KeyError:
            raise StudyError(f"the convergence table has no curve for {v.key}; rebuild it with "
                             "pimmodel.dse.convergence.build_table") from None

    def target(self, dataset: str, model: str, fraction: float) -> float:
        """``fraction`` of the metric MA-SGD reaches after the stand-in's epochs (the study's optimizer and
        budget)."""
        return fraction * self.curve(Variant(dataset, model, "ma-sgd"))[-1]

    def epochs_to(self, v: Variant, target: float) -> float:
        """Epochs until ``v``'s curve first reaches ``target``, interpolated linearly between checkpoints (from the
        untrained model's 0.5 at 0 epochs); inf if it never does within the stand-in's epochs."""
        per = self.stand_in.checkpoints
        points = [0.5, *self.curve(v)]
        for i in range(1, len(points)):
            if points[i] >= target:
                lo, hi = points[i - 1], points[i]
                frac = 1.0 if hi <= lo or lo >= target else (target - lo) / (hi - lo)
                return (i - 1 + min(1.0, max(0.0, frac))) / per
        return math.inf

    def to_json(self) -> dict[str, Any]:
        return {"stand_in": asdict(self.stand_in), "metric": self.metric, "curves": self.curves}


@lru_cache(maxsize=4)
def load_table(path: str = str(TABLE_FILE)) -> Convergence:
    """The stored table (a one-line ``StudyError`` if it is missing or malformed)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return Convergence(StandIn(**data["stand_in"]), {k: [float(x) for x in v] for k, v in data["curves"].items()},
                           dict(data["metric"]))
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise StudyError(f"cannot read the convergence table {path!r} ({exc}); rebuild it with "
                         "pimmodel.dse.convergence.build_table") from None


# ---------------------------------------------------------------- building the table (minutes; run on demand)
def build_table(datasets: Sequence[str], models: Sequence[str], stand_in: StandIn = StandIn(),
                progress: Callable[[str], None] | None = None) -> Convergence:
    """Train every variant's stand-in (its own curve, not a twin's) and return the table."""
    curves: dict[str, list[float]] = {}
    for v in variants(datasets, models):
        if twin(v) != v:
            continue
        curves[v.key] = train_curve(v, stand_in)
        if progress is not None:
            progress(f"{v.key}: {curves[v.key][-1]:.4f}")
    metric = {d: ("accuracy" if DATASETS[d].layout == "dense" else "auc") for d in datasets}
    return Convergence(stand_in, curves, metric)


def train_curve(v: Variant, s: StandIn) -> list[float]:
    """The test metric of ``v``'s stand-in at every checkpoint of ``s.epochs`` epochs."""
    from ..emulator.trace import Trace
    from ..emulator.trainers import State, check_config, trainer_of

    shards, evaluate = _data(v, s)
    cfg = _config(v, s)
    b = check_config(shards, cfg)
    st = State(shards, cfg)
    steps = -(-shards.rows_per_dpu // b)
    every = steps / s.checkpoints
    values: list[float] = []
    done = [0]
    decentralized = REGISTRY[v.optimizer].links == "global" and REGISTRY[v.optimizer].batch == "local"

    def checkpoint(n: int, _: int) -> None:
        done[0] += n
        while len(values) < round(done[0] / every):  # the model the host holds now (dpsgd: the DPUs' average)
            values.append(evaluate(st, decentralized))

    trainer = trainer_of(v.optimizer)
    for _ in range(s.epochs):
        trainer(st, shards, cfg, b, steps, Trace(shards.n_dpus, cfg.tasklets, epochs=1), checkpoint)
        values[len(values) - 1] = evaluate(st, decentralized)  # after the epoch's last average (ADMM: its round)
    return values[: s.epochs * s.checkpoints]


def _config(v: Variant, s: StandIn) -> Any:
    from dataclasses import replace

    from ..emulator.config import Options, train_config
    from ..specs import Workload, load_hardware

    ds = DATASETS[v.dataset]
    info = REGISTRY[v.optimizer]
    hp = study_hyperparams(ds, v.model, v.optimizer)
    shrink = s.rows(ds.layout) / ds.rows_per_dpu_weak
    b = max(1, 1 << int(round(math.log2(hp.batch_size * shrink))))
    per_dpu_global = max(1, round(hp.global_batch_size / 2048 * shrink))
    hyper = replace(hp, batch_size=b, global_batch_size=per_dpu_global * s.dpus, sync_every=v.sync_every)
    stand_in = replace(ds, rows_per_dpu_weak=s.rows(ds.layout))
    workload = Workload(stand_in, v.model, v.optimizer, s.dpus, epochs=s.epochs, hyper=hyper)
    hardware = load_hardware("upmem-2556").replace(
        link_topology=v.graph or ("none" if info.links == "optional" else "ring"), dpus_per_rank=s.rank_dpus)
    return train_config(workload, Options(), hardware)


def _data(v: Variant, s: StandIn) -> tuple[Any, Callable[[Any, bool], float]]:
    """The stand-in's training shards and its test metric of a trainer's state."""
    from ..emulator import host
    from ..emulator.data import SyntheticDense, shard, synthetic_sparse
    from ..emulator.metrics import decision, evaluate

    layout = DATASETS[v.dataset].layout
    if layout == "dense":
        shards: Any = SyntheticDense(s.dpus, s.dense_rows, s.dense_features, s.seed)
        xt, yt = SyntheticDense(1, s.test_rows, s.dense_features, s.seed, stream=1).rows(0, s.test_rows)
        x_test, y_test = xt[0], yt[0]
    else:
        n = s.dpus * s.sparse_rows
        idx, y = synthetic_sparse(n + s.test_rows, s.sparse_features, s.seed)
        shards = shard(idx[:n], y[:n], s.dpus, "sparse", s.sparse_features)
        x_test, y_test = idx[n:], y[n:]
    key = "accuracy" if layout == "dense" else "auc"

    def metric(st: Any, decentralized: bool) -> float:
        w, bias = st.w, st.bias
        if decentralized:
            w = host.average_fixed(np.asarray(st.w_local, dtype=np.int64))
            bias = host.average_bias_fixed(st.b_local) if st.dense else 0
        weights = st.decoded(w, bias)
        value = evaluate(decision(x_test, layout, weights.coef, weights.intercept), y_test, v.model)[key]
        return float(value) if value == value else 0.5  # NaN (one class predicted everywhere): chance

    return shards, metric


def write_table(table: Convergence, path: Path = TABLE_FILE) -> Path:
    from ..atomic import write_text

    write_text(path, json.dumps(table.to_json(), indent=0, sort_keys=True) + "\n")
    return path


def main() -> None:
    """``python -m pimmodel.dse.convergence``: rebuild the shipped table (all four study workloads; ~20 minutes)."""
    import sys

    table = build_table(list(DATASETS), ["lr", "svm"], progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(write_table(table))


if __name__ == "__main__":
    main()
