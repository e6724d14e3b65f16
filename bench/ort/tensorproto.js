'use strict';
// tensorproto.js - reads an ONNX TensorProto (.pb file of the backend-test
// layout) into {name, type, dims, data} where type is an onnxruntime-node
// tensor type and data the matching typed array.  Only the protobuf wire
// format is needed, so this avoids a protobuf dependency: the fields read
// are those passnet and the ONNX test generators write (dims, data_type,
// the typed *_data fields and raw_data).

// TensorProto.DataType -> [ort type, typed array constructor, field of the
// non-raw encoding]
const TYPES = {
  1: ['float32', Float32Array, 'float'],
  2: ['uint8', Uint8Array, 'int32'],
  3: ['int8', Int8Array, 'int32'],
  4: ['uint16', Uint16Array, 'int32'],
  5: ['int16', Int16Array, 'int32'],
  6: ['int32', Int32Array, 'int32'],
  7: ['int64', BigInt64Array, 'int64'],
  9: ['bool', Uint8Array, 'int32'],
  10: ['float16', Uint16Array, 'int32'],
  11: ['float64', Float64Array, 'double'],
  12: ['uint32', Uint32Array, 'uint64'],
  13: ['uint64', BigUint64Array, 'uint64'],
  16: ['bfloat16', Uint16Array, 'int32'],
};

class Reader {
  constructor(buf) {
    this.buf = buf;
    this.pos = 0;
  }
  varint() {
    let x = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      x |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return x;
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
  }
  bytes() {
    const n = Number(this.varint());
    if (this.pos + n > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

// Repeated scalar field values, packed (wire 2) or one at a time.
function scalars(r, wire, kind, out) {
  const one = (rd) => {
    if (kind === 'float') {
      const v = rd.buf.readFloatLE(rd.pos);
      rd.pos += 4;
      return v;
    }
    if (kind === 'double') {
      const v = rd.buf.readDoubleLE(rd.pos);
      rd.pos += 8;
      return v;
    }
    return rd.varint();
  };
  if (wire !== 2) {
    out.push(one(r));
    return;
  }
  const sub = new Reader(Buffer.from(r.bytes()));
  while (sub.pos < sub.buf.length) out.push(one(sub));
}

function decode(buf) {
  const r = new Reader(buf);
  const t = { name: '', dims: [], dataType: 0, raw: null, float: [], int32: [], int64: [], double: [], uint64: [], external: false };
  while (r.pos < buf.length) {
    const key = Number(r.varint());
    const field = key >> 3;
    const wire = key & 7;
    switch (field) {
      case 1: { const d = []; scalars(r, wire, 'int64', d); t.dims.push(...d.map(Number)); break; }
      case 2: t.dataType = Number(r.varint()); break;
      case 4: scalars(r, wire, 'float', t.float); break;
      case 5: scalars(r, wire, 'int32', t.int32); break;
      case 7: scalars(r, wire, 'int64', t.int64); break;
      case 8: t.name = r.bytes().toString('utf8'); break;
      case 9: t.raw = r.bytes(); break;
      case 10: scalars(r, wire, 'double', t.double); break;
      case 11: scalars(r, wire, 'uint64', t.uint64); break;
      case 13: t.external = true; r.skip(wire); break;
      default: r.skip(wire);
    }
  }
  return t;
}

// Reads one .pb file; throws on a type onnxruntime-node has no tensor for.
function readTensor(buf) {
  const t = decode(buf);
  const spec = TYPES[t.dataType];
  if (!spec) throw new Error(`tensor ${t.name}: data type ${t.dataType} is not supported here`);
  if (t.external) throw new Error(`tensor ${t.name}: external data is not supported here`);
  const [type, Ctor, field] = spec;
  const numel = t.dims.reduce((a, b) => a * b, 1);
  let data;
  if (t.raw) {
    if (t.raw.length !== numel * Ctor.BYTES_PER_ELEMENT) throw new Error(`tensor ${t.name}: raw_data has ${t.raw.length} bytes for ${numel} elements`);
    // copy: the Buffer's offset need not be aligned for the typed array
    data = new Ctor(numel);
    new Uint8Array(data.buffer).set(t.raw);
  } else {
    const vals = t[field];
    if (vals.length !== numel) throw new Error(`tensor ${t.name}: ${vals.length} values for ${numel} elements`);
    data = new Ctor(numel);
    const big = Ctor === BigInt64Array || Ctor === BigUint64Array;
    for (let i = 0; i < numel; i++) {
      const v = vals[i];
      if (big) data[i] = Ctor === BigInt64Array ? BigInt.asIntN(64, v) : BigInt.asUintN(64, v);
      else data[i] = typeof v === 'bigint' ? Number(BigInt.asIntN(64, v)) : v;
    }
  }
  return { name: t.name, type, dims: t.dims, data };
}

// Encodes {name, type, dims, data} (an onnxruntime-node tensor) as a
// TensorProto: dims (1), data_type (2), name (8) and raw_data (9), the
// fields readTensor and onnx's numpy_helper read.  Little-endian raw bytes,
// as TensorProto's raw_data requires (so this host's byte order must be
// little-endian, which every platform onnxruntime-node ships for is).
function varintBytes(x) {
  let v = BigInt(x);
  const out = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}

function writeTensor(t) {
  const code = Object.keys(TYPES).find((k) => TYPES[k][0] === t.type);
  if (code === undefined) throw new Error(`tensor ${t.name}: type ${t.type} has no TensorProto code here`);
  const parts = [];
  for (const d of t.dims) parts.push(Buffer.from([0x08, ...varintBytes(d)]));
  parts.push(Buffer.from([0x10, ...varintBytes(code)]));
  const name = Buffer.from(t.name || '', 'utf8');
  parts.push(Buffer.from([0x42, ...varintBytes(name.length)]), name);
  const raw = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  parts.push(Buffer.from([0x4a, ...varintBytes(raw.length)]), raw);
  return Buffer.concat(parts);
}

// IEEE half (bits) to a number, for comparing float16 outputs.
function halfToNumber(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// bfloat16 (bits) to a number: the high half of a float32.
function bfloat16ToNumber(h) {
  const f = new Float32Array(new Uint32Array([(h & 0xffff) << 16]).buffer);
  return f[0];
}

module.exports = { readTensor, writeTensor, halfToNumber, bfloat16ToNumber };
