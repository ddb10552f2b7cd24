#!/usr/bin/env python3
"""Writes the hand-made part of the kernel fuzzers' seed corpus (fuzz/corpus/fuzz_kernels and
fuzz_kernels_split): every op x dtype, with and without a bias, in place or not, misaligned or
not, over MLAS's branch points, clamps and special values. The rest of the corpus is what
`make fuzz-merge` keeps from fuzzing runs. Deterministic: running it again rewrites the same
files.

usage: fuzz/make-seeds.py [corpus dir, default: fuzz/corpus next to this script]
"""
import hashlib
import os
import struct
import sys

OPS = range(6)  # erf gelu gelu_tanh quick_gelu tanh sigmoid (actx_op order)
BIAS_OPS = (1, 2)
F32, F16, BF16 = 0, 1, 2
F_BIAS, F_IN_PLACE, F_CONVENIENCE = 1, 2, 4
F_BAD_BIAS_LEN, F_BAD_ALPHA, F_OVERLAP = 16, 32, 64

# MLAS's branch points and clamps, their neighbours' neighbourhood, and the specials.
POINTS = [0.0, -0.0, 0.5, -0.5, 0.921875, -0.921875, 1.0, 1.3037281, 2.0, 3.925, -3.925,
          5.5508, 9.0, -9.0, 12.728, 18.0, -18.0, 88.37626, 1e-30, 1e-38, 1e-45, -1e-45,
          3.4028235e38, -3.4028235e38, 65504.0, 1e-7, 8.4755, 15.93, 1.1998]
SPECIAL_BITS = [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC12345, 0x7F800001, 0xFFA00001,
                0x00000001, 0x807FFFFF, 0x00800000]


def f32(v):
    return struct.pack('<f', v)


def f16(v):
    try:
        return struct.pack('<e', v)
    except OverflowError:
        return struct.pack('<H', 0x7C00 if v > 0 else 0xFC00)


def bf16(v):
    return struct.pack('<f', v)[2:]


def payload(dtype, count, shift):
    out = b''
    for i in range(count):
        k = (i + shift) % (len(POINTS) + len(SPECIAL_BITS))
        if k < len(POINTS):
            v = POINTS[k]
            out += f32(v) if dtype == F32 else f16(v) if dtype == F16 else bf16(v)
        else:
            bits = SPECIAL_BITS[k - len(POINTS)]
            out += struct.pack('<I', bits) if dtype == F32 else struct.pack('<H', bits >> 16)
    return out


def header(op, dtype, flags, h=1, tasks=0, offsets=0, alpha=1.702, big=0):
    return bytes([op, dtype, flags]) + struct.pack('<H', max(h - 1, 0)) + bytes([tasks, offsets]) \
        + f32(alpha if op == 3 else 0.0) + struct.pack('<H', big)


def seeds():
    for op in OPS:
        for dtype in (F32, F16, BF16):
            for variant in range(6):
                flags, h, offsets, tasks, n = 0, 1, 0, 0, 40
                if variant == 1:
                    flags |= F_IN_PLACE
                if variant == 2:
                    offsets = 0x31  # x 1 byte off, y 3 bytes off
                if variant == 3 and op in BIAS_OPS:
                    flags |= F_BIAS | F_BAD_BIAS_LEN
                    h = 7
                if variant == 4:
                    flags |= F_CONVENIENCE | F_OVERLAP | F_BAD_ALPHA
                    tasks = 0x13
                if variant == 5:
                    n = 3  # a tail only
                alpha = (1.702, 1.0, -0.5, 100.0, float('nan'), 0.0)[variant]
                data = payload(dtype, h if flags & F_BIAS else 0, 5) + payload(dtype, n, variant)
                yield header(op, dtype, flags, h, tasks, offsets, alpha, big=variant * 700) + data


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'corpus')
    for target in ('fuzz_kernels', 'fuzz_kernels_split'):
        d = os.path.join(root, target)
        os.makedirs(d, exist_ok=True)
        for s in seeds():
            name = 'seed-' + hashlib.sha1(s).hexdigest()[:16]
            with open(os.path.join(d, name), 'wb') as f:
                f.write(s)


if __name__ == '__main__':
    main()
