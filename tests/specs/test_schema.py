"""One input schema (``pimmodel.specs.schema``): for every key of the shipped files of each input kind, an unknown
key near it, a wrong type and (numbers) an out-of-range value are each refused with one line naming the file and
the key (and the range); the CLI refuses them with exit 2 and no traceback; ``specs schema KIND --json`` is a valid
JSON Schema every shipped file of the kind satisfies."""

from __future__ import annotations

import copy
import json
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest
from support import cli

from pimmodel.baselines import specs as baselines
from pimmodel.dse import space
from pimmodel.errors import PimModelError
from pimmodel.reproduce import spec as figures
from pimmodel.specs import bank_simd, hardware, workload
from pimmodel.specs.schema import describe

ROOT = Path(__file__).resolve().parents[2]
HW = ROOT / "hardware_specs"
ORIGIN = "bad.toml"
DATASET = {"dataset": {"name": "d", "layout": "sparse", "features": 1000, "nonzeros_per_row": 30, "slots_per_row": 40,
                       "bytes_per_value": 4, "rows_per_dpu_weak": 512, "strong_rows": 65536, "label_bytes": 4,
                       "bias_separate": False, "positive_fraction": 0.25, "description": "every key",
                       "bias_index": 999}}
"""No dataset file ships: one with every key."""


def _family(path: Path) -> str:
    return str(tomllib.loads(path.read_text(encoding="utf-8")).get("family", "upmem-like"))


KINDS: dict[str, tuple[Callable[[], Any], Callable[[Any, str], Any], list[Path]]] = {
    "hardware": (hardware.schema, hardware.from_mapping,
                 [p for p in sorted(HW.glob("*.toml")) if _family(p) == "upmem-like"]),
    "bank-simd": (bank_simd.schema, bank_simd.from_mapping,
                  [p for p in sorted(HW.glob("*.toml")) if _family(p) == "bank-simd"]),
    "cpu": (baselines.cpu_schema, baselines.cpu_from_mapping, sorted((HW / "cpu").glob("*.toml"))),
    "gpu": (baselines.gpu_schema, baselines.gpu_from_mapping, sorted((HW / "gpu").glob("*.toml"))),
    "dataset": (workload.dataset_file_schema, workload.dataset_from_mapping, []),
    "study": (space.study_schema, space.from_mapping, sorted((ROOT / "studies").glob("*.toml"))),
    "figure": (figures.figure_schema, figures.from_mapping, sorted((ROOT / "studies/pim-opt").glob("fig*.toml"))),
}


def _files(kind: str) -> list[dict[str, Any]]:
    paths = KINDS[kind][2]
    return [tomllib.loads(p.read_text(encoding="utf-8")) for p in paths] or [DATASET]


def _is_constant(info: Any) -> bool:
    return isinstance(info, mi.StructType) and {f.name for f in info.fields} == {"value", "source"}


def _below(info: Any, step: str | int) -> Any:
    while isinstance(info, mi.Metadata):
        info = info.type
    if isinstance(info, mi.UnionType):
        found = [_below(m, step) for m in info.types]
        return next((f for f in found if f is not None), None)
    if isinstance(info, mi.StructType) and isinstance(step, str):
        return next((f.type for f in info.fields if f.encode_name == step), None)
    if isinstance(info, mi.DictType) and isinstance(step, str):
        return info.value_type
    if isinstance(info, mi.ListType) and isinstance(step, int):
        return info.item_type
    return None


def _strip(info: Any) -> Any:
    while isinstance(info, mi.Metadata):
        info = info.type
    return info


def _keys(data: Any, info: Any, path: tuple[str | int, ...] = (), shape: tuple[str, ...] = ()
          ) -> Iterator[tuple[tuple[str | int, ...], tuple[str, ...], Any, bool]]:
    """(path, its place in the schema, schema type, whether its parent is a table of fixed keys) of every key of a
    file; a constant's ``{ value, source }`` table is its key's value."""
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    fixed = bool(_struct_keys(info))
    for step, value in items:
        child = _below(info, step)
        if child is None:
            continue
        place = "[]" if isinstance(step, int) else str(step) if fixed else "<name>"
        yield (*path, step), (*shape, place), child, fixed and isinstance(step, str)
        if not (isinstance(value, dict) and _has_constant(child)):
            yield from _keys(value, child, (*path, step), (*shape, place))


