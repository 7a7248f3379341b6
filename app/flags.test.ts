import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig, flagsMarkdown } from './flags.ts';
import { microTime } from '../operator/events.ts';

test('defaults, flags and env', () => {
  const c = parseConfig([], {});
  assert.equal(c['http-port'], 8080);
  assert.equal(c['lease-duration'], 15_000);
  assert.deepEqual(c['health-addr'], { host: '127.0.0.1', port: 10254 });
  const d = parseConfig(['--http-port', '9090', '--sync-quiet=20ms', '--leader-elect', 'false'], { PORTICO_HTTPS_PORT: '9443' });
  assert.equal(d['http-port'], 9090);
  assert.equal(d['https-port'], 9443);
  assert.equal(d['sync-quiet'], 20);
  assert.equal(d['leader-elect'], false);
  assert.equal(parseConfig(['--watch-ingress-without-class'], {})['watch-ingress-without-class'], true);
});

test('bad flags give one specific line', () => {
  assert.throws(() => parseConfig(['--http-port', 'x'], {}), (e: Error) => e instanceof ConfigError && /--http-port/.test(e.message));
  assert.throws(() => parseConfig(['--nope'], {}), /unknown flag --nope/);
  assert.throws(() => parseConfig(['--configmap', 'no-slash'], {}), /namespace\/name/);
  assert.throws(() => parseConfig(['--lease-duration', '5s'], {}), /lease-duration > --renew-deadline/);
  assert.throws(() => parseConfig(['--kubeconfig'], {}), /needs a value/);
});

test('flag reference lists every flag', () => {
  const md = flagsMarkdown();
  assert.match(md, /`--configmap`/);
  assert.match(md, /PORTICO_HTTP_PORT/);
});

test('microTime has exactly six fractional digits', () => {
  assert.match(microTime(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 6) + 0.789), '2026-01-02T03:04:05.006789Z');
});

test('API client rate limit flags: controller-runtime defaults, positive values only', () => {
  const c = parseConfig([], {});
  assert.equal(c['kube-api-qps'], 20);
  assert.equal(c['kube-api-burst'], 30);
  const d = parseConfig(['--kube-api-qps', '2.5'], { PORTICO_KUBE_API_BURST: '5' });
  assert.equal(d['kube-api-qps'], 2.5);
  assert.equal(d['kube-api-burst'], 5);
  assert.throws(() => parseConfig(['--kube-api-qps', '0'], {}), /--kube-api-qps/);
  assert.throws(() => parseConfig(['--kube-api-burst', '1.5'], {}), /--kube-api-burst/);
  assert.throws(() => parseConfig(['--kube-api-burst', 'lots'], {}), /--kube-api-burst/);
});

test('ingress-nginx flag names: accepted where the meaning is the same, refused with a reason otherwise', () => {
  const c = parseConfig(['--watch-namespace', 'apps', '--update-status=false', '--update-status-on-shutdown', '--ingress-class-by-name', '--healthz-port', '10300', '--annotations-prefix', 'nginx.ingress.kubernetes.io', '--tcp-services-configmap', 'ingress-nginx/tcp', '--udp-services-configmap=ingress-nginx/udp'], {});
  assert.equal(c['watch-namespace'], 'apps');
  assert.equal(c['update-status'], false);
  assert.equal(c['update-status-on-shutdown'], true);
  assert.equal(c['ingress-class-by-name'], true);
  assert.deepEqual(c['health-addr'], { host: '127.0.0.1', port: 10300 });
  assert.equal(c['tcp-services-configmap'], 'ingress-nginx/tcp');
  assert.equal(c['udp-services-configmap'], 'ingress-nginx/udp');
  const d = parseConfig([], {});
  assert.equal(d['watch-namespace'], '');
  assert.equal(d['update-status'], true);
  assert.equal(d['update-status-on-shutdown'], false, 'Portico keeps addresses on shutdown by default (documented)');
  assert.equal(d['enable-ssl-passthrough'], false);
  // --enable-ssl-passthrough: off by default (as ingress-nginx), a plain boolean flag; its port flag has no meaning here.
  assert.equal(parseConfig(['--enable-ssl-passthrough'], {})['enable-ssl-passthrough'], true);
  assert.equal(parseConfig([], { PORTICO_ENABLE_SSL_PASSTHROUGH: 'true' })['enable-ssl-passthrough'], true);
  assert.equal(parseConfig(['--enable-ssl-passthrough=false'], {})['enable-ssl-passthrough'], false);
  assert.throws(() => parseConfig(['--enable-ssl-passthrough=yes'], {}), /invalid --enable-ssl-passthrough/);
  // Accepted since issue 21 (was refused): it changes nothing and is logged at start with why.
  assert.deepEqual(parseConfig(['--ssl-passthrough-proxy-port', '442'], {}).noEffect.map((n) => n.flag), ['ssl-passthrough-proxy-port']);
  assert.throws(() => parseConfig(['--annotations-prefix', 'custom.example.com'], {}), /--annotations-prefix.*nginx\.ingress\.kubernetes\.io/);
  assert.throws(() => parseConfig(['--watch-namespace', 'Bad_NS'], {}), /--watch-namespace/);
  assert.throws(() => parseConfig(['--tcp-services-configmap', 'no-slash'], {}), /--tcp-services-configmap.*namespace\/name/);
  // Accepted since issue 21 (was refused): see the default-backend-service tests.
  assert.equal(parseConfig(['--default-backend-service', 'ns/svc'], {})['default-backend-service'], 'ns/svc');
  assert.throws(() => parseConfig(['--v=2'], {}), /unknown flag --v: .*--log-level/);
  assert.throws(() => parseConfig(['--made-up'], {}), /^Error: unknown flag --made-up$|unknown flag --made-up$/);
});
