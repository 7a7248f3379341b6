// Portico's variables module in Debian's nginx, on its own (the configuration Portico renders is tested with it by
// every real-nginx test): hand-written nginx.conf files that read each derived variable back in a response, its
// operands empty and not, a value Lua sets over a derived one, the proxied headers built from them, and the
// configuration errors, writes by index from Lua (varset.lua), portico_header_if_set, and the peer hand-off's addresses
// (peer_handoff.lua; the hand-off itself: reconcilers/nginx-driver/nginx/peer-handoff.nginx.test.ts). Traffic only to loopback: nginx listens on 31990 (variables) and 31991 (a backend that echoes
// the request headers it receives).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ASSETS_DIR, VARS_MODULE } from '../../../reconcilers/nginx-driver/nginx/runtime.ts';
import { sendTo } from '../../../reconcilers/nginx-driver/nginx/live.test-helpers.ts';
import { startNginx, stopNginx, type Nginx } from '../nginx.test-helpers.ts';

const PORT = 31990;
const BACKEND = 31991;
const ID = '0a1b2c3d4e5f6a7b';
const ASSETS_LUA = path.join(ASSETS_DIR, 'lua');
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function conf(dir: string, http: string): string {
  return `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
load_module /usr/lib/nginx/modules/ndk_http_module.so;
load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;
load_module ${VARS_MODULE};
events { worker_connections 64; }
http {
  access_log off;
${http}
}
`;
}

const HTTP = `
  portico_coalesce $host_sent $http_host $host;
  portico_coalesce $first $arg_a $arg_b "fallback";
  portico_coalesce $none $arg_a $arg_b;
  portico_if $port_published $https 443 80;
  portico_if $upgrade_sent $http_upgrade upgrade;
  portico_if $alt $arg_route $arg_served;
  portico_if $chosen $arg_t $arg_then $arg_else;
  portico_hop $hop $loop $http_x_portico_hop ${ID};
  portico_coalesce $rid $http_x_request_id $arg_gen;
  portico_request_id $gen_id;
  portico_coalesce $req_id $http_x_request_id $gen_id;
  lua_package_path "${ASSETS_LUA}/?.lua;/usr/share/lua/5.1/?.lua;;";
  map "" $portico_x { default "derived"; }
  server {
    listen 127.0.0.1:${PORT};
    location = /vars {
      return 200 "host=$host_sent|first=$first|none=$none|port=$port_published|upgrade=$upgrade_sent|alt=$alt|chosen=$chosen|hop=$hop|loop=$loop|rid=$rid";
    }
    # A value set from Lua replaces the derived one for the rest of the request (plugins/util.lua does so for Host).
    location = /lua {
      rewrite_by_lua_block { ngx.var.host_sent = "set.by.lua" }
      proxy_set_header Host $host_sent;
      proxy_pass http://127.0.0.1:${BACKEND}/echo;
    }
    # Writes by index (varset.lua through the module's FFI functions), and what may be named.
    location = /ffi {
      rewrite_by_lua_block {
        local ffi = require("ffi")
        local varset = require("portico.varset")
        local r = require("resty.core.base").get_request()
        local C = ffi.C
        local idx = function(n) return tonumber(C.ngx_http_portico_vars_index(n, #n)) end
        if ngx.var.arg_write == "1" then varset.setter("portico_x")(r, "by-index") end
        if ngx.var.arg_write == "buf" then local b = ffi.new("char[5]", "bytes"); varset.setter("portico_x")(r, b, 5) end
        if ngx.var.arg_write == "empty" then varset.setter("portico_x")(r, "") end
        -- Names the module refuses (not Portico's, never read by nginx.conf, no name): -1, and varset.lua writes
        -- through ngx.var's setter instead (which then says what it says of such a name).
        ngx.req.set_header("X-Index", table.concat({ idx("portico_x") >= 0 and "x" or "-", idx("host"), idx("portico_never_read"), idx("portico_"), idx("uri") }, ","))
      }
      proxy_set_header X-Value $portico_x;
      proxy_pass http://127.0.0.1:${BACKEND}/ffi;
    }
    # The router's $host and $uri (router.lua route_set), read where nginx keeps them, next to nginx's own variables.
    location /hu/ {
      content_by_lua_block {
        local ffi = require("ffi")
        pcall(ffi.cdef, [[void ngx_http_portico_vars_host_uri(void *r, const unsigned char **host, size_t *host_len,
          const unsigned char **uri, size_t *uri_len);]])
        local hp, up = ffi.new("const unsigned char *[1]"), ffi.new("const unsigned char *[1]")
        local hl, ul = ffi.new("size_t[1]"), ffi.new("size_t[1]")
        ffi.C.ngx_http_portico_vars_host_uri(require("resty.core.base").get_request(), hp, hl, up, ul)
        ngx.print("host=", ffi.string(hp[0], hl[0]), "|uri=", ffi.string(up[0], ul[0]), "|vhost=", ngx.var.host, "|vuri=", ngx.var.uri)
      }
    }
    # $req_id: the header, when the client sent one (no id is made for that request), else the generated id.
    location = /ids {
      return 200 "id=$req_id";
    }
    # Read twice in one request: one id.
    location = /gen {
      return 200 "id=$gen_id|again=$gen_id";
    }
    location = /loop {
      if ($loop) { return 508; }
      return 200 "ok";
    }
    location = /proxy {
      proxy_http_version 1.1;
      proxy_set_header Host $host_sent;
      proxy_set_header Connection $upgrade_sent;
      proxy_set_header X-Portico-Hop $hop;
      proxy_set_header X-Request-ID $rid;
      proxy_pass http://127.0.0.1:${BACKEND}/echo;
    }
  }
  server {
    listen 127.0.0.1:${BACKEND};
    location = /ffi {
      return 200 "value=$http_x_value|index=$http_x_index";
    }
    location = /echo {
      return 200 "host=$http_host|connection=$http_connection|hop=$http_x_portico_hop|rid=$http_x_request_id";
    }
  }
`;

