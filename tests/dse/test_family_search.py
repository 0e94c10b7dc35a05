"""One study over two architecture families (issue 28, item 5): the family is a categorical axis, each family has
its own parameters, a point is priced by its family's pricing and its own capacity rule, and a study without the
axis scores exactly as before."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import optuna
import pytest

import pimmodel
from pimmodel.costmodel.evaluate import HardwareInputs, family_pricing
from pimmodel.dse.objective import Evaluator
from pimmodel.dse.space import FamilyParameter, StudySpec, load_study
from pimmodel.dse.study import definition, suggest
from pimmodel.errors import CapacityError, StudyError
from pimmodel.specs import DATASETS, Workload, load_hardware

SMALL = Path(__file__).with_name("small.toml")
BANK = "hbm-pim-aquabolt"
FAMILY_TABLES = f'''
[families]
bank-simd = "{BANK}"
'''
BANK_PARAMETERS = '''family = { choices = ["upmem-like", "bank-simd"] }
lanes = { field = "lanes", family = "bank-simd", choices = [8, 16, 32] }
command_time = { field = "command_s", family = "bank-simd", low = 1.67, high = 6.67, unit = "ns", scale = "log" }
bank = { field = "bank_bytes", family = "bank-simd", choices = [1, 16], unit = "MiB" }
'''


def _at_512() -> str:
    """small.toml at the bank system's 512 units."""
    return SMALL.read_text(encoding="utf-8").replace("dpus = 2048", "dpus = 512")


