// Portico's metrics module in Debian's nginx, on its own (the configuration Portico renders is tested with it in
// reconcilers/nginx-driver/nginx/metrics.nginx.test.ts and the dashboards e2e suite): hand-written nginx.conf files
// that exercise each directive, the series and slots it counts, the multi-attempt rule for upstream times, a full
// zone, reloads, and the configuration errors. Traffic only to loopback: nginx listens on 31980 (counted), 31981 (a
// backend, not counted) and 31982 (the dump); 31983 is a closed port (a failed upstream attempt).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { METRICS_MODULE } from '../../../reconcilers/nginx-driver/nginx/runtime.ts';
import { sendTo } from '../../../reconcilers/nginx-driver/nginx/live.test-helpers.ts';
import { until } from '../../../e2e/harness/http.ts';
import { startNginx, stopNginx, type Nginx } from '../nginx.test-helpers.ts';

const COUNTED = 31980;
const DUMP = 31982;
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const BUCKETS = { time: [0.005, 0.01, 0.1, 1], length: [100, 1000], size: [100, 1000, 10000] };
type Buckets = typeof BUCKETS;

/** 1-based slots as the module numbers them: 1 = requests, then per histogram its sum, count and buckets (+Inf). */
function layout(b: Buckets) {
  const sets = [b.time, b.time, b.time, b.time, b.length, b.size, b.size];
  const offset: number[] = [];
  let w = 1;
  for (const s of sets) {
    offset.push(w + 1);
    w += 2 + s.length + 1;
  }
  return { offset, width: w };
}

function conf(dir: string, o: { zone?: string; buckets?: Buckets; undefinedHosts?: boolean; generation?: number } = {}): string {
  const b = o.buckets ?? BUCKETS;
  return `daemon off;
master_process on;
worker_processes 2;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
load_module /usr/lib/nginx/modules/ndk_http_module.so;
load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;
load_module ${METRICS_MODULE};
events { worker_connections 256; }
http {
  access_log off;
  portico_metrics_zone ${o.zone ?? '1m'};
  portico_metrics_key $mk;
  portico_metrics_buckets time ${b.time.join(' ')};
  portico_metrics_buckets length ${b.length.join(' ')};
  portico_metrics_buckets size ${b.size.join(' ')};
  portico_metrics_undefined_hosts ${o.undefinedHosts ? 'on' : 'off'};
  map $uri $mk { "~^/[a-z]+/(?<k>[a-z0-9-]+)$" "ns|$k"; default ""; }
  upstream retry { server 127.0.0.1:31983; server 127.0.0.1:31981 backup; }
  server {
    listen 127.0.0.1:${COUNTED};
    portico_metrics on;
    location /s/ { return 200 "ok"; }
    location /p/ { proxy_pass http://127.0.0.1:31981; }
    location /retry/ { proxy_pass http://retry; proxy_next_upstream error; }
    location /off/ { portico_metrics off; return 200; }
    location / { return 404; }
  }
  server {
    listen 127.0.0.1:31981;
    location /p/slow { content_by_lua_block { ngx.sleep(0.03) ngx.print("slow") } }
    location / { return 200 "backend"; }
  }
  server {
    listen 127.0.0.1:${DUMP};
    location = /dump { portico_metrics_dump; }
    location = /dropped { return 200 "$portico_metrics_dropped"; }
    location = /generation { return 200 "${o.generation ?? 0}"; }
  }
}
`;
}

const start = (o: Parameters<typeof conf>[1] = {}): Promise<Nginx> =>
  startNginx({ module: METRICS_MODULE, prefix: 'portico-pm-', conf: (dir) => conf(dir, o), dirs, answers: async () => (await get('/generation').catch(() => null)) !== null });
const stop = stopNginx;