const start = (http = HTTP): Promise<Nginx> =>
  startNginx({ module: VARS_MODULE, prefix: 'portico-pv-', conf: (dir) => conf(dir, http), dirs, answers: async () => (await sendTo(PORT, 'x.test', '/loop')).status === 200 });
const stop = stopNginx;

const fields = (body: string) => Object.fromEntries(body.split('|').map((kv) => kv.split('=') as [string, string]));

/** An HTTP/1.0 request without a Host header (sendTo always names one): what nginx answers, as text. */
function withoutHost(p: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(PORT, '127.0.0.1', () => s.write(`GET ${p} HTTP/1.0\r\n\r\n`));
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    s.on('error', reject);
  });
}

test('portico_coalesce, portico_if and portico_hop derive their variables from their operands', async () => {
  const n = await start();
  try {
    const plain = fields((await sendTo(PORT, 'App.Example:8080', '/vars')).body);
    assert.equal(plain.host, 'App.Example:8080', 'the Host as sent, port and case kept');
    assert.equal(plain.first, 'fallback', 'both arguments empty: the literal');
    assert.equal(plain.none, '', 'every operand empty: empty');
    assert.equal(plain.port, '80', 'plaintext: the else operand');
    assert.equal(plain.upgrade, '', 'no Upgrade header: empty');
    assert.equal(plain.alt, '', 'test empty, no else operand: empty');
    assert.equal(plain.chosen, '');
    assert.equal(plain.hop, ID, 'no X-Portico-Hop: the id alone');
    assert.equal(plain.loop, '');
    assert.equal(plain.rid, '');

    const some = fields((await sendTo(PORT, 'a.test', '/vars?b=second&route=r1&served=canary&t=1&then=yes&else=no&gen=g1', { headers: { upgrade: 'websocket', 'x-portico-hop': 'ffff000011112222' } })).body);
    assert.equal(some.first, 'second', 'the first non-empty operand');
    assert.equal(some.upgrade, 'upgrade');
    assert.equal(some.alt, 'canary', 'test set: the then operand');
    assert.equal(some.chosen, 'yes');
    assert.equal(some.hop, `ffff000011112222, ${ID}`, 'another installation in front: appended');
    assert.equal(some.loop, '', "another installation's id is not this one's");
    assert.equal(some.rid, 'g1', 'no X-Request-ID: the generated one');

    const first = fields((await sendTo(PORT, 'a.test', '/vars?a=first&b=second&t=&then=yes&else=no', { headers: { 'x-request-id': 'client-id' } })).body);
    assert.equal(first.first, 'first');
    assert.equal(first.chosen, 'no', 'test empty: the else operand');
    assert.equal(first.rid, 'client-id', "the client's X-Request-ID first");

    // HTTP/1.0 without a Host: nginx's $host (the server name, empty for this server) — never an error.
    const raw = await withoutHost('/vars');
    assert.match(raw, /^HTTP\/1\.1 200/);
    assert.match(raw, /host=\|first=fallback/);
  } finally {
    await stop(n);
  }
});

