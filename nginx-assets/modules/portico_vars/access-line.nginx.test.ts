// portico_access_line against nginx's own log module: one nginx writes every request twice, once with ingress-nginx's
// default format through the log module (escape=default) and once as `$portico_access_line` (escape=none), and the
// two files must be identical, byte for byte. The requests cover what the line's fields can hold: bytes the log
// module escapes in headers and in the request line, a Basic user, a header sent empty, no upstream at all, a failed
// attempt then a second peer (", "), an internal redirect to another upstream (" : "), a request nginx refuses before
// reading headers, HTTP/0.9 and HTTP/1.0. Traffic only to loopback: nginx listens on 31992 (logged), 31993 and 31995
// (backends, not logged); 31994 is a closed port (the failed attempt).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { until } from '../../../e2e/harness/http.ts';
import { VARS_MODULE } from '../../../reconcilers/nginx-driver/nginx/runtime.ts';
import { DEFAULT_LOG_FORMAT_UPSTREAM } from '../../../reconcilers/nginx-driver/nginx/render.ts';
import { startNginx, stopNginx } from '../nginx.test-helpers.ts';

const PORT = 31992;
const BACKEND = 31993;
const CLOSED = 31994;
const SECOND = 31995;
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const conf = (dir: string) => `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
load_module ${VARS_MODULE};
events { worker_connections 64; }
http {
  access_log off;
  log_format native '${DEFAULT_LOG_FORMAT_UPSTREAM}';
  log_format line escape=none '$portico_access_line';
  portico_access_line $portico_access_line;
  portico_request_id $gen;
  portico_coalesce $req_id $http_x_request_id $gen;
  portico_coalesce $proxy_upstream_name $arg_up;
  portico_if $proxy_alternative_upstream_name $arg_alt $arg_alt;
  upstream retry { server 127.0.0.1:${CLOSED}; server 127.0.0.1:${BACKEND}; }
  server {
    listen 127.0.0.1:${PORT};
    access_log ${dir}/native.log native;
    access_log ${dir}/line.log line;
    location /p/ { proxy_pass http://127.0.0.1:${BACKEND}; }
    location /retry/ { proxy_pass http://retry; }
    location /redirect/ {
      proxy_pass http://127.0.0.1:${BACKEND}/missing;
      proxy_intercept_errors on;
      error_page 404 = @second;
    }
    location @second { proxy_pass http://127.0.0.1:${SECOND}; }
    location /local { return 200 "local\\n"; }
  }
  server {
    listen 127.0.0.1:${BACKEND};
    location / { return 200 "backend\\n"; }
    location /missing { return 404; }
  }
  server { listen 127.0.0.1:${SECOND}; location / { return 201 "second\\n"; } }
}
`;

/** Sends raw bytes on a connection of its own and reads until nginx closes it. */
function raw(bytes: Buffer | string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(PORT, '127.0.0.1');
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    s.on('error', reject);
    // Written, not ended: a client that half-closes is one that went away (nginx answers 499 to a proxied request).
    s.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  });
}

// 0x01-0xff but CR and LF (which end a header); a leading space or tab would be trimmed, so it starts with 'x'.
const ALL_BYTES = 'x' + Array.from({ length: 255 }, (_, i) => String.fromCharCode(i + 1)).filter((c) => c !== '\r' && c !== '\n').join('');

const get = (target: string, headers: string[] = [], version = 'HTTP/1.1') =>
  raw(`GET ${target} ${version}\r\nHost: line.test\r\nConnection: close\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`);

