// Portico's upstream_ssl module in Debian's nginx, configuration only: what `nginx -t` accepts and refuses, with the
// reason nginx prints. (What it does to handshakes is tested through the whole data plane in
// reconcilers/nginx-driver/nginx/backend-tls-san.nginx.test.ts.) nginx -t binds port 35406 on loopback and tolerates
// it being in use; nothing connects anywhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UPSTREAM_SSL_MODULE } from '../../../reconcilers/nginx-driver/nginx/runtime.ts';
import { makeCa } from '../../../reconcilers/translate/pki.test-helpers.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'portico-upstream-ssl-'));
const ca = makeCa(dir, 'ca');
const TRUST = `portico_upstream_ssl_trusted_certificate ${ca.certFile};`;

/** nginx -t on an http{} block of `http`: whether it passes, and what nginx printed. */
function check(http: string): { ok: boolean; out: string } {
  assert.ok(existsSync(UPSTREAM_SSL_MODULE), `${UPSTREAM_SSL_MODULE} is built (make deps, or bash nginx-assets/modules/build.sh)`);
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(conf, `load_module ${UPSTREAM_SSL_MODULE};\npid ${dir}/nginx.pid;\nerror_log stderr;\nevents {}\nhttp {\n${http}\n}\n`);
  const r = spawnSync('nginx', ['-t', '-q', '-p', dir, '-c', conf, '-e', 'stderr'], { encoding: 'utf8', timeout: 20_000 });
  return { ok: r.status === 0, out: `${r.stderr}${r.stdout}` };
}
const server = (body: string) => `server { listen 127.0.0.1:35406; ${body} }`;

test('accepted: names in a location proxying over TLS (proxy_pass https://, grpc_pass grpcs://); names set on the server, inherited by its locations', () => {
  for (const http of [
    server(`location / { proxy_pass https://127.0.0.1:1; proxy_ssl_server_name on; proxy_ssl_name sni.example.com; portico_upstream_ssl_verify_names DNS:abc.example.com "URI:spiffe://abc.example.com/x" DNS:*.wild.example.com; ${TRUST} portico_upstream_ssl_verify_depth 3; }`),
    server(`location / { grpc_pass grpcs://127.0.0.1:1; portico_upstream_ssl_verify_names URI:spiffe://abc.example.com/x; ${TRUST} }`),
    server(`portico_upstream_ssl_verify_names DNS:abc.example.com; ${TRUST} location /a { proxy_pass https://127.0.0.1:1; } location /b { return 200; }`),
    server(`location / { proxy_pass https://127.0.0.1:1; portico_upstream_ssl_verify_names DNS:abc.example.com; ${TRUST} if ($arg_x) { return 404; } }`),
  ]) {
    const r = check(http);
    assert.ok(r.ok, `${http}\n${r.out}`);
  }
});

test('refused, with the reason: malformed names, no CA file, proxy_ssl_verify on (also under names inherited), a location without TLS, names in an if{} block', () => {
  const refused: [string, RegExp][] = [
    [server(`location / { proxy_pass https://127.0.0.1:1; portico_upstream_ssl_verify_names DNS:ABC.example.com; ${TRUST} }`), /invalid name "DNS:ABC\.example\.com"/],
    [server(`location / { proxy_pass https://127.0.0.1:1; portico_upstream_ssl_verify_names DNS:a..example.com; ${TRUST} }`), /invalid name/],
    [server(`location / { proxy_pass https://127.0.0.1:1; portico_upstream_ssl_verify_names DNS:-a.example.com; ${TRUST} }`), /invalid name/],
    [server(`location / { proxy_pass https://127.0.0.1:1; portico_upstream_ssl_verify_names URI:spiffe; ${TRUST} }`), /invalid name "URI:spiffe"/],
    [server(`location / { proxy_pass https://127.0.0.1:1; portico_upstream_ssl_verify_names "URI:spiffe://a b"; ${TRUST} }`), /invalid name/],
    [server(`location / { proxy_pass https://127.0.0.1:1; portico_upstream_ssl_verify_names abc.example.com; ${TRUST} }`), /invalid name "abc\.example\.com"/],
    [server(`location / { proxy_pass https://127.0.0.1:1; portico_upstream_ssl_verify_names ${Array.from({ length: 17 }, (_, i) => `DNS:h${i}.example.com`).join(' ')}; ${TRUST} }`), /takes at most 16 names/],
    [server('location / { proxy_pass https://127.0.0.1:1; portico_upstream_ssl_verify_names DNS:abc.example.com; }'), /has no "portico_upstream_ssl_trusted_certificate"/],
    [server(`location / { proxy_pass https://127.0.0.1:1; proxy_ssl_verify on; proxy_ssl_trusted_certificate ${ca.certFile}; portico_upstream_ssl_verify_names DNS:abc.example.com; ${TRUST} }`), /"proxy_ssl_verify" must be off/],
    [server(`location / { grpc_pass grpcs://127.0.0.1:1; grpc_ssl_verify on; grpc_ssl_trusted_certificate ${ca.certFile}; portico_upstream_ssl_verify_names DNS:abc.example.com; ${TRUST} }`), /"grpc_ssl_verify" must be off/],
    [server(`location / { proxy_pass http://127.0.0.1:1; portico_upstream_ssl_verify_names DNS:abc.example.com; ${TRUST} }`), /proxies over no TLS/],
    [server(`location / { proxy_pass https://127.0.0.1:1; portico_upstream_ssl_verify_names DNS:abc.example.com; ${TRUST} if ($arg_x) { portico_upstream_ssl_verify_names DNS:other.example.com; } }`), /"portico_upstream_ssl_verify_names" directive is not allowed here/],
    [server(`portico_upstream_ssl_verify_names DNS:abc.example.com; ${TRUST} location / { proxy_pass https://127.0.0.1:1; proxy_ssl_verify on; proxy_ssl_trusted_certificate ${ca.certFile}; }`), /"proxy_ssl_verify" must be off/],
    [server(`location / { proxy_pass https://127.0.0.1:1; portico_upstream_ssl_verify_names DNS:abc.example.com; portico_upstream_ssl_trusted_certificate ${dir}/missing.pem; }`), /missing\.pem/],
  ];
  for (const [http, why] of refused) {
    const r = check(http);
    assert.equal(r.ok, false, http);
    assert.match(r.out, why, http);
  }
});