test('portico_hop: $loop is "1" only when the id is one whole entry of the header', async () => {
  const n = await start();
  try {
    const loops = async (hop: string) => (await sendTo(PORT, 'a.test', '/loop', { headers: { 'x-portico-hop': hop } })).status;
    for (const hop of [ID, `aaaa, ${ID}`, `${ID}, aaaa`, `aaaa,${ID},bbbb`, `aaaa ${ID}`, `x${ID}, ${ID}`]) assert.equal(await loops(hop), 508, `looped: ${hop}`);
    for (const hop of [`x${ID}`, `${ID}x`, `${ID.slice(1)}`, `aaaa, ${ID}0`, `${ID.toUpperCase()}`, 'aaaa']) assert.equal(await loops(hop), 200, `not looped: ${hop}`);
  } finally {
    await stop(n);
  }
});

test('a value set from Lua replaces the derived one; the proxied headers carry the derived values', async () => {
  const n = await start();
  try {
    assert.equal(fields((await sendTo(PORT, 'a.test', '/lua')).body).host, 'set.by.lua');
    const up = fields((await sendTo(PORT, 'b.test:81', '/proxy', { headers: { 'x-portico-hop': 'aaaa' } })).body);
    assert.equal(up.host, 'b.test:81');
    assert.equal(up.connection, '', 'an empty Connection value is not sent');
    assert.equal(up.hop, `aaaa, ${ID}`);
    assert.equal(up.rid, '', 'an empty X-Request-ID is not sent');
    const ws = fields((await sendTo(PORT, 'b.test', '/proxy', { headers: { upgrade: 'websocket', 'x-request-id': 'r-1' } })).body);
    assert.equal(ws.connection, 'upgrade');
    assert.equal(ws.rid, 'r-1');
    assert.equal(ws.hop, ID);
  } finally {
    await stop(n);
  }
});

test('the router\'s host and URI: nginx\'s $host (lower-cased, no port; the server name without a Host) and normalized $uri', async () => {
  const n = await start();
  try {
    const named = fields((await sendTo(PORT, 'App.Example:8080', '/hu/a/../b%41')).body);
    assert.deepEqual(named, { host: 'app.example', uri: '/hu/bA', vhost: 'app.example', vuri: '/hu/bA' });
    const text = await withoutHost('/hu/x');
    const none = fields(text.slice(text.indexOf('\r\n\r\n') + 4));
    assert.equal(none.uri, '/hu/x', text);
    assert.equal(none.host, none.vhost, 'no Host header: the server name, as $host');
  } finally {
    await stop(n);
  }
});

