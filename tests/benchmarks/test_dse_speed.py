"""DSE speed: trials per minute in one process for a study scoring six workloads (run on demand:
``pytest tests/benchmarks/test_dse_speed.py -s``). Target: >= 2,000 trials/min, default SQLite storage."""

from __future__ import annotations

import time
from pathlib import Path

from pimmodel.dse.space import from_mapping
from pimmodel.dse.study import run, stored_trials

SIX = {
    "study": {"name": "speed", "sampler": "nsga2", "seed": 1, "batch": 100},
    "workloads": {"datasets": ["yfcc100m-hnfc6"], "models": ["lr", "svm"], "optimizers": ["ma-sgd", "ga-sgd", "admm"]},
    "objective": [{"kind": "time_per_epoch"}, {"kind": "strong_scaling_efficiency"}, {"kind": "cost"}],
    "constraints": {"fit_memory": True, "max_power_w": 2000, "max_cost": 3.0},
    "parameters": {
        "dpu_clock": {"field": "dpu_clock_hz", "low": 350, "high": 1000, "unit": "MHz", "scale": "log"},
        "tasklets": {"field": "tasklets", "low": 11, "high": 24},
        "revolver": {"field": "revolver_interval_cycles", "low": 4, "high": 11},
        "multiplier": {"choices": ["software", "native"],
                       "sets": {"native": {"int32_mul_base_instructions": 1, "mul_step_instructions": 0}}},
        "wram": {"field": "wram_bytes", "choices": [32, 64, 128], "unit": "KiB"},
        "dma_latency": {"field": "dma_read_latency_cycles", "low": 20, "high": 77},
        "push": {"field": "push_bytes_per_s_per_rank", "low": 6.68, "high": 60, "unit": "GB/s", "scale": "log"},
        "pull": {"field": "pull_bytes_per_s_per_rank", "low": 4.74, "high": 60, "unit": "GB/s", "scale": "log"},
        "rank_scaling": {"field": "rank_scaling_exponent", "low": 0.75, "high": 1.0},
        "host_thread": {"field": "host_thread_bytes_per_s", "low": 5, "high": 40, "unit": "GB/s"},
        "launch": {"field": "launch_overhead_s", "low": 0.01, "high": 0.6, "unit": "ms", "scale": "log"},
        "link_topology": {"choices": ["none", "in-rank", "ring", "all-to-all"]},
        "link_bandwidth": {"field": "link_bytes_per_s", "low": 0.5, "high": 16, "unit": "GB/s", "scale": "log"},
    },
}


def test_trials_per_minute(tmp_path: Path) -> None:
    spec = from_mapping(SIX, "benchmark")
    url = f"sqlite:///{tmp_path / 'speed.db'}"
    run(spec, url, trials=100, seed=0)  # warm the compiled-model cache and imports
    start = time.perf_counter()
    result = run(spec, url, trials=3000, seed=1)
    elapsed = time.perf_counter() - start
    rate = result.added / elapsed * 60
    print(f"\nDSE speed: {result.added} trials scoring 6 workloads in {elapsed:.1f} s = {rate:,.0f} trials/min "
          f"(SQLite, one process)")
    assert len(stored_trials(spec, url)) == 3100
    assert rate >= 2000
