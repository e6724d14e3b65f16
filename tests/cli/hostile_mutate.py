"""hostile_mutate.py SEED COUNT OUT_DIR MODEL... - writes COUNT mutations of
the given ONNX model files into OUT_DIR as m<NNNN>-<kind>-<model>.onnx
(tests/cli/hostile_inputs.sh feeds them to `passnet build` and `run`).

Deterministic for a seed: mutation i takes model i % len(MODELS) (sorted by
path), kind i / len(MODELS) % 6, and draws its places from random.Random(SEED * 1000003 + i), so the same
seed writes the same bytes on every machine.  The kinds, in turn:

  bitflip    1 to 8 bits flipped anywhere
  insert     1 to 16 random bytes inserted at one place
  delete     1 to 64 bytes taken out at one place
  truncate   the file cut at a random length (0 included)
  length     the length varint of a length-delimited field (at any depth
             of the protobuf wire walk) rewritten: 0, one less, one more,
             a huge value, or 10 bytes of 0xff (an overlong varint)
  tagswap    one field's tag rewritten: another field number of the same
             wire type (a tensor's dims read as its data), or another wire
             type for the same number

A mutation that leaves the bytes unchanged (a delete of nothing) is drawn
again, so every file differs from its model.  Prints one line per kind:
how many were written.  Not part of passnet: a test helper only.
"""
import os
import random
import sys

KINDS = ["bitflip", "insert", "delete", "truncate", "length", "tagswap"]


def read_varint(b, i):
    """(value, next offset) of the varint at b[i], or None past the end."""
    v = 0
    shift = 0
    while i < len(b) and shift < 70:
        c = b[i]
        v |= (c & 0x7F) << shift
        i += 1
        if not c & 0x80:
            return v, i
        shift += 7
    return None


def varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def walk(b, start, end, depth, fields):
    """Appends (tag offset, tag end, wire type, length offset, payload
    start, payload end) of every field of b[start:end]; recurses into
    payloads that parse as messages themselves (most of ONNX's do)."""
    i = start
    while i < end:
        t = read_varint(b, i)
        if t is None:
            return False
        tag, j = t
        wt = tag & 7
        if tag >> 3 == 0:
            return False
        if wt == 0:
            v = read_varint(b, j)
            if v is None:
                return False
            fields.append((i, j, wt, None, j, v[1]))
            i = v[1]
        elif wt == 1 or wt == 5:
            n = 8 if wt == 1 else 4
            if j + n > end:
                return False
            fields.append((i, j, wt, None, j, j + n))
            i = j + n
        elif wt == 2:
            v = read_varint(b, j)
            if v is None or v[1] + v[0] > end:
                return False
            p0, p1 = v[1], v[1] + v[0]
            fields.append((i, j, wt, j, p0, p1))
            if depth < 12 and p1 > p0:
                sub = []
                if walk(b, p0, p1, depth + 1, sub):
                    fields.extend(sub)
            i = p1
        else:
            return False
    return i == end


def fields_of(b):
    fields = []
    walk(b, 0, len(b), 0, fields)
    return fields


def mutate(b, kind, rnd):
    b = bytearray(b)
    n = len(b)
    if kind == "bitflip":
        for _ in range(rnd.randint(1, 8)):
            p = rnd.randrange(n)
            b[p] ^= 1 << rnd.randrange(8)
    elif kind == "insert":
        p = rnd.randint(0, n)
        b[p:p] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 16)))
    elif kind == "delete":
        p = rnd.randrange(n)
        del b[p:p + rnd.randint(1, 64)]
    elif kind == "truncate":
        del b[rnd.randrange(n):]
    elif kind == "length":
        fs = [f for f in fields_of(b) if f[2] == 2]
        if not fs:
            return mutate(b, "bitflip", rnd)
        _, _, _, lo, p0, p1 = rnd.choice(fs)
        old = p1 - p0
        new = rnd.choice([0, max(old - 1, 0), old + 1, old + rnd.randint(2, 4096),
                          (1 << rnd.choice([31, 32, 40, 63])) - 1, None])
        enc = b"\xff" * 9 + b"\x7f" if new is None else varint(new)
        b[lo:p0] = enc
    elif kind == "tagswap":
        fs = fields_of(b)
        if not fs:
            return mutate(b, "bitflip", rnd)
        t0, t1, wt, _, _, _ = rnd.choice(fs)
        number = read_varint(b, t0)[0] >> 3
        if rnd.random() < 0.7:
            number = rnd.choice([x for x in range(1, 22) if x != number])
        else:
            wt = rnd.choice([w for w in (0, 1, 2, 5) if w != wt])
        b[t0:t1] = varint(number << 3 | wt)
    return bytes(b)


def main():
    seed, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    models = sorted(sys.argv[4:])  # the shell's glob order follows the locale
    blobs = [open(m, "rb").read() for m in models]
    names = [os.path.basename(os.path.dirname(m)) or os.path.basename(m) for m in models]
    os.makedirs(out, exist_ok=True)
    written = dict.fromkeys(KINDS, 0)
    for i in range(count):
        rnd = random.Random(seed * 1000003 + i)
        src = blobs[i % len(blobs)]
        # every model meets every kind: the kind changes once per round of models
        kind = KINDS[i // len(blobs) % len(KINDS)]
        m = mutate(src, kind, rnd)
        while m == src:
            m = mutate(src, kind, rnd)
        path = os.path.join(out, "m%04d-%s-%s.onnx" % (i, kind, names[i % len(blobs)]))
        with open(path, "wb") as f:
            f.write(m)
        written[kind] += 1
    for k in KINDS:
        print("%s %d" % (k, written[k]))


main()