// portico_proxy_header: an upstream wrapped by portico_peer_handoff (nginx's round-robin inside: a refusing port, then
// the backend), whose echo answers with the headers it received (a header sent twice shows as MULTI:) and the body.
const DEAD = 31992;
/** The echo's fields (values may hold "="). */
const echoed = (body: string) => Object.fromEntries(body.split('|').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const PROXY_HEADERS = `
  lua_package_path "${ASSETS_LUA}/?.lua;/usr/share/lua/5.1/?.lua;;";
  upstream wrapped { server 127.0.0.1:${DEAD}; server 127.0.0.1:${BACKEND}; portico_peer_handoff; }
  proxy_http_version 1.1;
  proxy_set_header X-Test "";
  portico_proxy_header X-Test $arg_t;
  proxy_set_header X-Empty "";
  portico_proxy_header X-Empty $arg_none;
  proxy_set_header X-Real-IP "";
  portico_proxy_header X-Real-IP $remote_addr;
  server {
    listen 127.0.0.1:${PORT};
    location = /ready { return 200; }
    location / { add_header X-Up $upstream_addr always; proxy_pass http://wrapped; }
    location /stream/ { proxy_request_buffering off; proxy_pass http://wrapped; }
    location /own/ { portico_proxy_header off; proxy_set_header X-Own yes; proxy_pass http://wrapped; }
    location /lua/ {
      set $bad "";
      rewrite_by_lua_block { ngx.var.bad = "a\\r\\nX-Evil: 1" }
      portico_proxy_header X-Bad $bad;
      proxy_pass http://wrapped;
    }
    location /grpc/ { grpc_pass grpc://wrapped; }
  }
  server {
    listen 127.0.0.1:${BACKEND};
    location / {
      content_by_lua_block {
        ngx.req.read_body()
        local h = ngx.req.get_headers()
        local function one(v) if type(v) == "table" then return "MULTI:" .. table.concat(v, ",") end return v or "-" end
        ngx.print("test=", one(h["x-test"]), "|empty=", one(h["x-empty"]), "|realip=", one(h["x-real-ip"]), "|own=", one(h["x-own"]),
          "|evil=", one(h["x-evil"]), "|client=", one(h["x-client"]), "|body=", ngx.req.get_body_data() or "-",
          "|uri=", ngx.var.request_uri, "|raw=", ngx.encode_base64(ngx.req.raw_header()))
      }
    }
  }
`;

test('portico_proxy_header: one line per set value, the client\'s own replaced, written once across retries, bodies intact', async () => {
  const n = await startNginx({ module: VARS_MODULE, prefix: 'portico-pv-ph-', conf: (dir) => conf(dir, PROXY_HEADERS), dirs, answers: async () => (await sendTo(PORT, 'x.test', '/ready')).status === 200 });
  try {
    const sent = { 'x-test': 'from-client', 'x-real-ip': '192.0.2.9', 'x-empty': 'client-empty', 'x-client': 'kept' };
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await sendTo(PORT, 'a.test', `/get/${i}?t=v${i}`, { headers: sent }));
    for (const [i, a] of answers.entries()) {
      assert.equal(a.status, 200, a.body);
      const f = echoed(a.body);
      assert.deepEqual([f.test, f.empty, f.realip, f.client, f.uri], [`v${i}`, '-', '127.0.0.1', 'kept', `/get/${i}?t=v${i}`], a.body);
    }
    // The refusing port was tried first at least once: that request was sent again, with its lines once.
    assert.ok(answers.some((a) => a.headers['x-up'] === `127.0.0.1:${DEAD}, 127.0.0.1:${BACKEND}`), answers.map((a) => a.headers['x-up']).join(' / '));
    // The lines go at the end of the header block, before the empty line; the request body follows untouched.
    const post = await sendTo(PORT, 'a.test', '/post?t=p', { method: 'POST', body: 'hello' });
    const pf = echoed(post.body);
    assert.equal(pf.body, 'hello');
    const raw = Buffer.from(pf.raw as string, 'base64').toString('utf8');
    assert.match(raw, /^POST \/post\?t=p HTTP\/1\.1\r\n/);
    assert.ok(raw.endsWith('\r\nX-Test: p\r\nX-Real-IP: 127.0.0.1\r\n\r\n'), JSON.stringify(raw));
    // A body streamed to the backend (proxy_request_buffering off, chunked): the header block is still the first buffer.
    const chunked = await sendTo(PORT, 'a.test', '/stream/x?t=s', { method: 'POST', body: 'chunky', headers: { 'transfer-encoding': 'chunked' } });
    assert.deepEqual([echoed(chunked.body).test, echoed(chunked.body).body], ['s', 'chunky'], chunked.body);
    // "off": the location's own list only; nothing of the http level's (not even its suppressions).
    const own = echoed((await sendTo(PORT, 'a.test', '/own/x?t=v', { headers: sent })).body);
    assert.deepEqual([own.own, own.test, own.realip], ['yes', 'from-client', '192.0.2.9']);
    assert.equal(n.stderr.join('').match(/\[(?:error|crit|alert|emerg)\]/)?.[0], undefined, n.stderr.join('').slice(0, 300));
  } finally {
    await stop(n);
  }
});

