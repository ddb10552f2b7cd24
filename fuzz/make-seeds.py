#!/usr/bin/env python3
"""Writes the hand-made part of the fuzzers' seed corpus: for the kernel fuzzers
(fuzz/corpus/fuzz_kernels and fuzz_kernels_split) every op x dtype, with and without a bias, in
place or not, misaligned or not, over MLAS's branch points, clamps and special values; for
fuzz_ep the nested models (Ifs and Loops two deep holding activations under reused names), whose
byte layout is too deep for mutation to find soon; for fuzz_ep_bf16 a one-node model of every op
of src/bf16/bf16_ops.h on bfloat16 inputs (and with a constant second input). The rest of the corpus is what `make
fuzz-merge` keeps from fuzzing runs. Deterministic: running it again rewrites the same files.

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


# ---- fuzz_ep's nested models: the bytes fuzz_ep.c's build() reads, in its order ----

P_NESTED = 7
# tools/ort/model_parts.h's actx_act_kind, in order
KINDS = ['quick_gelu', 'quick_gelu_other_alpha', 'silu', 'erf_gelu', 'bias_erf_gelu', 'tanh',
         'sigmoid', 'ms_gelu', 'ms_fast_gelu', 'ms_quick_gelu', 'ms_quick_gelu_other_alpha',
         'ms_bias_gelu', 'tanh_gelu', 'bias_ms_gelu', 'ms_fast_gelu_bias', 'erf', 'gelu',
         'gelu_tanh', 'relu']
QUICK = {'quick_gelu', 'quick_gelu_other_alpha', 'ms_quick_gelu', 'ms_quick_gelu_other_alpha'}
BIAS = {'bias_erf_gelu', 'ms_bias_gelu', 'bias_ms_gelu', 'ms_fast_gelu_bias'}
DIM_VALUES = [1, 2, 3, 7, 8, 33, 0, 64, 1000, 40000]
TRIPS = [1, 2, 0, 3]
POLICIES = ['all', 'all', 'auto', 'none', '', 'bogus', 'ALL']
NEST_DEPTH, MAX_GRAPHS, MAX_ACTIVATIONS = 2, 8, 12


class Nest:
    """A chain is a list of links: a kind name, ('if', i_lt_1, then_chain, else_chain) or
    ('loop', trips, reads_outer_value, body_chain)."""

    def __init__(self):
        self.out, self.graphs, self.activations = [], 0, 0

    def chain(self, links, depth):
        assert 1 <= len(links) <= 3
        self.out.append(len(links) - 1)
        control_seen = False
        for i, link in enumerate(links):
            control = not isinstance(link, str)
            # build() forces an If or Loop into the main graph's last link if none came before
            assert depth > 0 or control or i + 1 < len(links) or control_seen
            self.out.append((1 if control else 0) if depth == 0 else (0 if control else 1))
            if control:
                assert depth < NEST_DEPTH and self.graphs + 2 <= MAX_GRAPHS
                control_seen = True
                self.control(link, depth + 1)
            else:
                assert self.activations < MAX_ACTIVATIONS
                self.activations += 1
                self.out.append(KINDS.index(link))
                if link in QUICK:
                    self.out.append(0)  # the kind's own alpha
                if link in BIAS:
                    self.out += [0, 0x5a]  # a bias that fits; its values' seed

    def control(self, link, depth):
        if link[0] == 'if':
            self.out.append(1 | (2 if link[1] else 0))
            for branch in link[2:]:
                self.graphs += 1
                self.chain(branch, depth)
        else:
            # (b >> 1) % 4 is the trip count's index; 0x30 makes the body read the outer value
            self.out.append((0x30 if link[2] else 0) | TRIPS.index(link[1]) << 1)
            self.graphs += 1
            self.chain(link[3], depth)


def splitmix(seed):
    seed = (seed + 0x9E3779B97F4A7C15) & (2**64 - 1)
    z = seed
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
    return seed, z ^ (z >> 31)


def nested_seed(chain, dims, c, policy='all', threads=1, optimise=True, float16=False,
                named=(0, 0, 0)):
    """dims: ints, or 'a' / 'b' / 'c' for a symbolic dimension (named[k] is its index in
    DIM_VALUES[:6]); c: the If condition's value."""
    out = [P_NESTED, 0, 0, 0]  # default IR version, opset 20, com.microsoft 1
    out += [200, 1] if float16 else [0]
    out.append(len(dims))
    for d in dims:
        out.append(4 * 'abc'.index(d) if isinstance(d, str) else 4 * DIM_VALUES.index(d) + 1)
    out += [0, 0, 0, 0]  # y as x; the single-node op and domain bytes nested models skip
    nest = Nest()
    nest.chain(chain, 0)
    out += nest.out + list(named) + [0, 0]  # no run-time shape lies for x and c
    # the options byte: policy = byte % 7, 2 threads = bit 6, unoptimised = bit 7, and bits 3-5
    # not all set (an unknown provider option)
    out.append(next(v for v in range(256) if v % 7 == POLICIES.index(policy) and
                    (v & 0x40 != 0) == (threads == 2) and (v & 0x80 != 0) != optimise and
                    v & 0x38 != 0x38))
    # the data seed: the first whose bytes give c its value (x's bytes come first)
    n = 1
    for d in dims:
        n *= DIM_VALUES[named['abc'.index(d)]] if isinstance(d, str) else d
    steps = -(-n * (2 if float16 else 4) // 8)
    for seed in range(1, 65536):
        state = seed
        for _ in range(steps):
            state, _ = splitmix(state)
        _, z = splitmix(state)
        if z & 1 == c:
            break
    return bytes(out + [seed & 0xff, seed >> 8])


def ep_seeds():
    # sizes on both sides of `auto`'s thresholds: [64, 1000] is 64000 elements, [8, 33] 264
    big, small = [64, 1000], [8, 33]
    for c in (0, 1):
        yield nested_seed([('if', False, ['silu'], ['quick_gelu'])], big, c)
    yield nested_seed([('loop', 2, False, ['erf_gelu', 'ms_gelu']),
                       ('loop', 1, False, ['bias_erf_gelu'])], big, 0, policy='auto')
    yield nested_seed([('loop', 3, False, ['tanh', ('if', True, ['quick_gelu_other_alpha'],
                                                    ['ms_quick_gelu_other_alpha'])])], small, 0)
    yield nested_seed([('loop', 2, False, [('loop', 2, False, ['silu']), 'sigmoid'])], [7, 64], 1,
                      threads=2)
    yield nested_seed([('if', False, [('loop', 1, False, ['ms_bias_gelu'])],
                        [('if', False, ['ms_fast_gelu_bias'], ['bias_ms_gelu'])])],
                      ['a', 64], 0, policy='auto', optimise=False, named=(5, 0, 0))
    yield nested_seed(['tanh_gelu', ('loop', 0, False, ['erf']), 'relu'], [33, 8], 1,
                      optimise=False)
    yield nested_seed([('loop', 2, True, ['ms_fast_gelu', 'gelu_tanh']),
                       ('if', False, ['gelu'], ['ms_quick_gelu'])], small, 1, threads=2)
    yield nested_seed([('if', False, ['ms_gelu', 'erf_gelu'], ['gelu_tanh'])], [8, 64], 1,
                      float16=True)
    # patterns and nodes in a row, each on the one before (neither of the faults they were
    # written for: a GELU after a GELU, a value as x and bias)
    yield linked_seed(['tanh_gelu', 'silu', 'erf'], [8, 64])


# ---- fuzz_ep's linked chains (build_linked): a link is an index into fuzz_ep.c's link_kinds,
# then BiasGelu(v, v), FastGelu(v, v), Neg
P_LINKED = 8
LINKS = ['erf_gelu', 'tanh_gelu', 'silu', 'quick_gelu', 'erf_gelu2', 'bias_erf_gelu', 'tanh', 'erf',
         'sigmoid', 'ms_gelu', 'gelu', 'ms_fast_gelu', 'bias_gelu(v,v)', 'fast_gelu(v,v)', 'neg']


def linked_seed(links, dims):
    """float32, opset 17 (the byte < 128), policy all, one thread, optimised."""
    out = [P_LINKED, 0, 0, 0, 0, len(dims)] + [4 * DIM_VALUES.index(d) + 1 for d in dims]
    out += [0, 0, 0, 0]  # y as x; the single-node op and domain bytes linked models skip
    out.append(len(links) - 2)
    for link in links:
        out.append(LINKS.index(link))
        if link in QUICK:
            out.append(0)  # the kind's own alpha
        if link in BIAS:
            out += [0, 0x5a]  # a bias that fits; its values' seed
    out += [0, 0, 0, 0, 0, 7, 1]  # named dims, no shape lie, options 'all' (0), data seed
    return bytes(out)


def bf16_ops():
    """(name, domain, min_inputs) of each row of src/bf16/bf16_ops.h, in order."""
    import re
    path = os.path.join(os.path.dirname(__file__), '..', 'src', 'bf16', 'bf16_ops.h')
    text = open(path).read().replace('\\\n', ' ')
    return [(m.group(1), m.group(2), int(m.group(3))) for m in
            re.finditer(r'X\((\w+), \w+, "([^"]*)",\s*\w+, (\d+),', text)]


def bf16_seed(op, domain, n_in, constant):
    """fuzz_ep_bf16's bytes for one op of the list: n_in bfloat16 inputs [4, 4] (the second a
    constant when asked: the PrePackWeight path), one bfloat16 output [4, 4], no attributes."""
    out = [op, 0, 1]  # the op, then its first served since-version
    if domain != 'com.microsoft':
        out.append(1)  # com.microsoft imported too
    out += [n_in, 0]  # inputs; one output
    state = 0x5eed + op
    for i in range(n_in):
        out += [0, 2, 3, 3, 1 if constant and i == 1 else 2]  # bfloat16 [4, 4]; constant/input
        for _ in range(16):  # its data: bfloat16 values in [-8, 8)
            state, z = splitmix(state)
            out += list(struct.pack('<H', bf16_bits((z >> 11) / 2**53 * 16 - 8)))
    out += [0, 2, 3, 3]  # the output
    out += [0, 0, 0]  # no attributes; 1 thread; policy all
    return bytes(out)


def bf16_bits(v):
    return struct.unpack('<I', struct.pack('<f', v))[0] >> 16


def ep_bf16_seeds():
    for k, (name, domain, min_in) in enumerate(bf16_ops()):
        yield bf16_seed(k, domain, min_in, False)
        if min_in >= 2:
            yield bf16_seed(k, domain, min_in, True)


def write(d, items):
    os.makedirs(d, exist_ok=True)
    for s in items:
        name = 'seed-' + hashlib.sha1(s).hexdigest()[:16]
        with open(os.path.join(d, name), 'wb') as f:
            f.write(s)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'corpus')
    for target in ('fuzz_kernels', 'fuzz_kernels_split'):
        write(os.path.join(root, target), seeds())
    write(os.path.join(root, 'fuzz_ep'), ep_seeds())
    write(os.path.join(root, 'fuzz_ep_bf16'), ep_bf16_seeds())


if __name__ == '__main__':
    main()
