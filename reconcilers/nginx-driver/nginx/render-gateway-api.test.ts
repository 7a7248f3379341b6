// Gateway API in nginx.conf: each Gateway port is a listen of the proxy server (ssl for HTTPS listeners), and the
// router learns the ports (and a TLS port's listener hostnames) at start; the result passes `nginx -t`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { renderNginxConf } from './render.ts';
import { H2C_MODULE } from './runtime.ts';
import { nginxTest, runtimeDir } from './nginx-t.test-helpers.ts';
import type { Structure } from '../../config/types.ts';
import { translate } from '../../translate/translate.ts';
import { OPTS, modelOf } from '../../translate/fixtures.test-helpers.ts';
import { normalizeGateway } from '../../kinds/gateway/normalize.ts';
import { normalizeGatewayClass } from '../../kinds/gatewayclass/index.ts';
import { gatewayApiState } from '../../translate/gateway-api/attach.ts';

const GA = { controllerName: 'portico.dev/gateway-controller', reservedPorts: [8080, 8443, 10246] };
const meta = (name: string, ns?: string) => ({ name, ...(ns ? { namespace: ns } : {}), uid: name, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });

test('Gateway ports: listen directives (ssl for HTTPS), the router\'s port list and TLS listener hostnames; nginx -t passes', () => {
  const m = modelOf({});
  const c = normalizeGatewayClass({ metadata: meta('portico'), spec: { controllerName: GA.controllerName } } as never);
  assert.ok(c.ok);
  m.setCrd('GatewayClass', c.record);
  const g = normalizeGateway({
    metadata: meta('gw', 'infra'),
    spec: {
      gatewayClassName: 'portico',
      listeners: [
        { name: 'http', port: 80, protocol: 'HTTP' },
        { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'c' }] } },
        { name: 'wild', port: 443, protocol: 'HTTPS', hostname: '*.example.com', tls: { certificateRefs: [{ name: 'c' }] } },
      ],
    },
  } as never);
  assert.ok(g.ok);
  m.setCrd('Gateway', g.record);
  m.setSecret({ key: 'infra/c', ok: true, cert: 'C', privateKey: 'K', hosts: [], notAfter: '2099-01-01T00:00:00.000Z', fingerprint: 'f' });
  const ports = gatewayApiState(m.snapshot(), GA).ports;
  assert.equal(ports.length, 2);
  const http = ports.find((p) => !p.ssl)!;
  const https = ports.find((p) => p.ssl)!;
  assert.deepEqual(https.hostnames, ['', '*.example.com']);
  const structure: Structure = translate(m.snapshot(), { ...OPTS, gatewayApi: GA }).config.structure;
  const rt = runtimeDir();
  const conf = renderNginxConf(structure, rt, 'c');
  assert.match(conf, new RegExp(`listen 127\\.0\\.0\\.1:${http.port} reuseport backlog=4096;`));
  assert.match(conf, new RegExp(`listen 127\\.0\\.0\\.1:${https.port} ssl http2 reuseport backlog=4096;`), 'HTTP/2 as on Portico\'s own HTTPS port (use-http2)');
  assert.ok(conf.includes(`gatewayPorts = { ${Math.min(http.port, https.port)}, ${Math.max(http.port, https.port)},  },`), 'the router\'s port list');
  assert.ok(conf.includes(`gatewayTls = { [${https.port}] = { "", ".example.com",  },  },`), 'the TLS port\'s listener hostnames');
  assert.ok(existsSync(H2C_MODULE), `Portico's h2c module is installed (make deps builds it): ${H2C_MODULE}`);
  assert.ok(conf.includes(`load_module "${H2C_MODULE}";`));
  assert.ok(conf.includes(`portico_h2c_ports ${http.port};`), 'the plain Gateway port takes h2c next to HTTP/1.x; the TLS one uses ALPN');
  nginxTest(rt, conf, { withOutput: true });
});
