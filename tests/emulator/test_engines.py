"""Every engine trains the same bits: worker processes (shared memory) and Ray actors (a local cluster on loopback)
against one process, for the trained model after every epoch, every metric and every event count. Agreement between
engines is the emulator's consistency with itself, not evidence about hardware."""

from __future__ import annotations

import pytest
from support import hardware_file

from pimmodel.emulator.api import emulate
from pimmodel.emulator.config import Options
from pimmodel.emulator.record import trace_record

DPUS = 12
FEATURES = {"synthetic-yfcc": 256, "synthetic-criteo": 20_000}


def _dpus(optimizer: str) -> int:
    """allreduce-sgd divides by a power-of-two global batch that every DPU's share divides: 8 DPUs, not 12."""
    return 8 if optimizer == "allreduce-sgd" else DPUS


def _hyper(optimizer: str) -> dict[str, int]:
    if optimizer in ("ga-sgd", "allreduce-sgd"):
        return {"global_batch_size": 4 * _dpus(optimizer), "learning_rate_shift": 3}
    return {"batch_size": 4, "learning_rate_shift": 3, **({"sync_every": 2} if "sgd" in optimizer
                                                           and optimizer.split("-")[0] in ("local", "hier") else {})}


def _pair(dataset: str, model: str, optimizer: str, topology: str, arithmetic: str, engine: str, **extra: object):
    hw = str(hardware_file(topology, dpus_per_rank=2))
    kw = dict(epochs=2, samples_per_dpu=20, features=FEATURES[dataset], hardware=hw, arithmetic=arithmetic)
    dpus = _dpus(optimizer)
    one = emulate(dataset, dpus, model, optimizer, _hyper(optimizer), Options(engine="serial", **kw))
    many = emulate(dataset, dpus, model, optimizer, _hyper(optimizer), Options(engine=engine, **kw, **extra))
    return one, many


def _same(one, many, engine: str) -> None:
    assert many.engine.startswith(engine) and one.engine == "serial"
    assert many.history == one.history  # every metric of every epoch, bit for bit
    assert trace_record(many.trace, many.hardware) == trace_record(one.trace, one.hardware)
    assert any(h["train_accuracy"] != 0.5 for h in one.history)  # it trained


PROCESS_CASES = [
    ("synthetic-yfcc", "lr", "ma-sgd", "none", "fixed"), ("synthetic-criteo", "svm", "ma-sgd", "none", "fixed"),
    ("synthetic-yfcc", "svm", "ga-sgd", "none", "fixed"), ("synthetic-criteo", "lr", "ga-sgd", "none", "float64"),
    ("synthetic-yfcc", "lr", "admm", "none", "float64"), ("synthetic-criteo", "lr", "admm", "none", "fixed"),
    ("synthetic-yfcc", "lr", "local-sgd", "none", "fixed"), ("synthetic-yfcc", "svm", "hier-sgd", "ring", "float64"),
    ("synthetic-criteo", "lr", "hier-sgd", "none", "fixed"), ("synthetic-yfcc", "lr", "dpsgd", "torus", "fixed"),
    ("synthetic-yfcc", "svm", "dpsgd", "ring", "float64"), ("synthetic-yfcc", "lr", "allreduce-sgd", "ring", "fixed"),
]


@pytest.mark.slow
@pytest.mark.parametrize("dataset,model,optimizer,topology,arithmetic", PROCESS_CASES)
def test_worker_processes_are_bit_identical_to_one_process(dataset, model, optimizer, topology, arithmetic) -> None:
    """Three workers for 12 DPUs: groups of 4 (hier-sgd's ranks of 2 stay inside a group; a torus of 12 DPUs is
    3 x 4, so every group needs rows of the others)."""
    _same(*_pair(dataset, model, optimizer, topology, arithmetic, "process", workers=3), "process")


@pytest.mark.slow
def test_ray_engine_starts_and_stops_a_local_cluster_by_default() -> None:
    """Without an address: a local Ray cluster on loopback, started for the run and stopped after it (3 actors)."""
    ray = pytest.importorskip("ray")
    _same(*_pair("synthetic-yfcc", "lr", "ma-sgd", "none", "fixed", "ray", workers=3), "ray")
    assert not ray.is_initialized()


@pytest.fixture(scope="module")
def ray_cluster():
    """One local cluster on loopback for the cases below (a run on a cluster it did not start leaves it up)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=3, _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
@pytest.mark.parametrize("dataset,model,optimizer,topology", [
    ("synthetic-criteo", "lr", "ga-sgd", "none"), ("synthetic-yfcc", "svm", "admm", "none"),
    ("synthetic-yfcc", "lr", "dpsgd", "torus"), ("synthetic-criteo", "svm", "ma-sgd", "none"),
])
def test_ray_actors_are_bit_identical_to_one_process(ray_cluster, dataset, model, optimizer, topology) -> None:
    """3 actors on a local cluster: MA-SGD, GA-SGD, ADMM and decentralized SGD on a torus (whose neighbours' rows
    cross the actors)."""
    _same(*_pair(dataset, model, optimizer, topology, "fixed", "ray", workers=3), "ray")
    assert ray_cluster.is_initialized()


def test_groups_split_on_rank_bounds() -> None:
    from pimmodel.emulator.group import split

    assert split(12, 3) == [(0, 4), (4, 8), (8, 12)]
    assert split(10, 3, align=4) == [(0, 4), (4, 8), (8, 10)]
    assert split(4, 8) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert split(6, 4, align=4) == [(0, 4), (4, 6)]  # fewer aligned units than workers: fewer groups


def test_auto_engine_keeps_small_runs_here_and_bad_options_are_one_line() -> None:
    from pimmodel.errors import PimModelError

    run = emulate("synthetic-yfcc", 4, "lr", "ma-sgd", None, Options(epochs=1, samples_per_dpu=16, features=64))
    assert run.engine == "serial"
    with pytest.raises(PimModelError, match="--address is the Ray cluster"):
        emulate("synthetic-yfcc", 4, "lr", "ma-sgd", None, Options(epochs=1, samples_per_dpu=16, features=64,
                                                                   address="127.0.0.1:6379"))
    with pytest.raises(PimModelError, match="unknown engine"):
        emulate("synthetic-yfcc", 4, "lr", "ma-sgd", None, Options(epochs=1, samples_per_dpu=16, features=64,
                                                                   engine="dask"))


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["process", "ray"])
def test_ctrl_c_stops_the_workers_and_exits_130(engine: str) -> None:
    """A real ``pimmodel emulate`` interrupted while its workers (or Ray actors) train: one line, exit 130, and no
    process it started is left behind."""
    import signal
    import subprocess
    import sys
    import time

    psutil = pytest.importorskip("psutil")
    if engine == "ray":
        pytest.importorskip("ray")
    proc = subprocess.Popen([sys.executable, "-m", "pimmodel", "emulate", "--dpus", "64", "--samples-per-dpu",
                             "3328", "--epochs", "3", "--engine", engine, "--workers", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    root = psutil.Process(proc.pid)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and len(root.children(recursive=True)) < 2:
        time.sleep(0.5)
    time.sleep(10 if engine == "process" else 30)  # the workers are training
    started = root.children(recursive=True)
    assert len(started) >= 2
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    time.sleep(2)
    assert [p.pid for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE] == []