def _struct_keys(info: Any) -> list[str]:
    info = _strip(info)
    members = info.types if isinstance(info, mi.UnionType) else (info,)
    return [f.encode_name for m in members if isinstance(_strip(m), mi.StructType) and not _is_constant(_strip(m))
            for f in _strip(m).fields]


def _has_constant(info: Any) -> bool:
    info = _strip(info)
    return isinstance(info, mi.UnionType) and any(_is_constant(_strip(m)) for m in info.types)


def _positions(kind: str) -> list[tuple[dict[str, Any], tuple[str | int, ...], Any, bool]]:
    """Every key of the shipped files of ``kind`` (the first file holding it), with its file."""
    schema = mi.type_info(KINDS[kind][0]())
    seen: dict[tuple[str, ...], tuple[dict[str, Any], tuple[str | int, ...], Any, bool]] = {}
    for data in _files(kind):
        for path, shape, info, fixed in _keys(data, schema):
            seen.setdefault(shape, (data, path, info, fixed))
    return list(seen.values())


def _name(path: tuple[str | int, ...]) -> str:
    out = ""
    for step in path:
        out += f"[{step + 1}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def _set(data: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    target: Any = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return out


def _refusal(kind: str, data: dict[str, Any], what: str = "") -> str:
    try:
        KINDS[kind][1](data, ORIGIN)
    except PimModelError as exc:
        text = str(exc)
    else:
        raise AssertionError(f"{kind}: {what} was not refused")
    assert "\n" not in text and text.startswith(f"{ORIGIN}: "), text
    return text


WRONG = ("oops", 12345, [[1]])
"""Values of the wrong type for one key or another (the first a key refuses is tried)."""


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_key_refuses_a_near_unknown_key_a_wrong_type_and_an_out_of_range_value(kind: str) -> None:
    positions = _positions(kind)
    assert len(positions) >= 5, kind
    for data, path, info, named in positions:
        key = _name(path)
        leaf = path[-1]
        if named and isinstance(leaf, str) and len(leaf) > 3:
            near = leaf[:-1] + ("x" if leaf[-1] != "x" else "y")
            parent = _set(data, path[:-1], {**_value(data, path[:-1])}) if len(path) > 1 else copy.deepcopy(data)
            target = _value(parent, path[:-1]) if len(path) > 1 else parent
            target[near] = _value(data, path)
            text = _refusal(kind, parent, f"unknown key near {key}")
            assert f"unknown key {_name((*path[:-1], near))}" in text and f'did you mean "{leaf}"' in text, text
        wrong = next(w for w in WRONG if not _accepts(kind, _set(data, path, w)))
        text = _refusal(kind, _set(data, path, wrong), f"{wrong!r} for {key}")
        assert f": {key} must be " in text, text
        bounds = _numeric(info)
        if bounds is not None:
            lo, hi = bounds
            bad = hi * 10 + 1 if hi is not None else lo - 1
            value = _value(data, path)
            mutated = _set(data, (*path, "value"), bad) if isinstance(value, dict) else _set(data, path, bad)
            text = _refusal(kind, mutated, f"{bad} for {key}")
            assert f": {key} = " in text and "is out of range" in text and describe(info).split(" ", 2)[2] in text, text


def _accepts(kind: str, data: dict[str, Any]) -> bool:
    """Whether the kind's schema alone takes ``data``."""
    try:
        msgspec.convert(data, KINDS[kind][0]())
    except msgspec.ValidationError:
        return False
    return True