test('portico_proxy_header: a value with a line break, or a request that is not HTTP/1, is never proxied (500 and why)', async () => {
  const n = await startNginx({ module: VARS_MODULE, prefix: 'portico-pv-ph-', conf: (dir) => conf(dir, PROXY_HEADERS), dirs, answers: async () => (await sendTo(PORT, 'x.test', '/ready')).status === 200 });
  try {
    const bad = await sendTo(PORT, 'a.test', '/lua/x?t=v');
    assert.equal(bad.status, 500, bad.body);
    assert.doesNotMatch(bad.body, /evil=/, 'the backend was never asked');
    const grpc = await sendTo(PORT, 'a.test', '/grpc/x?t=v');
    assert.equal(grpc.status, 500, grpc.body);
    const log = () => readFileSync(path.join(n.dir, 'error.log'), 'utf8');
    assert.match(log(), /the value of the proxied header "X-Bad" holds a line break or NUL: the request is not proxied/);
    assert.match(log(), /portico_proxy_header needs an HTTP\/1 request built by proxy_pass/);
  } finally {
    await stop(n);
  }
});

test('varset.lua writes Portico\'s variables by index; other names, and names nginx.conf never reads, have none', async () => {
  const n = await start();
  try {
    assert.deepEqual(fields((await sendTo(PORT, 'a.test', '/ffi')).body), { value: 'derived', index: 'x,-1,-1,-1,-1' }, 'not written: derived; only portico_x has an index here');
    assert.equal(fields((await sendTo(PORT, 'a.test', '/ffi?write=1')).body).value, 'by-index');
    assert.equal(fields((await sendTo(PORT, 'a.test', '/ffi?write=buf')).body).value, 'bytes', 'from an FFI buffer');
    assert.equal(fields((await sendTo(PORT, 'a.test', '/ffi?write=empty')).body).value, '', 'written empty: no header');
    assert.equal(n.stderr.join('').match(/\[(?:error|crit|alert|emerg)\]/)?.[0], undefined, `no error logged: ${n.stderr.join('').slice(0, 300)}`);
  } finally {
    await stop(n);
  }
});

