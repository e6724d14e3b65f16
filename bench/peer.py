#!/usr/bin/python3
"""bench/peer.py DB PATH... - the Python script a user would write instead of
`passnet build --strategy sole,window --variants 0`, as the yardstick of
`make bench-peer`.  One process, one thread.

What it computes, for every *.onnx file under the PATHs (sorted by path):
  1. decode: onnx.load without external data (passnet does not read
     weights either: it keeps their statistics), then
     onnx.shape_inference.infer_shapes, so that the values a cut reads from
     outside have a type (element type and dims, symbolic dims by name);
  2. the label of every node: domain, op type, and its attributes sorted by
     name, each as its serialised AttributeProto (nested graphs included);
  3. singles ("sole"): every node alone; its structural hash is
     SHA-256(label, the type of each input in slot order, the number of
     outputs), cut to 16 bytes;
  4. windows: every run of 2..8 consecutive nodes of the file's node order
     (ONNX requires it topological) that is connected through values;
     hashed bottom up: a node's hash covers its label and, per input slot,
     either the hash of the producing node in the window with the output
     slot, or the type of the outside value (an initializer is marked as a
     constant); the window's hash is SHA-256 of its sorted node hashes;
  5. store, in LMDB at DB (one write transaction per model): "subgraphs"
     hash -> number of nodes (once per distinct hash), "occurrences"
     hash -> model path, start, length (one per candidate, dupsort).
It prints one line: files, nodes, candidates, distinct hashes, seconds.

This is weaker than passnet's canonical form (node order matters, no
check that a window is convex, no constant contents, no canonical
labelling of symmetric operands), so it does less work than passnet does.
"""
import hashlib
import os
import sys
import time

import lmdb
import onnx
from onnx import shape_inference

WINDOW_MAX = 8


def onnx_files(paths):
    found = []
    for p in paths:
        if os.path.isfile(p) and p.endswith(".onnx"):
            found.append(p)
        for root, _, files in os.walk(p):
            found.extend(os.path.join(root, f) for f in files if f.endswith(".onnx"))
    return sorted(found)


def type_text(vi):
    t = vi.type
    if not t.HasField("tensor_type"):
        return t.WhichOneof("value") or "?"
    tt = t.tensor_type
    dims = ",".join(d.dim_param if d.HasField("dim_param") else str(d.dim_value)
                    for d in tt.shape.dim) if tt.HasField("shape") else "?"
    return "%d[%s]" % (tt.elem_type, dims)


def node_label(n):
    parts = [n.domain, n.op_type]
    for a in sorted(n.attribute, key=lambda a: a.name):
        parts.append(a.SerializeToString())
    return b"\0".join(p.encode() if isinstance(p, str) else p for p in parts)


def h16(*parts):
    d = hashlib.sha256()
    for p in parts:
        d.update(p if isinstance(p, bytes) else p.encode())
        d.update(b"\1")
    return d.digest()[:16]


def model_candidates(path):
    m = onnx.load(path, load_external_data=False)
    try:
        m = shape_inference.infer_shapes(m)
    except Exception:
        pass   # a model inference refuses keeps the types it declares
    g = m.graph
    types = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        types[vi.name] = type_text(vi)
    consts = {i.name for i in g.initializer}
    nodes = list(g.node)
    labels = [node_label(n) for n in nodes]
    producer = {}
    for i, n in enumerate(nodes):
        for s, o in enumerate(n.output):
            if o:
                producer[o] = (i, s)

    def outside(v):
        return ("const " if v in consts else "") + types.get(v, "?")

    for i, n in enumerate(nodes):
        yield i, 1, h16(labels[i], *[outside(v) for v in n.input], str(len(n.output)))
    for start in range(len(nodes)):
        for length in range(2, WINDOW_MAX + 1):
            if start + length > len(nodes):
                break
            window = range(start, start + length)
            if not connected(nodes, producer, start, length):
                continue
            hashes = {}
            for i in window:   # topological: producers come first
                ins = []
                for v in nodes[i].input:
                    p = producer.get(v)
                    if p and start <= p[0] < start + length:
                        ins.append(hashes[p[0]] + b"%d" % p[1])
                    else:
                        ins.append(outside(v).encode())
                hashes[i] = h16(labels[i], *ins, str(len(nodes[i].output)))
            yield start, length, h16(*sorted(hashes.values()))


def connected(nodes, producer, start, length):
    """Is the run connected through values (undirected)?"""
    parent = list(range(length))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for i in range(start, start + length):
        for v in nodes[i].input:
            p = producer.get(v)
            if p and start <= p[0] < start + length:
                parent[find(i - start)] = find(p[0] - start)
    return len({find(x) for x in range(length)}) == 1


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: peer.py DB PATH...")
    t0 = time.monotonic()
    env = lmdb.open(sys.argv[1], map_size=1 << 34, max_dbs=4)
    subgraphs = env.open_db(b"subgraphs")
    occurrences = env.open_db(b"occurrences", dupsort=True)
    files = nodes = cands = 0
    for path in onnx_files(sys.argv[2:]):
        try:
            found = list(model_candidates(path))
        except Exception as e:
            print("%s: %s" % (path, e), file=sys.stderr)
            continue
        files += 1
        nodes += sum(1 for _, n, _ in found if n == 1)
        with env.begin(write=True) as txn:
            for start, length, h in found:
                txn.put(h, b"%d" % length, db=subgraphs, overwrite=False)
                txn.put(h, ("%s %d %d" % (path, start, length)).encode(), db=occurrences)
                cands += 1
    with env.begin() as txn:
        distinct = txn.stat(subgraphs)["entries"]
    env.close()
    print("peer: %d files, %d nodes, %d candidates, %d distinct, %.3f s"
          % (files, nodes, cands, distinct, time.monotonic() - t0))


if __name__ == "__main__":
    main()
