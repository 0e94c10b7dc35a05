"""The cost model's data-dependent coefficients: names, documented defaults (sympy-free, cheap to import).

Calibration (``pimmodel.calibration``) fits them to emulator traces; hardware constants are never fitted.
"""

from __future__ import annotations

COEFFICIENT_DEFAULTS: dict[str, float] = {
    # (No coefficient for the 64-bit multiplies: __muldi3 is straight-line code of 36 byte products whatever
    # the operands, uPIMulator golang/uPIMulator/sdk/syslib/mul64.c:131-163, so its cost has no data dependence.)
    # Fraction of SVM samples that violate the margin (y z < 2^-15): the gradient work of those samples.
    # Early in training (w = 0) every sample violates it; 0.5 is a neutral default. Fitted.
    "svm_hit_fraction": 0.5,
    # Criteo LR: fraction of accumulator read-modify-writes that write back (the -1 guards skip some).
    "sparse_write_fraction": 1.0,
}
