import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from './flags.ts';
import { INGRESS_NGINX_FLAGS, ingressNginxFlagsMarkdown } from './ingress-nginx-flags.ts';

/**
 * A value of each flag of ingress-nginx v1.15.1 (pkg/flags/flags.go), in its syntax, each differing from its
 * default: the names are the 72 flags declared there, in that order.
 */
const SAMPLES: Record<string, string> = {
  'apiserver-host': 'https://10.0.0.1:6443', 'certificate-authority': '/etc/ca.crt', kubeconfig: '/etc/kubeconfig',
  'default-backend-service': 'ingress-nginx/default-http-backend', 'ingress-class': 'nginx', 'controller-class': 'k8s.io/ingress-nginx',
  'watch-ingress-without-class': 'true', 'ingress-class-by-name': 'true', configmap: 'ingress-nginx/cfg', 'publish-service': 'ingress-nginx/svc',
  'tcp-services-configmap': 'ingress-nginx/tcp', 'udp-services-configmap': 'ingress-nginx/udp', 'sync-period': '10m', 'watch-namespace': 'apps',
  'watch-namespace-selector': 'team=a', profiling: 'false', 'default-ssl-certificate': 'ingress-nginx/tls', 'health-check-path': '/healthz',
  'health-check-timeout': '5', 'update-status': 'false', 'election-id': 'my-leader', 'election-ttl': '40s', 'update-status-on-shutdown': 'true',
  'report-node-internal-ip-address': 'true', version: 'true', 'enable-ssl-passthrough': 'true', 'disable-leader-election': 'true',
  'disable-svc-external-name': 'true', 'annotations-prefix': 'nginx.ingress.kubernetes.io', 'enable-annotation-validation': 'false',
  'enable-ssl-chain-completion': 'true', 'sync-rate-limit': '0.5', 'publish-status-address': '192.0.2.1', 'enable-metrics': 'false',
  'metrics-per-host': 'false', 'metrics-per-undefined-host': 'false', 'report-status-classes': 'true', 'time-buckets': '0.1,1,10',
  'length-buckets': '10,100', 'size-buckets': '100,1000', 'bucket-factor': '1.1', 'max-buckets': '50', 'exclude-socket-metrics': 'nginx_ingress_controller_bytes_sent',
  'monitor-max-batch-size': '500', 'http-port': '8081', 'https-port': '8444', 'ssl-passthrough-proxy-port': '4420', 'default-server-port': '8182',
  'healthz-port': '10255', 'healthz-host': '10.1.2.3', 'disable-catch-all': 'true', 'validating-webhook': ':8445',
  'validating-webhook-certificate': '/usr/local/certificates/cert', 'validating-webhook-key': '/usr/local/certificates/key', 'disable-full-test': 'true',
  'status-port': '10248', 'stream-port': '10249', 'internal-logger-address': '127.0.0.1:11515', 'profiler-port': '10250', 'profiler-address': '127.0.0.2',
  'status-update-interval': '30', 'shutdown-grace-period': '30', 'post-shutdown-grace-period': '5', 'deep-inspect': 'false',
  'dynamic-configuration-retries': '3', 'disable-sync-events': 'true', 'enable-topology-aware-routing': 'true', 'maxmind-mirror': 'http://geoip.local/',
  'maxmind-license-key': 'abc', 'maxmind-edition-ids': 'GeoLite2-City', 'maxmind-retries-count': '2', 'maxmind-retries-timeout': '5s',
};

test('the table has every ingress-nginx v1.15.1 flag, and only those', () => {
  assert.equal(Object.keys(SAMPLES).length, 72);
  assert.deepEqual(Object.keys(INGRESS_NGINX_FLAGS).sort(), Object.keys(SAMPLES).sort());
  for (const [n, f] of Object.entries(INGRESS_NGINX_FLAGS)) assert.ok(f.note.length > 3 && !f.note.includes('\n'), `--${n} has a one-line note`);
});

