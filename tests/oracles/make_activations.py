#!/usr/bin/env python3
"""Writes activations.txt: every activation porta has, at f32 points across its range, computed with
mpmath at 50 significant digits, so that the expected values owe nothing to porta's formulas (nor to
f64 libm: 1 + erf(x) loses everything for x < -6 in f64). Run from the repository root:

    python3 tests/oracles/make_activations.py > tests/oracles/activations.txt
"""
import struct

import mpmath

mpmath.mp.dps = 50


def f32_of_bits(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f32(x):
    """The f32 nearest x, as a Python float (exact)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_neighbours(x):
    """The f32 values either side of x, an f32 other than 0."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    return [f32_of_bits(bits - 1), f32_of_bits(bits + 1)]


F32_MAX, F32_MIN_NORMAL, F32_MIN_SUBNORMAL = f32_of_bits(0x7F7FFFFF), f32_of_bits(0x00800000), f32_of_bits(1)

CLIP_MIN, CLIP_MAX = -2.5, 0.75  # an interval that is not relu6's, with a negative lower bound

# Near zero, moderate, where f32's sigmoid and tanh saturate (9.1, 16.7) and exp overflows (88.7),
# large, the clamps' edges with their f32 neighbours, and f32's extremes.
magnitudes = [1e-6, 1e-3, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.5, 9.1, 10.0, 16.7, 20.0, 30.0, 50.0, 88.7,
              100.0, F32_MAX, F32_MIN_NORMAL, F32_MIN_SUBNORMAL]
points = {0.0}
for m in magnitudes:
    points.update({f32(m), -f32(m)})
for edge in (6.0, CLIP_MIN, CLIP_MAX):
    points.update([edge, *f32_neighbours(edge)])
points = sorted(points)


def sigmoid(x):
    return 1 / (1 + mpmath.exp(-x))


ACTIVATIONS = {
    "relu": lambda x: max(x, 0),
    "relu6": lambda x: min(max(x, 0), 6),
    f"clip:{CLIP_MIN}:{CLIP_MAX}": lambda x: min(max(x, CLIP_MIN), CLIP_MAX),
    "sigmoid": sigmoid,
    "silu": lambda x: x * sigmoid(x),
    "tanh": mpmath.tanh,
    # Exact GELU as x * Phi(x), written with erfc so that no cancellation can creep in.
    "gelu": lambda x: x * mpmath.erfc(-x / mpmath.sqrt(2)) / 2,
    # The tanh form: 0.5 x (1 + tanh(z)) = x sigmoid(2z), z = sqrt(2 / pi) (x + 0.044715 x^3).
    "gelu_tanh": lambda x: x * sigmoid(2 * mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf("0.044715") * x**3)),
}

print("# Expected activation values: mpmath at 50 digits, rounded to f64, at inputs that are f32 values.")
print("# Regenerate: python3 tests/oracles/make_activations.py > tests/oracles/activations.txt")
print("# activation x y")
for name, f in ACTIVATIONS.items():
    for x in points:
        y = float(f(mpmath.mpf(x)))
        print(f"{name} {x!r} {y!r}")
