"""The ``emulator`` group: the cost model against the functional emulator on configurations never used for
calibration (``validation/emulator.toml``). Both price the same events with the same primitives, so this
measures consistency of the equations with the kernels' counts, not truth about hardware.

Per phase at least ``MIN_SHARE`` of the epoch, ``TOLERANCE`` relative error: the raw (breakdown) phases with
launch, and ``mram_wram_dma_exposed`` (the wall view's DMA not hidden behind compute; its share taken of the
wall-view epoch).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..calibration.compare import emulate, emulate_cached
from ..calibration.design import DesignPoint, EmulatorSettings
from ..calibration.observations import MIN_SHARE, model_phases
from ..calibration.result import CalibrationResult
from ..phases import EXPOSED_DMA, PHASES, in_view, total
from ..specs import HardwareSpec
from .cases import Case
from .data import load

TOLERANCE = 0.05


def holdout_points() -> list[DesignPoint]:
    return [DesignPoint.from_mapping(p) for p in load("emulator.toml").get("point", [])]


def consistency_cases(hw: HardwareSpec, calibration: CalibrationResult,
                      points: Sequence[DesignPoint] | None = None, cached: bool = False) -> list[Case]:
    """Cost model vs emulator on the hold-out points (runs the emulator; ``points``: a subset; ``cached``: an
    emulation of the same emulator sources, point and hardware is read from disk, ``emulate_cached``)."""
    settings = EmulatorSettings()
    run = emulate_cached if cached else emulate
    cases = []
    for point in holdout_points() if points is None else points:
        ob = run(point, hw, settings)
        pred = model_phases([ob], hw.numeric(), calibration.fitted_for, outputs=(*PHASES, EXPOSED_DMA))[0]
        breakdown_total = sum(ob.reference_s[p] for p in PHASES)
        wall_total = total(in_view(ob.reference_s, "wall"))
        compared = [(p, ob.reference_s[p], breakdown_total) for p in PHASES]
        compared.append((EXPOSED_DMA, ob.reference_s[EXPOSED_DMA], wall_total))
        for p, ref, epoch in compared:
            if ref <= 0 or ref < MIN_SHARE * epoch:
                continue
            cases.append(Case("emulator", point.name, p, ref, pred[p], TOLERANCE, unit="s",
                              source=f"pimmodel emulator (mean of {settings.epochs} epochs)"))
    return cases