test('each flag does what its status says: accepted (the no-effect ones reported), or refused with its hint in one line', () => {
  for (const [name, f] of Object.entries(INGRESS_NGINX_FLAGS)) {
    const argv = [`--${name}=${SAMPLES[name]}`];
    // The webhook's three flags go together (the files alone are read by nobody: see the mapped-flags test).
    if (name.startsWith('validating-webhook')) argv.splice(0, 1, '--validating-webhook=:8445', '--validating-webhook-certificate=/c', '--validating-webhook-key=/k', argv[0] as string);
    if (f.status === 'refused') {
      assert.throws(() => parseConfig(argv, {}), (e: Error) => e instanceof ConfigError && !e.message.includes('\n') && e.message.includes(`--${name}`) && e.message.includes(f.note.split(' (')[0] as string), `--${name} refused with its hint`);
      continue;
    }
    const c = parseConfig(argv, {});
    assert.equal(c.noEffect.some((n) => n.flag === name), f.status === 'no-effect', `--${name} ${f.status}: reported as no-effect only if it is`);
  }
});

test('the refused booleans accept "false", ingress-nginx\'s default and what Portico does', () => {
  for (const name of ['report-node-internal-ip-address', 'enable-ssl-chain-completion', 'disable-svc-external-name', 'disable-catch-all', 'disable-sync-events', 'enable-topology-aware-routing']) {
    assert.equal(INGRESS_NGINX_FLAGS[name]?.status, 'refused');
    assert.equal(parseConfig([`--${name}=false`], {})[name as 'disable-catch-all'], false);
    assert.throws(() => parseConfig([`--${name}`], {}), new RegExp(`--${name}`));
  }
  assert.throws(() => parseConfig(['--watch-namespace-selector=team=a'], {}), /unknown flag --watch-namespace-selector: an ingress-nginx flag Portico does not support \(.*--watch-namespace/);
  assert.throws(() => parseConfig(['--maxmind-license-key=x'], {}), /Portico downloads no MaxMind database/);
  assert.throws(() => parseConfig(['--health-check-path=/ping'], {}), /--health-check-path.*only \/healthz/);
});

test('the ingress-nginx chart\'s default Deployment arguments (controller-v1.15.1, release and namespace ingress-nginx) start Portico with their meaning', () => {
  // charts/ingress-nginx/templates/_params.tpl with the chart's values.yaml, $(POD_NAMESPACE) substituted by the kubelet.
  const args = [
    '/nginx-ingress-controller',
    '--publish-service=ingress-nginx/ingress-nginx-controller',
    '--election-id=ingress-nginx-leader',
    '--controller-class=k8s.io/ingress-nginx',
    '--ingress-class=nginx',
    '--configmap=ingress-nginx/ingress-nginx-controller',
    '--validating-webhook=:8443',
    '--validating-webhook-certificate=/usr/local/certificates/cert',
    '--validating-webhook-key=/usr/local/certificates/key',
  ];
  const c = parseConfig(args, { POD_NAMESPACE: 'ingress-nginx', POD_NAME: 'ingress-nginx-controller-0' });
  assert.equal(c.ingressNginxProgram, true);
  assert.equal(c['publish-service'], 'ingress-nginx/ingress-nginx-controller');
  assert.equal(c['election-id'], 'ingress-nginx-leader');
  assert.equal(c['leader-elect'], true);
  assert.equal(c['controller-class'], 'k8s.io/ingress-nginx');
  assert.equal(c['ingress-class'], 'nginx');
  assert.equal(c.configmap, 'ingress-nginx/ingress-nginx-controller');
  assert.equal(c.namespace, 'ingress-nginx', 'the Lease and Portico\'s own objects live in the pod\'s namespace');
  // The admission webhook on every address, port 8443, serving the chart's certificate files (the chart's jobs own the CA bundle).
  assert.equal(c['webhook-port'], 8443);
  assert.equal(c.webhookAddress, '0.0.0.0');
  assert.equal(c['validating-webhook-certificate'], '/usr/local/certificates/cert');
  assert.equal(c['validating-webhook-key'], '/usr/local/certificates/key');
  // ingress-nginx's listeners: the ports the chart's containerPorts and probes name, on every address.
  assert.equal(c['http-port'], 80);
  assert.equal(c['https-port'], 443);
  assert.equal(c['listen-address'], '0.0.0.0');
  assert.deepEqual(c['health-addr'], { host: '0.0.0.0', port: 10254 });
  assert.equal(c['update-status'], true);
  assert.equal(c['shutdown-grace-period'], 5_000);
  assert.deepEqual(c.noEffect, []);
  // Without the program name these are Portico's defaults, and the webhook's port would be nginx's HTTPS port.
  assert.throws(() => parseConfig(args.slice(1), {}), /admission webhook's port 8443 is also nginx's --http-port or --https-port/);
  // The environment and the flags still win over the ingress-nginx defaults.
  const d = parseConfig(['/nginx-ingress-controller', '--http-port=8080'], { POD_NAMESPACE: 'x', PORTICO_HTTPS_PORT: '9443' });
  assert.equal(d['http-port'], 8080);
  assert.equal(d['https-port'], 9443);
  assert.equal(d['controller-class'], 'k8s.io/ingress-nginx');
});

test('--shutdown-grace-period takes ingress-nginx\'s whole seconds and Portico\'s durations', () => {
  assert.equal(parseConfig(['--shutdown-grace-period=30'], {})['shutdown-grace-period'], 30_000);
  assert.equal(parseConfig(['--shutdown-grace-period', '1m30s'], {})['shutdown-grace-period'], 90_000);
  assert.equal(parseConfig([], { PORTICO_SHUTDOWN_GRACE_PERIOD: '0' })['shutdown-grace-period'], 0);
  assert.throws(() => parseConfig(['--shutdown-grace-period=-1'], {}), /--shutdown-grace-period/);
});

test('mapped flags set Portico\'s own settings', () => {
  const e = parseConfig(['--election-ttl=40s'], {});
  assert.deepEqual([e['lease-duration'], e['renew-deadline'], e['retry-period']], [40_000, 20_000, 10_000]);
  const z = parseConfig(['--election-ttl=0'], {});
  assert.equal(z['lease-duration'], 30_000, 'ingress-nginx: 0 means 30s');
  assert.throws(() => parseConfig(['--election-ttl=40s', '--lease-duration=40s'], {}), /--election-ttl and --lease-duration set the same thing/);
  assert.equal(parseConfig(['--disable-leader-election'], {})['leader-elect'], false);
  assert.equal(parseConfig(['--disable-leader-election=false'], {})['leader-elect'], true);
  assert.deepEqual(parseConfig(['--healthz-host=10.1.2.3', '--healthz-port=10300'], {})['health-addr'], { host: '10.1.2.3', port: 10300 });
  assert.deepEqual(parseConfig(['--healthz-host='], {})['health-addr'], { host: '0.0.0.0', port: 10254 });
  const w = parseConfig(['--validating-webhook=127.0.0.1:9443'], {});
  assert.equal(w['webhook-port'], 9443);
  assert.equal(w.webhookAddress, '127.0.0.1');
  assert.equal(w['validating-webhook-certificate'], undefined, 'without files Portico manages its own certificate');
  assert.equal(parseConfig([], {}).webhookAddress, '127.0.0.1', 'Portico\'s --webhook-port binds --listen-address');
  assert.throws(() => parseConfig(['--validating-webhook=:9443', '--validating-webhook-key=/k'], {}), /go together/);
  assert.throws(() => parseConfig(['--validating-webhook=:9443', '--webhook-port=9443'], {}), /give one/);
  assert.throws(() => parseConfig(['--validating-webhook=:0'], {}), /between 1 and 65535/);
  assert.deepEqual(parseConfig(['--validating-webhook-key=/k'], {}).noEffect.map((n) => n.flag), ['validating-webhook-key']);
  // Given in the environment counts as given.
  assert.deepEqual(parseConfig([], { PORTICO_SYNC_PERIOD: '5m' }).noEffect.map((n) => n.flag), ['sync-period']);
});

test('the reference lists every ingress-nginx flag with its status and the counts', () => {
  const md = ingressNginxFlagsMarkdown();
  for (const n of Object.keys(SAMPLES)) assert.match(md, new RegExp(`\\| \`--${n}\` \\| (implemented|mapped|no-effect|refused) \\|`));
  assert.match(md, /^72 flags: \d+ implemented, \d+ mapped, \d+ no-effect, \d+ refused\./);
});
