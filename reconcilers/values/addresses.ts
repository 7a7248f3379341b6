// Addresses no tenant may make Portico proxy to. A tenant controls EndpointSlice addresses (a selector-less Service
// with a hand-written slice) and ExternalName targets (any DNS name, whose records it may also control), so
// without this check it could point a public route at Portico's own loopback configuration API, its metrics, the
// node's link-local metadata service or any other listener of the node. Pure: parses the text, no DNS, no I/O.
//
// Refused: loopback (127.0.0.0/8, ::1), unspecified / "this network" (0.0.0.0/8, ::), link-local
// (169.254.0.0/16 — cloud metadata lives there — and fe80::/10), multicast (224.0.0.0/4, ff00::/8), broadcast and
// reserved IPv4 (240.0.0.0/4), the same IPv4 ranges embedded in IPv6 (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible
// ::a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::a.b.c.d), the cloud metadata and host-agent
// addresses outside link-local (AWS's IPv6 fd00:ec2::254, Alibaba Cloud's 100.100.100.200, Azure's wireserver
// 168.63.129.16), anything that is not a plain IP address, and every address in `own` (Portico's own: its
// listeners, its pods, its Service's cluster, external and load-balancer IPs).

/** 16 bytes, IPv4 stored as IPv4-mapped IPv6 (::ffff:a.b.c.d), or null when `s` is not a plain IP address. */
export function parseIp(s: string): Uint8Array | null {
  const v4 = parseIpv4(s);
  if (v4) {
    const out = new Uint8Array(16);
    out[10] = 0xff;
    out[11] = 0xff;
    out.set(v4, 12);
    return out;
  }
  return parseIpv6(s);
}

/** Strict dotted decimal: four numbers 0-255 without leading zeros (so "0127.1" or "127.1" are not addresses). */
export function parseIpv4(s: string): Uint8Array | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i] as string;
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

/** RFC 4291 text forms, with "::" and a trailing dotted IPv4; no zone ids ("%eth0"), no brackets. */
export function parseIpv6(s: string): Uint8Array | null {
  if (s.length < 2 || s.length > 45 || !/^[0-9A-Fa-f:.]+$/.test(s)) return null;
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string): number[] | null => {
    if (h === '') return [];
    const out: number[] = [];
    const items = h.split(':');
    for (let i = 0; i < items.length; i++) {
      const it = items[i] as string;
      if (i === items.length - 1 && it.includes('.')) {
        const v4 = parseIpv4(it);
        if (!v4) return null;
        out.push(((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number));
      } else {
        if (!/^[0-9A-Fa-f]{1,4}$/.test(it)) return null;
        out.push(Number.parseInt(it, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0] as string);
  const tail = halves.length === 2 ? groups(halves[1] as string) : [];
  if (!head || !tail) return null;
  // A dotted IPv4 may only end the address.
  if (halves.length === 2 && (halves[0] as string).includes('.')) return null;
  const total = head.length + tail.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return null;
  const all = [...head, ...new Array<number>(8 - total).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** One key per address whatever its spelling: "10.0.0.5", "::ffff:10.0.0.5" and "::FFFF:a00:5" are equal. */
export function addressKey(s: string): string | null {
  const b = parseIp(s);
  return b ? Buffer.from(b).toString('hex') : null;
}

function ipv4Reason(b: Uint8Array): string | null {
  const [a, c] = [b[0] as number, b[1] as number];
  if (a === 127) return 'a loopback address (127.0.0.0/8)';
  if (a === 0) return 'an unspecified ("this network") address (0.0.0.0/8)';
  if (a === 169 && c === 254) return 'a link-local address (169.254.0.0/16, where cloud metadata services live)';
  if (a >= 224 && a <= 239) return 'a multicast address (224.0.0.0/4)';
  if (a >= 240) return 'a broadcast or reserved address (240.0.0.0/4)';
  // Single addresses of routable ranges that answer like metadata services: the VM's credentials and host agent.
  if (a === 100 && c === 100 && b[2] === 100 && b[3] === 200) return "Alibaba Cloud's metadata address (100.100.100.200)";
  if (a === 168 && c === 63 && b[2] === 129 && b[3] === 16) return "Azure's wireserver / host agent address (168.63.129.16)";
  return null;
}

const zero = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);

/**
 * Why `address` must never receive proxied traffic, or null when it may. `own` holds Portico's own listener
 * addresses (any spelling).
 */
export function forbiddenAddressReason(address: string, own?: ReadonlySet<string>): string | null {
  const b = parseIp(address);
  if (!b) return 'not a plain IP address';
  if (own?.size) {
    const key = Buffer.from(b).toString('hex');
    for (const o of own) if (addressKey(o) === key) return "one of Portico's own listener addresses";
  }
  const embedded = b.subarray(12, 16);
  const ipv4Inside = (kind: string) => {
    const r = ipv4Reason(embedded);
    return r ? `an IPv4${kind} form of ${r}` : null;
  };
  if (zero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return address.includes(':') ? ipv4Inside('-mapped') : ipv4Reason(embedded);
  if (zero(b, 0, 16)) return 'an unspecified address (::)';
  if (zero(b, 0, 15) && b[15] === 1) return 'a loopback address (::1)';
  if (b[0] === 0xfe && ((b[1] as number) & 0xc0) === 0x80) return 'a link-local address (fe80::/10)';
  if (b[0] === 0xff) return 'a multicast address (ff00::/8)';
  if (zero(b, 0, 12)) return ipv4Inside('-compatible');
  if (zero(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zero(b, 10, 12)) return ipv4Inside('-translated');
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(b, 4, 12)) return ipv4Inside(' NAT64');
  if (Buffer.from(b).toString('hex') === 'fd000ec2000000000000000000000254') return "AWS's IPv6 metadata address (fd00:ec2::254)";
  return null;
}
