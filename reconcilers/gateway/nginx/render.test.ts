import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkTemplate, renderNginxConf, runtimePaths } from './render.ts';
import { host, quote, quoteFormat, quoteRegex, serverName, size, UnsafeValueError } from './escape.ts';
import { translate } from '../../translate/translate.ts';
import { structureChecksum } from '../../translate/diff.ts';
import { OPTS, ing, modelOf, rule, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';

test('quote: refuses what could break out of an nginx string, escapes the rest', () => {
  for (const bad of ['a\nb', 'x\r', '$host', '${x}', 'a\u0000', 123, null]) assert.throws(() => quote(bad), UnsafeValueError);
  assert.equal(quote('/a"b\\c'), '"/a\\"b\\\\c"');
  assert.equal(quote('/plain/path'), '"/plain/path"');
});

test('regex, log format, size and host helpers', () => {
  assert.equal(quoteRegex('^/v[0-9]+/x$'), '"^/v[0-9]+/x$"');
  assert.throws(() => quoteRegex('/a$b'), UnsafeValueError);
  assert.throws(() => quoteRegex('/a"; deny all; #'), UnsafeValueError);
  assert.equal(quoteFormat('$remote_addr $status'), "'$remote_addr $status'");
  for (const bad of ["x' ; access_log off", 'a{b}', 'a;b', 'a\\b']) assert.throws(() => quoteFormat(bad), UnsafeValueError);
  assert.equal(size('10m'), '10m');
  assert.throws(() => size('10m; evil'), UnsafeValueError);
  assert.throws(() => host('a.example.com;'), UnsafeValueError);
  assert.throws(() => host('A.example.com'), UnsafeValueError);
  assert.equal(serverName('*.example.com'), '"~^[^.]+\\.example\\.com$"');
  assert.equal(serverName('a.example.com'), 'a.example.com');
});

test('template guard: a value emitted without an escaping helper fails at load', () => {
  assert.throws(() => checkTemplate('t', 'server_name {{server.host}};'), /without an escaping helper/);
  assert.throws(() => checkTemplate('t', 'x {{{raw}}}'), /without an escaping helper/);
  assert.doesNotThrow(() => checkTemplate('t', 'server_name {{host server.host}};{{#if a}}x{{/if}}'));
});

test('rendered configuration passes nginx -t and contains each host and path once, escaped', () => {
  const m = modelOf({
    services: [svc('web', [{ port: 80 }])],
    ingresses: [
      ing('a', {
        tls: [{ hosts: ['a.example.com'] }],
        rules: [
          rule('a.example.com', [{ path: '/api', backend: svcRef('web', 80) }, { path: '/e', pathType: 'Exact', backend: svcRef('web', 80) }]),
          rule('*.w.example.com', [{ path: '/', backend: svcRef('web', 80) }]),
          rule(undefined, [{ path: '/n', backend: svcRef('nope', 80) }]),
        ],
      }),
    ],
  });
  const s = translate(m.snapshot(), OPTS).config.structure;
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-render-'));
  const rt = runtimePaths(dir);
  mkdirSync(rt.tempDir, { recursive: true });
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=t', '-keyout', rt.placeholderKey, '-out', rt.placeholderCert], { stdio: 'ignore' });
  const conf = renderNginxConf(s, rt, structureChecksum(s));
  assert.match(conf, /server_name a\.example\.com;/);
  assert.match(conf, /server_name "~\^\[\^\.\]\+\\\.w\\\.example\\\.com\$";/);
  assert.match(conf, /location = "\/api" \{/);
  assert.match(conf, /location "\/api\/" \{/);
  assert.match(conf, /location = "\/e" \{/);
  assert.match(conf, /if \(\$scheme = http\) \{ return 308/);
  const file = path.join(dir, 'nginx.conf');
  writeFileSync(file, conf);
  execFileSync('nginx', ['-t', '-q', '-p', dir, '-c', file, '-e', 'stderr'], { stdio: 'pipe' });
});
