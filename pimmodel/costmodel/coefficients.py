"""The cost model's data-dependent coefficients: names, documented defaults (sympy-free, cheap to import).

Calibration (``pimmodel.calibration``) fits them to emulator traces; hardware constants are never fitted.
"""

from __future__ import annotations

COEFFICIENT_DEFAULTS: dict[str, float] = {
    # Mean significant bytes of the smaller-magnitude operand of a 64-bit multiply x_ij * w_j in the dot
    # product. Dense ReLU features are often exactly 0 (0 bytes) and Q1.31 values otherwise take 4 bytes,
    # so the mean sits between; 2.0 = half the features zero. Fitted to the emulator.
    "dot_mul_bytes": 2.0,
    # Same for the LR gradient term x_ij * e_i (e_i is a Q31 error of up to 4 bytes).
    "grad_mul_bytes": 2.0,
    # Fraction of SVM samples that violate the margin (y z < 2^-15): the gradient work of those samples.
    # Early in training (w = 0) every sample violates it; 0.5 is a neutral default. Fitted.
    "svm_hit_fraction": 0.5,
    # Criteo LR: fraction of accumulator read-modify-writes that write back (the -1 guards skip some).
    "sparse_write_fraction": 1.0,
}