test('portico_request_id: 32 lower-case hex characters, one per request, the worker\'s prefix then its counter; made only when read', async () => {
  const n = await start();
  try {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const f = fields((await sendTo(PORT, 'a.test', i % 2 ? '/ids' : '/gen')).body);
      assert.match(f.id as string, /^[0-9a-f]{32}$/);
      if (i % 2 === 0) assert.equal(f.again, f.id, 'one id per request, however often read');
      ids.push(f.id as string);
    }
    assert.equal(new Set(ids.map((x) => x.slice(0, 16))).size, 1, 'one prefix per worker');
    const counters = ids.map((x) => BigInt(`0x${x.slice(16)}`));
    for (let i = 1; i < counters.length; i++) assert.ok(counters[i]! > counters[i - 1]!, `the counter grows: ${ids.join(' ')}`);
    // A request with its own X-Request-ID keeps it, and makes no id: the next generated one follows the last.
    assert.equal(fields((await sendTo(PORT, 'a.test', '/ids', { headers: { 'x-request-id': 'client-id' } })).body).id, 'client-id');
    const next = fields((await sendTo(PORT, 'a.test', '/ids')).body).id as string;
    assert.equal(BigInt(`0x${next.slice(16)}`), counters[counters.length - 1]! + 1n, 'no id was made for the request that brought one');
  } finally {
    await stop(n);
  }
  // Another worker process (here: another nginx) draws another prefix.
  const m = await start();
  try {
    const a = fields((await sendTo(PORT, 'a.test', '/ids')).body).id as string;
    const b = fields((await sendTo(PORT, 'a.test', '/ids')).body).id as string;
    assert.equal(a.slice(0, 16), b.slice(0, 16));
    assert.equal(BigInt(`0x${a.slice(16)}`), 1n, 'the counter starts at 1 in each worker');
  } finally {
    await stop(m);
  }
});

test('configuration errors are refused by nginx -t with the reason', () => {
  const cases: [string, RegExp][] = [
    ['portico_coalesce $a $b $c; map $x $a { default 1; }', /duplicate|already defined/],
    ['map $x $a { default 1; } portico_coalesce $a $b;', /variable "a" is already defined/],
    ['portico_coalesce $a $b; portico_if $a $b c;', /variable "a" is already defined/],
    ['portico_coalesce a $b;', /"a": the result must be a variable/],
    ['portico_coalesce $a "x$b";', /"x\$b": an operand is a literal or one variable/],
    ['portico_coalesce $a "${b}";', /an operand is a literal or one variable/],
    ['portico_coalesce $a $b-c;', /"\$b-c": an operand is a literal or one variable/],
    ['portico_coalesce $a;', /invalid number of arguments/],
    ['portico_if $a $b;', /invalid number of arguments/],
    ['portico_if $a $b c d e;', /invalid number of arguments/],
    ['portico_hop $h $l $http_x_portico_hop "";', /portico_hop: the id is empty/],
    ['portico_hop $h $l $http_x_portico_hop "a b";', /portico_hop: "a b" is not a header list entry/],
    ['portico_hop $h $l $http_x_portico_hop a,b;', /portico_hop: "a,b" is not a header list entry/],
    ['portico_coalesce $a $never_defined; server { listen 127.0.0.1:31990; return 200 $a; }', /unknown "never_defined" variable/],
    ['portico_proxy_header X-A b;', /"b": the value is one variable/],
    ['portico_proxy_header X-A "x$b";', /the value is one variable/],
    ['portico_proxy_header "X A" $b;', /"X A" is not a header name/],
    ['portico_proxy_header X-A: $b;', /"X-A:" is not a header name/],
    ['portico_proxy_header on;', /takes a header name and one variable/],
    ['portico_proxy_header off; portico_proxy_header X-A $b;', /"off" is not alone at this level/],
    ['portico_proxy_header X-A $b; portico_proxy_header off;', /"off" is not alone at this level/],
    ['portico_proxy_header X-A $b $c;', /invalid number of arguments/],
  ];
  for (const [http, reason] of cases) {
    const dir = mkdtempSync(path.join(tmpdir(), 'portico-pv-t-'));
    dirs.push(dir);
    writeFileSync(path.join(dir, 'nginx.conf'), conf(dir, `  ${http}`));
    const r = spawnSync('nginx', ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'], { encoding: 'utf8' });
    assert.notEqual(r.status, 0, `refused: ${http}`);
    assert.match(r.stderr, reason, http);
  }
  // And the valid forms pass.
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-pv-t-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'nginx.conf'), conf(dir, HTTP));
  const ok = spawnSync('nginx', ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'], { encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
});