def _with_families(tmp_path: Path, parameters: str = BANK_PARAMETERS, name: str = "fam.toml",
                   text: str | None = None) -> Path:
    """small.toml (at 512 units) with a [families] table and the family axis added to its parameters."""
    base = _at_512() if text is None else text
    head, _, params = base.partition("[parameters]\n")
    path = tmp_path / name
    path.write_text(head + FAMILY_TABLES + "\n[parameters]\n" + parameters + params, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def families(tmp_path_factory: pytest.TempPathFactory) -> StudySpec:
    return load_study(_with_families(tmp_path_factory.mktemp("fam")))


def test_the_axis_suggests_only_the_picked_familys_parameters(families: StudySpec) -> None:
    bank = {"family": "bank-simd", "lanes": 16, "command_time": 2.0, "bank": 16}
    assert suggest(optuna.trial.FixedTrial(bank), families.parameters) == bank  # no UPMEM field is asked
    upmem = {"family": "upmem-like", "dpu_clock": 500.0, "mram": 64, "multiplier": "native", "push_bandwidth": 4.0,
             "link_topology": "none", "link_bandwidth": 1.0}
    assert suggest(optuna.trial.FixedTrial(upmem), families.parameters) == upmem
    study = optuna.create_study(directions=families.directions, sampler=optuna.samplers.NSGAIISampler(seed=1))
    own = {f: {p.name for p in families.parameters if getattr(p, "family", None) == f} for f, _ in families.families}
    for _ in range(30):  # define-by-run under the study's sampler: each trial holds its family's parameters only
        trial = study.ask()
        point = suggest(trial, families.parameters)
        assert set(point) == {"family"} | own[point["family"]]
        study.tell(trial, [1.0, 1.0])


def test_a_bank_simd_point_is_what_predict_says_on_the_same_spec(families: StudySpec) -> None:
    ev = Evaluator(families)
    point = {"family": "bank-simd", "lanes": 32, "command_time": 2.5, "bank": 16}
    scores = ev.evaluate([point])
    hw = load_hardware(BANK).replace(lanes=32, command_s=2.5e-9)
    for i, case in enumerate(families.workloads):
        w = Workload(DATASETS[case.dataset], case.model, case.optimizer, 512, scaling="weak", epochs=1)
        expected = pimmodel.predict(w, hw).per_epoch_total_s
        assert math.isclose(scores.epoch_s[0][i], expected, rel_tol=1e-9), case.label
    assert scores.feasible()[0]


def test_a_field_of_the_other_family_is_refused_in_one_line(tmp_path: Path) -> None:
    wrong = _with_families(tmp_path, BANK_PARAMETERS + 'rows = { field = "lanes", choices = [8, 16] }\n')
    with pytest.raises(StudyError) as exc:
        load_study(wrong)
    message = str(exc.value)
    assert "\n" not in message and "parameters.rows" in message and 'add family = "bank-simd"' in message
    typo = _with_families(tmp_path, BANK_PARAMETERS + 'wide = { field = "lane", family = "bank-simd", '
                          'choices = [8, 16] }\n', "typo.toml")
    with pytest.raises(StudyError, match='bank-simd family \\(did you mean "lanes"'):
        load_study(typo)
    other = _with_families(tmp_path, BANK_PARAMETERS + 'clock = { field = "dpu_clock_hz", family = "bank-simd", '
                           'low = 350, high = 700, unit = "MHz" }\n', "other.toml")
    with pytest.raises(StudyError, match='add family = "upmem-like"'):
        load_study(other)
    lone = _with_families(tmp_path, 'lanes = { field = "lanes", family = "bank-simd", choices = [8, 16] }\n',
                          "lone.toml")
    with pytest.raises(StudyError, match="searches only upmem-like"):
        load_study(lone)


def test_the_axis_refuses_what_a_family_cannot_run(tmp_path: Path) -> None:
    sparse = _at_512().replace('datasets = ["yfcc100m-hnfc6"]', 'datasets = ["criteo-1tb"]')
    with pytest.raises(StudyError, match="cannot run criteo-1tb"):
        load_study(_with_families(tmp_path, text=sparse))
    energy = _at_512().replace('kind = "cost"', 'kind = "energy_per_epoch"\ndpus = 512')
    with pytest.raises(StudyError, match="no power model"):
        load_study(_with_families(tmp_path, text=energy, name="energy.toml"))


def test_a_study_without_the_axis_scores_and_is_stored_as_before(small: StudySpec, families: StudySpec,
                                                                  tmp_path: Path) -> None:
    assert not small.families and not any(isinstance(p, FamilyParameter) for p in small.parameters)
    assert all("family" not in p for p in definition(small)["parameters"].values())  # the stored fingerprint
    (tmp_path / "plain.toml").write_text(_at_512(), encoding="utf-8")
    same = load_study(tmp_path / "plain.toml")
    plain, axis = Evaluator(same), Evaluator(families)
    study = optuna.create_study(directions=same.directions, sampler=optuna.samplers.RandomSampler(seed=4))
    points = [suggest(study.ask(), same.parameters) for _ in range(40)]
    for ours, theirs in ((points, [{**p, "family": "upmem-like"} for p in points]), ([{}], [{}])):
        before, after = plain.evaluate(ours), axis.evaluate(theirs)
        for a, b in ((before.values, after.values), (before.constraints, after.constraints),
                     (before.epoch_s, after.epoch_s)):
            assert np.array_equal(a, b, equal_nan=True)  # bit-identical: the UPMEM points take the unchanged path


def test_the_memory_constraint_refuses_a_shard_a_bank_unit_cannot_hold(families: StudySpec) -> None:
    ev = Evaluator(families)
    fits = {"family": "bank-simd", "lanes": 16, "command_time": 3.3, "bank": 16}
    scores = ev.evaluate([fits, {**fits, "bank": 1}])
    memory = ev.constraint_names.index("memory")
    assert scores.constraints[0][memory] <= 0 < scores.constraints[1][memory]
    w = Workload(DATASETS["yfcc100m-hnfc6"], "lr", "ma-sgd", 512)
    hw = load_hardware(BANK)
    pricing = family_pricing(HardwareInputs(hw.numeric(), family="bank-simd"))
    small_banks = {**hw.numeric(), "bank_bytes": np.array([16.0, 1.0]) * 2**20}
    excess = pricing.memory_excess(w, small_banks)
    assert excess[0] <= 0 < excess[1]
    with pytest.raises(CapacityError):  # the family's own capacity check agrees
        pimmodel.predict(w, hw.replace(bank_bytes=2**20))


def test_cost_counts_a_bank_unit_in_upmem_dpus(families: StudySpec) -> None:
    ev = Evaluator(families)
    scores = ev.evaluate([{"family": "bank-simd", "lanes": 16, "command_time": 10 / 3, "bank": 16}, {}])
    cost = [o.kind for o in families.objectives].index("cost")
    assert scores.values[1][cost] == 1.0
    assert math.isclose(scores.values[0][cost], ev.costs.unit_cost("bank-simd"), rel_tol=1e-6)


def test_the_shipped_pim_families_study_loads_and_scores_both_families() -> None:
    spec = load_study("pim-families")
    assert [f for f, _ in spec.families] == ["upmem-like", "bank-simd"]
    ev = Evaluator(spec)
    scores = ev.evaluate([{}, {"family": "bank-simd", "lanes": 16, "command_time": 10 / 3, "host_write": 1228.8,
                               "host_read": 1228.8}])
    assert scores.feasible().all() and np.isfinite(scores.values).all()