def _value(data: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def _numeric(info: Any) -> tuple[float | None, float | None] | None:
    info = _strip(info)
    members = info.types if isinstance(info, mi.UnionType) else (info,)
    for m in members:
        m = _strip(m)
        if isinstance(m, mi.FloatType | mi.IntType) and (m.le is not None or m.ge is not None):
            return m.ge, m.le
    return None


def test_the_family_key_takes_upmem_like_only() -> None:
    data = tomllib.loads((HW / "upmem-2556.toml").read_text(encoding="utf-8"))
    assert hardware.from_mapping({**data, "family": "upmem-like"}, ORIGIN) == hardware.from_mapping(data, ORIGIN)
    text = _refusal("hardware", {**data, "family": "upmem"})
    assert "family = 'upmem' is not a hardware family; use one of upmem-like" in text
    assert "must be 'upmem-like'" in _refusal("hardware", {**data, "family": "bank-simd"})


def test_hardware_schema_is_generated_from_any_fields_table() -> None:
    from pimmodel.specs.hardware import Field
    from pimmodel.specs.schema import schema_for_fields, validate

    fields = (Field("lanes", "unit", "lanes", 1, 1, 64, True, doc="SIMD lanes"),
              Field("clock_hz", "unit", "clock_mhz", 1e6, 1e6, 1e10, default=300.0))
    struct = schema_for_fields("toy", fields, family="toy")
    assert validate({"name": "t", "family": "toy", "unit": {"lanes": {"value": 16, "source": "x"}}}, struct, "t")
    with pytest.raises(PimModelError, match=r"t: unit.lanes = 65 is out of range; use a whole number in \[1, 64\]"):
        validate({"name": "t", "unit": {"lanes": 65}}, struct, "t")
    with pytest.raises(PimModelError, match=r"t: unit.clock_mhz = 0.5 is out of range; use a number in \[1, 10000\]"):
        validate({"name": "t", "unit": {"lanes": 1, "clock_mhz": 0.5}}, struct, "t")
    with pytest.raises(PimModelError, match=r"t: missing unit.lanes \(a whole number in \[1, 64\]: SIMD lanes\)"):
        validate({"name": "t", "unit": {}}, struct, "t")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_json_schema_of_every_kind_accepts_its_shipped_files(kind: str) -> None:
    p = cli("specs", "schema", kind, "--json")
    assert p.returncode == 0, p.stderr
    schema = json.loads(p.stdout)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema)
    for data in _files(kind):
        jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


def test_specs_schema_help_lists_the_kinds_and_refuses_another() -> None:
    p = cli("specs", "schema", "--help")
    assert p.returncode == 0 and all(kind in p.stdout for kind in KINDS)
    p = cli("specs", "schema", "hardwre")
    assert p.returncode == 2 and 'did you mean "hardware"' in p.stderr and "Traceback" not in p.stderr
    p = cli("specs", "schema", "study")
    assert p.returncode == 0 and "parameters.<name>.unit: one of" in p.stdout


def _toml_with(path: Path, old: str, new: str, tmp: Path, name: str) -> Path:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    out = tmp / name
    out.write_text(text.replace(old, new, 1), encoding="utf-8")
    return out


def test_each_command_refuses_a_bad_file_in_one_line(tmp_path: Path) -> None:
    hw = _toml_with(HW / "upmem-2556.toml", "[dpu]\n", "[dpu]\nclock_mhx = 350\n", tmp_path, "bad.toml")
    bank = _toml_with(HW / "hbm-pim-aquabolt.toml", "[organisation]\n", "[organisation]\nlanez = 16\n", tmp_path,
                      "bad-bank.toml")
    study = _toml_with(ROOT / "studies/scalable-pim.toml", "[study]\n", "[study]\ntrails = 3\n", tmp_path,
                       "bad-study.toml")
    figure = _toml_with(ROOT / "studies/pim-opt/fig05.toml", "[workload]\n", "[workload]\nepochz = 3\n", tmp_path,
                        "bad-figure.toml")
    cpu = _toml_with(HW / "cpu/amd-epyc-7742-2s.toml", "[cpu]\n", "[cpu]\nsocketz = 2\n", tmp_path, "bad-cpu.toml")
    dataset = tmp_path / "bad-dataset.toml"
    dataset.write_text("features = 512\nrows_per_dpu_weak = 1024\nlayuot = \"dense\"\n", encoding="utf-8")
    cases = [
        (("predict", "--hardware", str(hw)), f"{hw}: unknown key dpu.clock_mhx", "clock_mhz"),
        (("specs", "show", str(bank)), f"{bank}: unknown key organisation.lanez", "lanes"),
        (("explore", str(study), "--trials", "1"), f"{study}: unknown key study.trails", "trials"),
        (("reproduce", str(figure)), f"{figure}: unknown key workload.epochz", "epochs"),
        (("baseline", "predict", "--device", "cpu", "--spec", str(cpu)), f"{cpu}: unknown key cpu.socketz",
         "sockets"),
        (("predict", "--dataset", str(dataset)), f"{dataset}: unknown key layuot", "layout"),
    ]
    for args, start, near in cases:
        p = cli(*args, cwd=tmp_path)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and "Traceback" not in p.stderr + p.stdout, (args, p.stderr)
        assert len(lines) == 1 and start in lines[0] and f'did you mean "{near}"' in lines[0], (args, lines)
