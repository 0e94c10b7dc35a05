"""The study's figures as data (``studies/pim-opt/figNN.toml``): every shipped file loads with the configuration the
reference gives (pim-opt-study.md §3.4, §4), names resolve, and every bad file is a one-line error."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from pimmodel.errors import StudyError
from pimmodel.reproduce import figure_paths, load_all, load_figure
from pimmodel.reproduce.spec import from_mapping, resolve

STUDY_FIGURES = ["fig2", "fig4", "fig5", "fig6", "fig7", "fig8", "fig9", "fig10", "fig11", "fig12", "fig13"]


@pytest.mark.parametrize("path", figure_paths(), ids=lambda p: p.stem)
def test_every_shipped_figure_loads(path: Path) -> None:
    spec = load_figure(path)
    assert path.stem == f"fig{spec.number:02d}" and spec.id == f"fig{spec.number}"
    assert spec.finding and spec.finding_basis and spec.shows and spec.title
    for model, optimizer, dpus, batch in spec.points():  # every point is a valid workload
        w = spec.workload(model, optimizer, dpus, batch)
        assert w.dpus == dpus and w.epochs == spec.epochs and w.scaling == spec.scaling


def test_the_figures_with_data_are_all_there() -> None:
    assert [s.id for s in load_all()] == STUDY_FIGURES


def test_configurations_are_the_studys() -> None:
    """pim-opt-study.md §3.4 and §4."""
    f = {s.id: s for s in load_all()}
    # benchmark figures: 1 epoch at 2,048 DPUs, breakdown view
    for fid, dataset, b, big_b in (("fig2", "criteo-1tb", 2048, 262_144), ("fig4", "yfcc100m-hnfc6", 8, 4096),
                                   ("fig9", "criteo-1tb", 2048, 262_144)):
        s = f[fid]
        assert (s.dataset, s.dpus, s.epochs, s.view, s.batch_size, s.global_batch_size, s.platforms) == (
            dataset, (2048,), 1, "breakdown", b, big_b, ("pim",))
    assert f["fig2"].models == ("lr",) and f["fig4"].models == f["fig9"].models == ("lr", "svm")
    assert f["fig5"].platforms == ("pim", "cpu", "gpu") and f["fig10"].platforms == ("pim", "cpu")
    assert (f["fig5"].batch_size, f["fig5"].global_batch_size) == (8, 4096)
    assert (f["fig10"].batch_size, f["fig10"].global_batch_size) == (2048, 524_288)
    assert [(w.model, w.optimizer, w.batch_sizes) for w in f["fig6"].sweeps] == [
        ("svm", "ma-sgd", (8, 16, 32, 64)), ("svm", "ga-sgd", (4096, 8192, 16384, 32768)),
        ("lr", "admm", (8, 16, 32, 64))]
    assert [w.batch_sizes for w in f["fig11"].sweeps] == [
        (1024, 2048, 4096, 8192), (131_072, 262_144, 524_288, 1_048_576), (1024, 2048, 4096, 8192)]
    for fid, scaling, b, big_b in (("fig7", "weak", 8, 8192), ("fig8", "strong", 8, 8192),
                                   ("fig12", "weak", 2048, 262_144), ("fig13", "strong", 2048, 262_144)):
        s = f[fid]
        assert (s.kind, s.scaling, s.dpus, s.batch_size, s.global_batch_size, s.epochs) == (
            "scaling", scaling, (256, 512, 1024, 2048), b, big_b, 10)


@pytest.mark.parametrize("name", ["fig5", "5", "fig05", "FIG5", "figure 5"])
def test_figure_names_resolve(name: str) -> None:
    assert resolve(name).name == "fig05.toml"


def test_unknown_figure_is_one_line_with_a_suggestion() -> None:
    with pytest.raises(StudyError, match=r"unknown figure 'fig3' \(did you mean") as info:
        load_figure("fig3")  # the study's Fig. 3 is a diagram, no data
    assert "\n" not in str(info.value)


def _base() -> dict[str, Any]:
    return tomllib.loads(resolve("fig5").read_text(encoding="utf-8"))


def _set(data: dict[str, Any], where: str, key: str, value: Any) -> dict[str, Any]:
    if value is None:
        data[where].pop(key, None)
    else:
        data[where][key] = value
    return data


BAD = {
    "unknown top-level key": (lambda d: d | {"plot": {}}, r"unknown key plot"),
    "unknown figure key": (lambda d: _set(d, "figure", "colour", "red"), r"unknown key figure.colour"),
    "misspelt workload key": (lambda d: _set(d, "workload", "optimisers", ["admm"]),
                              r"unknown key workload.optimisers \(did you mean \"optimizers\"\?\)"),
    "no workload table": (lambda d: {k: v for k, v in d.items() if k != "workload"}, r"missing workload \(a table\)"),
    "bad kind": (lambda d: _set(d, "figure", "kind", "pie"),
                 r"figure.kind must be one of batch-sweep, breakdown, data-movement"),
    "bad id": (lambda d: _set(d, "figure", "id", "figure-5"),
               r"figure.id must be a string matching .*'fig' and the study's figure number"),
    "empty finding": (lambda d: _set(d, "figure", "finding", " "), r"finding must be a non-empty string"),
    "notes not strings": (lambda d: _set(d, "figure", "notes", [1]),
                          r"figure.notes\[1\] must be a non-empty string, got 1"),
    "unknown dataset": (lambda d: _set(d, "workload", "dataset", "criteo"), r"dataset must be one of"),
    "unknown optimizer": (lambda d: _set(d, "workload", "optimizers", ["adam"]),
                          r"workload.optimizers\[1\] must be one of .*, got 'adam' \(did you mean \"admm\"\?\)"),
    "repeated model": (lambda d: _set(d, "workload", "models", ["lr", "lr"]), r"models lists a value twice"),
    "dpus descending": (lambda d: _set(d, "workload", "dpus", [2048, 256]), r"dpus must be ascending"),
    "two dpu counts": (lambda d: _set(d, "workload", "dpus", [256, 2048]), r"runs on one DPU count"),
    "dpus as text": (lambda d: _set(d, "workload", "dpus", ["2048"]),
                     r"workload.dpus\[1\] must be a whole number >= 1, got '2048'"),
    "epochs zero": (lambda d: _set(d, "workload", "epochs", 0),
                    r"workload.epochs = 0 is out of range; use a whole number >= 1"),
    "epochs bool": (lambda d: _set(d, "workload", "epochs", True),
                    r"workload.epochs must be a whole number >= 1, got True"),
    "wrong view": (lambda d: _set(d, "workload", "view", "breakdown"), r"times production runs: view = \"wall\""),
    "no pim": (lambda d: _set(d, "workload", "platforms", ["cpu"]), r"platforms must include 'pim'"),
    "missing batch": (lambda d: _set(d, "workload", "batch_size", None), r"batch_size .* is missing"),
    "missing global batch": (lambda d: _set(d, "workload", "global_batch_size", None),
                             r"global_batch_size .* is missing"),
    "batch not a power of two": (lambda d: _set(d, "workload", "batch_size", 12), r"must be a power of two"),
    "batch above the shard": (lambda d: _set(d, "workload", "batch_size", 8192), r"exceeds the 3,328 rows per DPU"),
    "global batch not a multiple": (lambda d: _set(d, "workload", "global_batch_size", 5000),
                                    r"lr ga-sgd at 2,048 DPUs: --global-batch-size 5,000 is not a multiple"),
    "sweep on a non-sweep figure": (lambda d: d | {"sweep": [{"model": "lr", "optimizer": "admm",
                                                             "batch_sizes": [8, 16]}]},
                                    r"\[\[sweep\]\] belongs to batch-sweep figures"),
    "batch sweep without panels": (lambda d: _set(d, "figure", "kind", "batch-sweep"),
                                   r"needs at least one \[\[sweep\]\] panel"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_figure_file_is_one_line(case: str, tmp_path: Path) -> None:
    change, message = BAD[case]
    with pytest.raises(StudyError, match=message) as info:
        from_mapping(change(_base()), "bad.toml")
    assert "\n" not in str(info.value) and str(info.value).startswith("bad.toml")


def test_bad_sweep_panel_names_it() -> None:
    data = tomllib.loads(resolve("fig6").read_text(encoding="utf-8"))
    data["sweep"][1]["batch_sizes"] = [4096, 3000]
    with pytest.raises(StudyError, match=r"sweep\[2\]: batch_sizes must be ascending"):
        from_mapping(data, "bad.toml")
    data["sweep"][1]["batch_sizes"] = [4096, 4100]
    with pytest.raises(StudyError, match=r"svm ga-sgd at 2,048 DPUs, batch 4,100: --global-batch-size 4,100"):
        from_mapping(data, "bad.toml")


@pytest.mark.parametrize("content", [b"", b"\x00\x01binary", b"[figure\nid = 1"])
def test_unreadable_figure_file_is_one_line(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "fig99.toml"
    path.write_bytes(content)
    with pytest.raises(StudyError) as info:
        load_figure(str(path))
    assert "\n" not in str(info.value) and "fig99.toml" in str(info.value)
