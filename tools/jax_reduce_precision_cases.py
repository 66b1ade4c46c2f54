#!/usr/bin/env python3
"""JAX's `lax.reduce_precision` on edge values: the bitwise goldens of
meshrun's reduce_precision kernels (kernels/tests/reduce_precision.rs).

Usage: python3 tools/jax_reduce_precision_cases.py [--out kernels/tests/data/reduce_precision.txt]

For every input type (f64, f32, f16, bf16) and format (exponent_bits,
mantissa_bits) in FORMATS, the inputs are the type's edge values (zeros,
smallest/largest denormals and normals, infinities, NaNs with payloads and
both signs), the edges of the reduced format (its largest finite value, its
overflow and underflow thresholds, its smallest normal), values exactly
halfway between two reduced values (ties to even and to odd) and one ulp
either side, and random values over the whole bit range. Each line of the
output is `TYPE EXP MANT INPUT_BITS OUTPUT_BITS` (bits in hex), run by
jax.jit on CPU (XLA's CPU kernel, not the constant folder).
Deterministic: random inputs come from numpy.random.RandomState(crc32(...)).
"""

import argparse
import os
import zlib

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

# (exponent_bits, mantissa_bits): bf16, f16, fp8 e4m3, fp8 e5m2, f32, a
# mantissa-only and an exponent-only reduction, the smallest format.
FORMATS = [(8, 7), (5, 10), (4, 3), (5, 2), (8, 23), (11, 4), (2, 20), (1, 0), (3, 0)]

TYPES = {
    "f64": (jnp.float64, np.uint64, 11, 52),
    "f32": (jnp.float32, np.uint32, 8, 23),
    "f16": (jnp.float16, np.uint16, 5, 10),
    "bf16": (jnp.bfloat16, np.uint16, 8, 7),
}


def edge_bits(ebits, mbits, fe, fm):
    """Bit patterns of interest for a source type (ebits, mbits) reduced to (fe, fm)."""
    width = 1 + ebits + mbits
    sign = 1 << (width - 1)
    emax = (1 << ebits) - 1
    bias = (1 << (ebits - 1)) - 1
    out = set()

    def enc(e, m):
        return (e << mbits) | m

    mant_all = (1 << mbits) - 1
    base = [0, 1, 2, mant_all, 1 << (mbits - 1), enc(1, 0), enc(1, 1), enc(bias, 0),
            enc(bias, 1), enc(emax - 1, mant_all), enc(emax - 1, 0), enc(emax, 0),
            enc(emax, 1), enc(emax, 1 << (mbits - 1)), enc(emax, mant_all),
            enc(emax, (1 << (mbits - 1)) | 1)]
    # The reduced format's exponent window, around its edges.
    rbias = (1 << (fe - 1)) - 1
    for e in [bias + rbias, bias + rbias + 1, bias - rbias, bias - rbias + 1, bias - rbias - 1]:
        if 0 < e < emax:
            for m in [0, 1, mant_all, mant_all - 1]:
                base.append(enc(e, m))
    # Rounding ties and their neighbours at the reduced mantissa width.
    if fm < mbits:
        drop = mbits - fm
        half = 1 << (drop - 1)
        for keep in [0, 1, 2, 3, (1 << fm) - 1]:
            for delta in [-1, 0, 1]:
                m = (keep << drop) + half + delta
                if 0 <= m <= mant_all:
                    for e in [1, bias, bias + 1, bias - rbias, bias + rbias, emax - 1]:
                        if 0 < e < emax:
                            base.append(enc(e, m))
                    base.append(m)  # denormal
    for b in base:
        if 0 <= b < sign:
            out.add(b)
            out.add(b | sign)
    rng = np.random.RandomState(zlib.crc32(f"{ebits}{mbits}{fe}{fm}".encode()))
    for _ in range(16):
        out.add(int(rng.randint(0, 1 << 30)) * (1 << max(width - 30, 0)) % (1 << width)
                | int(rng.randint(0, 1 << min(width, 30))))
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="kernels/tests/data/reduce_precision.txt")
    args = ap.parse_args()
    lines = [
        "# lax.reduce_precision on CPU (jax %s): TYPE EXP MANT INPUT_BITS OUTPUT_BITS"
        % jax.__version__,
        "# made by tools/jax_reduce_precision_cases.py; do not edit",
    ]
    for tname, (dtype, utype, ebits, mbits) in TYPES.items():
        for fe, fm in FORMATS:
            bits = np.array(edge_bits(ebits, mbits, fe, fm), dtype=utype)
            x = jax.lax.bitcast_convert_type(jnp.asarray(bits), dtype)
            f = jax.jit(lambda a, fe=fe, fm=fm: jax.lax.reduce_precision(a, fe, fm))
            y = np.asarray(jax.lax.bitcast_convert_type(f(x), utype))
            hexw = np.dtype(utype).itemsize * 2
            for i, o in zip(bits.tolist(), y.tolist()):
                lines.append(f"{tname} {fe} {fm} {i:0{hexw}x} {o:0{hexw}x}")
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"{len(lines) - 2} cases -> {args.out}")


if __name__ == "__main__":
    main()