test('portico_header_if_set: the header when the variable is set, on every status, replacing a backend\'s; none when empty', async () => {
  const n = await start(`
  server {
    listen 127.0.0.1:${PORT};
    portico_header_if_set Strict-Transport-Security $arg_hsts;
    location = /loop { return 200 "ok"; }
    location = /missing { return 404; }
    location = /own { proxy_pass http://127.0.0.1:${BACKEND}/own; }
  }
  server {
    listen 127.0.0.1:${BACKEND};
    location = /own { add_header Strict-Transport-Security "max-age=1" always; add_header X-Other kept; return 200 "own"; }
  }
`);
  try {
    const raw = (a: { headers: import('node:http').IncomingHttpHeaders }) => a.headers['strict-transport-security'];
    assert.equal(raw(await sendTo(PORT, 'a.test', '/loop?hsts=max-age%3D5')), 'max-age%3D5', 'the variable as it is');
    assert.equal(raw(await sendTo(PORT, 'a.test', '/loop')), undefined, 'empty: no header');
    const missing = await sendTo(PORT, 'a.test', '/missing?hsts=x');
    assert.equal(missing.status, 404);
    assert.equal(raw(missing), 'x', 'on an error status too (as add_header ... always)');
    const own = await sendTo(PORT, 'a.test', '/own?hsts=mine');
    assert.equal(raw(own), 'mine', "the backend's header is replaced, not repeated");
    assert.equal(own.headers['x-other'], 'kept');
    assert.equal(raw(await sendTo(PORT, 'a.test', '/own')), 'max-age=1', "empty: the backend's header stays");
  } finally {
    await stop(n);
  }
  // Refused at load: a name that is not a token, a value that is not a variable.
  for (const [line, err] of [['portico_header_if_set "Bad Name" $arg_x;', /invalid header name/], ['portico_header_if_set X-Y value;', /is not a variable/]] as const) {
    const dir = mkdtempSync(path.join(tmpdir(), 'portico-pv-bad-'));
    dirs.push(dir);
    writeFileSync(path.join(dir, 'nginx.conf'), conf(dir, `server { listen 127.0.0.1:${PORT}; ${line} }`));
    const t = spawnSync('nginx', ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'], { encoding: 'utf8' });
    assert.notEqual(t.status, 0, line);
    assert.match(t.stderr, err);
  }
});

test('peer_handoff.lua: an endpoint\'s binary address and nginx\'s name for it (IPv4, IPv6 in brackets); none for what is not an IP', async () => {
  const n = await start(`
  lua_package_path "${ASSETS_LUA}/?.lua;/usr/share/lua/5.1/?.lua;;";
  server {
    listen 127.0.0.1:${PORT};
    location = /loop { return 200 "ok"; }
    location = /addr {
      content_by_lua_block {
        local hand = require("portico.peer_handoff")
        local out = {}
        for _, c in ipairs({ { "198.51.100.7", 80 }, { "[2001:db8::1]", 8080 }, { "2001:db8::2", 443 }, { "example.com", 80 },
                             { "198.51.100.7", 0 }, { "198.51.100.7", 65536 }, { "198.51.100.256", 80 } }) do
          local sa, name = hand.addr(c[1], c[2])
          out[#out + 1] = sa and (name .. "/" .. #sa) or "none"
        end
        ngx.say(table.concat(out, " "))
      }
    }
  }
`);
  try {
    const body = (await sendTo(PORT, 'a.test', '/addr')).body.trim();
    assert.equal(body, '198.51.100.7:80/16 [2001:db8::1]:8080/28 [2001:db8::2]:443/28 none none none none');
  } finally {
    await stop(n);
  }
});
