// A MaxMind DB (.mmdb, format version 2.0) written from scratch for the tests, so nginx's GeoIP2 module reads a
// database whose contents the test chose: IPv4 only (ip_version 4), 24-bit records. The layout, as the format's
// specification describes it: a binary search tree over the address bits (two records per node: a node number, the
// node count for "no data", or node count + 16 + an offset into the data section), 16 zero bytes, the data section
// (MaxMind's typed encoding), then the metadata marker "\xAB\xCD\xEFMaxMind.com" and the metadata map.

/** A value of the data section: strings, unsigned integers (uint32, uint64 when big, { u16 }), doubles, booleans, maps, arrays. */
export type MmdbValue = string | number | boolean | bigint | { double: number } | { u16: number } | MmdbValue[] | { [key: string]: MmdbValue };

/** Control byte(s) for a type (1-15) and a size or count. */
function control(type: number, size: number): Buffer {
  const first = type <= 7 ? type << 5 : 0;
  const ext = type > 7 ? [type - 7] : [];
  let sizeBits: number;
  let extra: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 29 + 256) {
    sizeBits = 29;
    extra = [size - 29];
  } else if (size < 285 + 65536) {
    sizeBits = 30;
    extra = [(size - 285) >> 8, (size - 285) & 0xff];
  } else {
    sizeBits = 31;
    const s = size - 65821;
    extra = [(s >> 16) & 0xff, (s >> 8) & 0xff, s & 0xff];
  }
  return Buffer.from([first | sizeBits, ...ext, ...extra]);
}

function unsigned(type: number, v: bigint): Buffer {
  const bytes: number[] = [];
  for (let x = v; x > 0n; x >>= 8n) bytes.unshift(Number(x & 0xffn));
  return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)]);
}

export function encode(v: MmdbValue): Buffer {
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    return Buffer.concat([control(2, b.length), b]);
  }
  if (typeof v === 'boolean') return control(14, v ? 1 : 0);
  if (typeof v === 'bigint') return unsigned(9, v);
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`use { double } for ${v}`);
    return v > 0xffffffff ? unsigned(9, BigInt(v)) : unsigned(6, BigInt(v));
  }
  if (Array.isArray(v)) return Buffer.concat([control(11, v.length), ...v.map(encode)]);
  if ('u16' in v && typeof v.u16 === 'number' && Object.keys(v).length === 1) return unsigned(5, BigInt(v.u16));
  if ('double' in v && typeof v.double === 'number' && Object.keys(v).length === 1) {
    const b = Buffer.alloc(8);
    b.writeDoubleBE(v.double);
    return Buffer.concat([control(3, 8), b]);
  }
  const entries = Object.entries(v as Record<string, MmdbValue>);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, x]) => [encode(k), encode(x)])]);
}

/** A database mapping IPv4 networks ("192.0.2.0/24") to records. Networks must not overlap. */
export function buildMmdb(databaseType: string, networks: Record<string, MmdbValue>): Buffer {
  type Rec = { node: number } | { data: number } | null;
  const nodes: [Rec, Rec][] = [[null, null]];
  const data: Buffer[] = [];
  let dataLen = 0;
  for (const [cidr, record] of Object.entries(networks)) {
    const [addr, bitsText] = cidr.split('/');
    const bits = Number(bitsText);
    const ip = (addr ?? '').split('.').reduce((a, o) => (a << 8n) | BigInt(Number(o)), 0n);
    const encoded = encode(record);
    const offset = dataLen;
    data.push(encoded);
    dataLen += encoded.length;
    let n = 0;
    for (let i = 0; i < bits; i++) {
      const bit = Number((ip >> BigInt(31 - i)) & 1n);
      const node = nodes[n] as [Rec, Rec];
      if (i === bits - 1) {
        if (node[bit]) throw new Error(`${cidr} overlaps another network`);
        node[bit] = { data: offset };
      } else {
        const next = node[bit];
        if (next && 'data' in next) throw new Error(`${cidr} overlaps another network`);
        if (!next) {
          nodes.push([null, null]);
          node[bit] = { node: nodes.length - 1 };
        }
        n = (node[bit] as { node: number }).node;
      }
    }
  }
  const count = nodes.length;
  const value = (r: Rec): number => (r === null ? count : 'node' in r ? r.node : count + 16 + r.data);
  const tree = Buffer.alloc(count * 6);
  nodes.forEach(([l, r], i) => {
    tree.writeUIntBE(value(l), i * 6, 3);
    tree.writeUIntBE(value(r), i * 6 + 3, 3);
  });
  // The metadata's small integers are uint16 as the specification has them, node_count a uint32.
  const metadata = encode({
    binary_format_major_version: { u16: 2 },
    binary_format_minor_version: { u16: 0 },
    build_epoch: BigInt(Math.floor(Date.now() / 1000)),
    database_type: databaseType,
    description: { en: 'Portico test database' },
    ip_version: { u16: 4 },
    languages: ['en'],
    node_count: count,
    record_size: { u16: 24 },
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...data, Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1'), metadata]);
}