async function reload(n: Nginx, o: Parameters<typeof conf>[1]): Promise<void> {
  writeFileSync(path.join(n.dir, 'nginx.conf'), conf(n.dir, o));
  n.proc.kill('SIGHUP');
  // Reloaded when every answer comes from the new workers: the generation they serve is the new one, ten times.
  await until(`the reload to generation ${o?.generation}`, async () => {
    for (let i = 0; i < 10; i++) if ((await get('/generation')) !== String(o?.generation)) return false;
    return true;
  }, 15_000);
}

async function get(p: string): Promise<string> {
  const a = await sendTo(DUMP, 'dump', p);
  assert.equal(a.status, 200, `${p}: ${a.body}`);
  return a.body;
}

/** The dump as a map "key|status|method" -> slot -> value. */
async function dump(): Promise<Map<string, Map<number, number>>> {
  const out = new Map<string, Map<number, number>>();
  for (const line of (await get('/dump')).split('\n')) {
    if (!line) continue;
    const [left, value] = line.split('\t') as [string, string];
    // labels (which may hold \x1f themselves), status, method, slot
    const f = left.split('\x1f');
    assert.ok(f.length >= 4, `a dump line is labels, status, method, slot: ${JSON.stringify(line)}`);
    const slot = Number(f.pop());
    const method = f.pop() as string;
    const status = f.pop() as string;
    const series = `${f.join('\x1f')}|${status}|${method}`;
    if (!out.has(series)) out.set(series, new Map());
    out.get(series)!.set(slot, Number(value));
  }
  return out;
}

const count = (d: Map<string, Map<number, number>>, s: string) => d.get(s)?.get(1) ?? 0;

/** The dump once `series` has counted `n` requests (a request is counted in its log phase, after the client has its
 * answer, and another worker may serve the dump first), within a deadline. */
async function counted(series: string, n: number): Promise<Map<string, Map<number, number>>> {
  return until(`${n} requests of ${series} in the dump`, async () => {
    const d = await dump();
    return count(d, series) >= n && d;
  }, 5_000);
}