test('portico_access_line writes what the log module writes for ingress-nginx\'s default format', async () => {
  const n = await startNginx({ module: VARS_MODULE, prefix: 'portico-line-', conf, dirs, answers: async () => (await get('/local')).includes(' 200 ') });
  try {
    const read = (f: string) => {
      try {
        return readFileSync(path.join(n.dir, f), 'latin1');
      } catch {
        return '';
      }
    };
    // The requests that found nginx serving are logged too: these lines come after them.
    const lines = (f: string) => read(f).split('\n').slice(0, -1);
    await until('the start-up requests are logged', () => lines('native.log').length > 0 && lines('line.log').length === lines('native.log').length, 10_000);
    const skip = lines('native.log').length;
    const nasty = 'q"uo\\te\ttab\x01ctl\x7fdel\xe9latin';
    const answers = [
      await get('/p/a?up=ns-svc-80&alt=ns-canary-80', ['User-Agent: curl/8.0', 'Referer: https://ref.test/x', 'X-Request-ID: client-id-1']),
      await get(`/p/b?up=u"p\\x`, [`User-Agent: ${nasty}`, `Referer: ${nasty}`]),
      await get('/p/c', ['Authorization: Basic ' + Buffer.from('alice:secret').toString('base64'), 'User-Agent:']),
      await get('/local?up=x'),
      await get('/retry/d', ['User-Agent: retry']),
      await get('/redirect/e', ['User-Agent: redirect']),
      await get('/p/f', [], 'HTTP/1.0'),
      await raw('GET /local\r\n'),
      await raw('NOT A REQUEST\r\n\r\n'),
      await get('/p/' + 'x'.repeat(3000), ['User-Agent: ' + '\xff'.repeat(2000)]),
      // Every byte a header value may hold, at every offset within a word of eight (the module tests eight at once).
      ...(await Promise.all(Array.from({ length: 8 }, (_, k) => get(`/p/all${k}`, [`User-Agent: ${'a'.repeat(k)}${ALL_BYTES}`, `Referer: ${ALL_BYTES}${'b'.repeat(k)}`])))),
    ];
    assert.match(answers[0] ?? '', /^HTTP\/1\.1 200/);
    assert.match(answers[4] ?? '', /^HTTP\/1\.1 200/, 'the retry reached the second peer');
    assert.match(answers[5] ?? "", /^HTTP\/1\.1 201/, `the redirect reached the second upstream: ${JSON.stringify(answers[5])}`);
    // The log is written once the response is: wait until both files hold a line per request.
    await until('both logs hold every request', () => lines('native.log').length >= skip + answers.length && lines('line.log').length >= skip + answers.length, 10_000);
    assert.equal(read('line.log'), read('native.log'), 'the two files are identical');
    const native = lines('native.log').slice(skip);
    assert.equal(native.length, answers.length);
    // And the file holds what these requests must show (so that two empty or equally wrong files cannot pass).
    assert.match(native[0] ?? '', /^127\.0\.0\.1 - - \[[^\]]+\] "GET \/p\/a\?up=ns-svc-80&alt=ns-canary-80 HTTP\/1\.1" 200 8 "https:\/\/ref\.test\/x" "curl\/8\.0" \d+ \d+\.\d{3} \[ns-svc-80\] \[ns-canary-80\] 127\.0\.0\.1:31993 8 \d+\.\d{3} 200 client-id-1$/);
    assert.ok((native[1] ?? '').includes('"q\\x22uo\\x5Cte\\x09tab\\x01ctl\\x7Fdel\\xE9latin"'), native[1]);
    assert.ok((native[1] ?? '').includes('[u\\x22p\\x5Cx]'), native[1]);
    assert.match(native[2] ?? '', /^127\.0\.0\.1 - alice \[.*" 200 8 "-" "" /);
    assert.match(native[3] ?? '', /" 200 6 "-" "-" \d+ \d+\.\d{3} \[x\] \[\] - - - - [0-9a-f]{32}$/);
    assert.match(native[4] ?? '', / 127\.0\.0\.1:31994, 127\.0\.0\.1:31993 0, 8 \d+\.\d{3}, \d+\.\d{3} 502, 200 /);
    assert.match(native[5] ?? '', / 127\.0\.0\.1:31993 : 127\.0\.0\.1:31995 \d+ : 7 \d+\.\d{3} : \d+\.\d{3} 404 : 201 /);
    assert.match(native[6] ?? '', /"GET \/p\/f HTTP\/1\.0" 200 /);
    assert.match(native[7] ?? '', /"GET \/local" 200 /);
    assert.match(native[8] ?? '', /"NOT A REQUEST" 400 /);
    const all = native.slice(10);
    assert.equal(all.length, 8);
    for (const l of all) assert.ok(l.includes('\\x01\\x02') && l.includes('\\x7F\\x80') && l.includes('\\xFF"') && / 200 /.test(l), l);
  } finally {
    await stopNginx(n);
  }
});

test('portico_access_line needs the variables of the format: nginx -t names the one missing', async () => {
  const { spawnSync } = await import('node:child_process');
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-line-t-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'nginx.conf'), `pid ${dir}/nginx.pid; error_log ${dir}/error.log; load_module ${VARS_MODULE};
events {}
http { portico_access_line $line; portico_coalesce $req_id $http_x_request_id; portico_coalesce $proxy_upstream_name $arg_up; }
`);
  const r = spawnSync('nginx', ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'], { encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /unknown "proxy_alternative_upstream_name" variable/);
});
