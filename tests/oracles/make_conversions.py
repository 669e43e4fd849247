#!/usr/bin/env python3
"""Writes conversions.txt: f32 bit patterns with what they become in f16 (numpy's float16) and in bf16
(round to nearest even on the f32 bits, written here and checked against torch's bfloat16 where torch
is installed), and each f16 result widened back to f32 by numpy. Run from the repository root:

    python3 tests/oracles/make_conversions.py > tests/oracles/conversions.txt
"""
import struct

import numpy as np


def bits_of(value):
    return struct.unpack("<I", struct.pack("<f", value))[0]


def is_nan(bits):
    return (bits & 0x7FFFFFFF) > 0x7F800000


def bf16_round_nearest_even(bits):
    if is_nan(bits):
        return (bits >> 16) | 0x0040  # any quiet NaN of the same sign
    upper, lower = bits >> 16, bits & 0xFFFF
    if lower > 0x8000 or (lower == 0x8000 and upper & 1):
        upper += 1  # a carry out of the mantissa moves on to the exponent, up to infinity
    return upper


CASES = [
    (0x00000000, "+0"),
    (0x80000000, "-0: the sign survives"),
    (0x3F800000, "1"),
    (0xC0000000, "-2"),
    (bits_of(1 / 3), "1/3: inexact in both"),
    (bits_of(np.pi), "pi"),
    # f16 keeps 10 mantissa bits: ties at 2^-11 above 1.
    (0x3F801000, "f16 tie 1 + 2^-11: even below"),
    (0x3F803000, "f16 tie 1 + 3 * 2^-11: even above"),
    (0x3F801001, "just past an f16 tie: up"),
    (0x3F800FFF, "just before an f16 tie: down"),
    (0xBF803000, "negative f16 tie: even above in magnitude"),
    (bits_of(65504.0), "f16 largest finite"),
    (0x477FEFFF, "just below the midpoint to 65536: f16 largest finite"),
    (bits_of(65520.0), "midpoint to 65536: even is f16 infinity"),
    (bits_of(-65520.0), "negative midpoint to 65536: f16 -infinity"),
    (bits_of(1e6), "f16 overflow"),
    (bits_of(2.0**-24), "f16 smallest subnormal"),
    (bits_of(-(2.0**-24)), "f16 smallest subnormal, negative"),
    (bits_of(2.0**-25), "half the f16 smallest subnormal: tie to even zero"),
    (bits_of(2.0**-25) + 1, "just past half the smallest subnormal: up"),
    (bits_of(3 * 2.0**-25), "f16 subnormal tie: even above"),
    (bits_of(1023 * 2.0**-24), "f16 largest subnormal"),
    (bits_of(1023.5 * 2.0**-24), "tie between f16 largest subnormal and smallest normal: up to the normal"),
    (bits_of(2.0**-14), "f16 smallest normal"),
    (bits_of(1e-10), "below f16's range: zero"),
    # bf16 keeps the top 16 bits: ties at bit 15.
    (0x3F808000, "bf16 tie: even below"),
    (0x3F818000, "bf16 tie: even above (truncation would keep 0x3f81)"),
    (0x3F808001, "just past a bf16 tie: up"),
    (0x3F807FFF, "just before a bf16 tie: down"),
    (0xBF818000, "negative bf16 tie: even above in magnitude"),
    (0x3FFFFFFF, "bf16 rounding carries into the exponent"),
    (0x7F7F7FFF, "bf16 largest finite"),
    (0x7F7F8000, "tie above bf16 largest finite: infinity"),
    (0x7F7FFFFF, "f32 largest finite: infinity in both"),
    (0xFF7FFFFF, "f32 most negative finite: -infinity in both"),
    (0x00800000, "f32 smallest normal"),
    (0x00000001, "f32 smallest subnormal"),
    (0x80000001, "f32 smallest subnormal, negative"),
    (0x00008000, "f32 subnormal, bf16 tie to even zero"),
    (0x00018000, "f32 subnormal, bf16 tie to even 2"),
    (0x00010001, "f32 subnormal, bf16 down"),
    (0x00400000, "f32 subnormal, exact in bf16"),
    (0x7F800000, "+infinity"),
    (0xFF800000, "-infinity"),
    (0x7FC00000, "quiet NaN"),
    (0xFFC00000, "negative quiet NaN"),
    (0x7F800001, "NaN with payload in the low bits only (truncation would make it infinity)"),
    (0x7FA00000, "signalling NaN"),
]

try:
    import torch
except ImportError:
    torch = None

print("# f32 bit patterns and their conversions: f16 by numpy's float16, bf16 by round to nearest even")
print("# on the bits; f16_as_f32 widens the f16 result back to f32 (numpy). A NaN row asks for any NaN.")
print("# Regenerate: python3 tests/oracles/make_conversions.py > tests/oracles/conversions.txt")
print("# f32 f16 f16_as_f32 bf16 what")
with np.errstate(over="ignore"):
    for bits, what in CASES:
        value = np.array([bits], dtype=np.uint32).view(np.float32)
        half = value.astype(np.float16)
        f16 = int(half.view(np.uint16)[0])
        f16_as_f32 = int(half.astype(np.float32).view(np.uint32)[0])
        bf16 = bf16_round_nearest_even(bits)
        if torch is not None and not is_nan(bits):
            by_torch = int(torch.from_numpy(value).to(torch.bfloat16).view(torch.int16)[0]) & 0xFFFF
            assert by_torch == bf16, f"{bits:#010x}: torch gives bf16 {by_torch:#06x}, the rounding here {bf16:#06x}"
        print(f"{bits:#010x} {f16:#06x} {f16_as_f32:#010x} {bf16:#06x} {what}")