test('counts per series (labels, status, method), histogram sums, counts and buckets; upstream times only for one attempt', async () => {
  const n = await start();
  try {
    const { offset, width } = layout(BUCKETS);
    for (let i = 0; i < 3; i++) assert.equal((await sendTo(COUNTED, 'a.test', '/s/a')).status, 200);
    for (let i = 0; i < 2; i++) assert.equal((await sendTo(COUNTED, 'a.test', '/p/a', { method: 'POST', body: 'x'.repeat(300) })).status, 200);
    assert.equal((await sendTo(COUNTED, 'a.test', '/s/b', { method: 'FOO' })).status, 200);
    const methods = ['HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PROPFIND', 'MKCOL', 'UNLOCK'];
    for (const method of methods) assert.equal((await sendTo(COUNTED, 'a.test', '/s/m', { method })).status, 200, method);
    assert.equal((await sendTo(COUNTED, 'a.test', '/missing')).status, 404); // empty key: not counted
    assert.equal((await sendTo(COUNTED, 'a.test', '/off/o')).status, 200); // portico_metrics off here
    for (let i = 0; i < 2; i++) assert.equal((await sendTo(COUNTED, 'a.test', '/p/pa')).status, 200);
    assert.equal((await sendTo(COUNTED, 'a.test', '/retry/r')).status, 200);

    // A request is counted in its log phase, after the client has its answer (and another worker may serve the dump
    // first): wait, with a deadline, for all 17 counted requests.
    const total = (x: Map<string, Map<number, number>>) => [...x.values()].reduce((a, slots) => a + (slots.get(1) ?? 0), 0);
    const d = await until('the 17 counted requests in the dump', async () => {
      const x = await dump();
      return total(x) >= 17 && x;
    }, 5_000);
    assert.equal(total(d), 17);
    assert.deepEqual([...d.keys()].sort(), ['ns|a|200|GET', 'ns|a|200|POST', 'ns|b|200|OTHER', ...methods.map((m) => `ns|m|200|${m}`), 'ns|pa|200|GET', 'ns|r|200|GET'].sort(), 'each method nginx knows under its name');
    assert.equal(count(d, 'ns|a|200|GET'), 3);
    assert.equal(count(d, 'ns|a|200|POST'), 2);
    assert.equal(count(d, 'ns|b|200|OTHER'), 1, 'a method outside the list is OTHER');
    for (const [series, slots] of d) {
      assert.ok([...slots.keys()].every((s) => s >= 1 && s <= width), `${series}: slots within the layout`);
      // Every series observes a request duration, request size and bytes sent per request.
      for (const h of [0, 4, 6]) {
        const o = offset[h] as number;
        assert.equal(slots.get(o + 1), slots.get(1), `${series}: histogram ${h} counts every request`);
        const buckets = [...Array(width).keys()].map((i) => i + 1).filter((s) => s >= o + 2 && s < (offset[h + 1] ?? width + 1));
        assert.equal(buckets.reduce((a, s) => a + (slots.get(s) ?? 0), 0), slots.get(1), `${series}: each request in one bucket of histogram ${h}`);
      }
    }
    // Request sizes (proxied, so the body is read): 300-byte bodies land above the 100-byte bound; the sum is bytes.
    const post = d.get('ns|a|200|POST')!;
    assert.ok((post.get(offset[4] as number) ?? 0) > 600, 'request_size sums request line, headers and body');
    assert.equal(post.get((offset[4] as number) + 2) ?? 0, 0, 'no POST of 300+ bytes is in the <= 100 bucket');
    // Upstream times: the proxied series only; the retried request (two attempts) observes none, as ingress-nginx.
    const upCount = (s: string) => d.get(s)?.get((offset[1] as number) + 1) ?? 0;
    assert.equal(upCount('ns|pa|200|GET'), 2);
    assert.equal(upCount('ns|a|200|GET'), 0);
    assert.equal(count(d, 'ns|r|200|GET'), 1);
    assert.equal(upCount('ns|r|200|GET'), 0, 'two upstream attempts ("0.000, 0.001") observe no upstream time');
    // Duration sums are dumped in seconds with millisecond digits, and bucketed in seconds: a 30+ ms answer is above
    // the 0.01 bound, in the first bucket whose bound is at least its time (0.1 unless the machine is very slow), for
    // the request and for the upstream's response.
    assert.equal((await sendTo(COUNTED, 'a.test', '/p/slow')).status, 200);
    await counted('ns|slow|200|GET', 1);
    const text = await get('/dump');
    for (const h of [0, 1]) {
      const o = offset[h] as number;
      const sum = text.split('\n').find((l) => l.startsWith(`ns|slow\x1f200\x1fGET\x1f${o}\t`));
      const m = /\t(\d+\.\d{3})$/.exec(sum ?? '');
      assert.ok(m, `histogram ${h}: the sum in seconds with three decimals: ${sum}`);
      const seconds = Number(m[1]);
      assert.ok(seconds >= 0.03, `histogram ${h}: the sum of one 30+ ms request (${seconds} s)`);
      const slow = (await dump()).get('ns|slow|200|GET')!;
      const bounds = [...BUCKETS.time, Infinity];
      const want = bounds.findIndex((b) => seconds <= b);
      assert.deepEqual(bounds.map((_, i) => slow.get(o + 2 + i) ?? 0), bounds.map((_, i) => (i === want ? 1 : 0)), `histogram ${h}: ${seconds} s in the bucket of bound ${bounds[want]}`);
    }
    assert.equal(await get('/dropped'), '0');
  } finally {
    await stop(n);
  }
});

test('undefined hosts: an empty key counts under the catch-all host "_" only when asked', async () => {
  const n = await start({ undefinedHosts: true });
  try {
    assert.equal((await sendTo(COUNTED, 'a.test', '/missing')).status, 404);
    const d = await counted('\x1f\x1f\x1f\x1f_|404|GET', 1);
    assert.deepEqual([...d.keys()], ['\x1f\x1f\x1f\x1f_|404|GET'], 'host "_", every other label empty');
    assert.equal(count(d, '\x1f\x1f\x1f\x1f_|404|GET'), 1);
  } finally {
    await stop(n);
  }
});

test('a full zone: new series are dropped (counted, logged), existing ones keep counting', async () => {
  const n = await start({ zone: '32k' });
  try {
    assert.equal((await sendTo(COUNTED, 'a.test', '/s/first')).status, 200);
    await counted('ns|first|200|GET', 1);
    for (let i = 0; i < 300; i++) await sendTo(COUNTED, 'a.test', `/s/k${i}`);
    const dropped = await until('series dropped', async () => Number(await get('/dropped')) || false, 5_000);
    assert.ok(dropped > 0, `a 32k zone cannot hold 300 series (${dropped} dropped)`);
    const before = count(await dump(), 'ns|first|200|GET');
    assert.equal(before, 1);
    await sendTo(COUNTED, 'a.test', '/s/first');
    assert.equal(count(await counted('ns|first|200|GET', 2), 'ns|first|200|GET'), 2, 'a series that has its place keeps counting');
    await until('the full zone is logged', () => readFileSync(path.join(n.dir, 'error.log'), 'utf8').includes('portico_metrics zone is full'), 5_000);
  } finally {
    await stop(n);
  }
});

test('reloads keep the counts; a reload that changes the bucket layout starts them over', async () => {
  const n = await start({ generation: 1 });
  try {
    for (let i = 0; i < 4; i++) await sendTo(COUNTED, 'a.test', '/s/a');
    await counted('ns|a|200|GET', 4);
    await reload(n, { generation: 2 });
    assert.equal(count(await dump(), 'ns|a|200|GET'), 4, 'same layout: the zone and its counts survive');
    await sendTo(COUNTED, 'a.test', '/s/a');
    assert.equal(count(await counted('ns|a|200|GET', 5), 'ns|a|200|GET'), 5);

    const other = { ...BUCKETS, time: [0.5, 1] };
    await reload(n, { generation: 3, buckets: other });
    assert.equal((await dump()).size, 0, 'a new layout empties the zone (old slots would be misread)');
    await sendTo(COUNTED, 'a.test', '/s/a');
    const d = await counted('ns|a|200|GET', 1);
    assert.equal(count(d, 'ns|a|200|GET'), 1);
    assert.ok([...d.get('ns|a|200|GET')!.keys()].every((s) => s <= layout(other).width));
  } finally {
    await stop(n);
  }
});

test('configuration errors are refused by nginx -t with the reason', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-pm-t-'));
  dirs.push(dir);
  const check = (text: string) => {
    writeFileSync(path.join(dir, 'nginx.conf'), text);
    const r = spawnSync('nginx', ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'], { encoding: 'utf8' });
    return { ok: r.status === 0, err: r.stderr };
  };
  const good = conf(dir);
  assert.ok(check(good).ok, check(good).err);
  const cases: [string, RegExp][] = [
    [good.replace('portico_metrics_buckets time 0.005 0.01', 'portico_metrics_buckets time 0.01 0.005'), /invalid bucket bound "0.005": a number, ascending/],
    [good.replace('portico_metrics_buckets length 100', 'portico_metrics_buckets length abc'), /invalid bucket bound "abc"/],
    [good.replace('portico_metrics_buckets size', 'portico_metrics_buckets sizes'), /unknown bucket set "sizes"/],
    [good.replace('  portico_metrics_key $mk;\n', ''), /portico_metrics_zone needs portico_metrics_key/],
    [good.replace('portico_metrics_key $mk', 'portico_metrics_key mk'), /portico_metrics_key "mk" is not a variable/],
    [good.replace("portico_metrics_zone 1m", "portico_metrics_zone 1k"), /portico_metrics_zone "1k" is too small or invalid/],
  ];
  for (const [text, want] of cases) {
    const r = check(text);
    assert.equal(r.ok, false, `refused: ${want}`);
    assert.match(r.err, want);
  }
});
