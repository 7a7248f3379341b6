// Differential test of regexPathSchema against the real nginx (PCRE2) Portico runs: every regex the schema accepts
// — from a fixed corpus of tricky cases and from a seeded generator — is compiled by nginx's PCRE2 as
// ingress-nginx would have it, `location ~* "^<regex>"` (the router evaluates the same PCRE2 with ngx.re), and must
// pass `nginx -t`; every corpus case nginx rejects must be rejected
// by the schema. Only this fixed corpus is ever given to nginx; Portico itself never runs nginx on user input
// before it is validated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { regexPathSchema } from './safe.ts';

const accepts = (re: string) => regexPathSchema.safeParse(re).success;

/** `nginx -t` on a minimal configuration with one regex location per line; the 1-based index of the culprit. */
function nginxTest(regexes: readonly string[]): { ok: boolean; output: string; culprit: string | undefined } {
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-regex-'));
  try {
    mkdirSync(path.join(dir, 'tmp'));
    const t = path.join(dir, 'tmp');
    const head = [
      `pid ${dir}/nginx.pid;`,
      'error_log stderr;',
      'events {}',
      'http {',
      `  client_body_temp_path ${t}; proxy_temp_path ${t}; fastcgi_temp_path ${t}; uwsgi_temp_path ${t}; scgi_temp_path ${t};`,
      '  access_log off;',
      '  server {',
      '    listen 127.0.0.1:1;',
    ];
    // A location's regex is never variable-interpolated by nginx; the corpus has no quote and no final backslash.
    const body = regexes.map((re) => {
      if (re.includes('"') || re.endsWith('\\')) throw new Error(`not renderable: ${re}`);
      return `    location ~* "^${re}" { return 204; }`;
    });
    const file = path.join(dir, 'nginx.conf');
    writeFileSync(file, [...head, ...body, '  }', '}', ''].join('\n'));
    const r = spawnSync('nginx', ['-t', '-q', '-p', dir, '-c', file, '-e', 'stderr'], { encoding: 'utf8' });
    const output = `${r.stdout}${r.stderr}`;
    const line = /nginx\.conf:(\d+)/.exec(output)?.[1];
    const culprit = line ? regexes[Number(line) - head.length - 1] : undefined;
    return { ok: r.status === 0, output, culprit };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** nginx rejects each of these (asserted below), so the schema must too. */
const NGINX_REJECTS = [
  '/app[]',
  '/app[a-\\d]',
  '/appa{99999}',
  '/appa{65536}',
  '/a[^]',
  '/a[\\d-z]',
  '/a[z-a]',
  '/a{3,2}',
  '/a**',
  '/a{2}{3}',
  '/a(',
  '/a)',
  '/a(?<n>b',
  '/a[b',
  '/a((bc){1000}){1000}', // "regular expression is too large"
  '/(?:[a-z]){1900}',
  '/a(?',
  '/a\\k',
  '/a$?',
  '/a\\c',
];

/** nginx accepts these, but they read differently in other engines or PCRE2 versions, or are not needed in a path. */
const STRICTER_THAN_NGINX = ['/a||b', '/a{,3}', '/a*+', '/a[[:alpha:]]', '/a(?i)b', '/a]', '/a}', '/a{', '/a{x}', '/(*ACCEPT)a', '/a?+', '/(?<=a)b', '/(a)\\1'];

const ACCEPTED_TRICKY = [
  '/app[a-z]',
  '^/api/v[0-9]+/items$',
  '/a{0,1000}',
  `/a{1000}`,
  '/([a-z]){700}',
  '/(a{1000}){1000}',
  '/(a|b)+',
  '/a(?:b|c)*?d',
  '/[-a]',
  '/[a-]',
  '/[^-a]',
  '/[^/]+/x',
  '/\\.well-known/.*',
  '/c\\+\\+',
  '/[.*+?()|]',
  '/[\\d\\w\\s\\D\\W\\S\\.\\-\\[\\]\\(\\)\\*\\+\\?\\|\\/]',
  '/x{1}y{2,}z{0,3}?',
  '/a.b',
  '/%2F',
  '/a()b',
  '/~u/!&,=:@',
  `/${'('.repeat(32)}a${')'.repeat(32)}`,
  // ingress-nginx's rewrite and path-matching examples, anchors inside groups and alternatives, lookaheads
  '/something(/|$)(.*)',
  '/foo/bar/(.+)',
  '/(api|v1)/?(.*)',
  '^/a$|^/b$',
  '/(^x|y$)',
  '/(?<id>[0-9]+)/edit',
  '/(?!internal/).*',
  '/(?=v[0-9])v.*',
  '/w\\b.*\\B',
];

/** A seeded generator biased towards operators, so most outputs probe the parser's edges. */
function* generated(n: number): Generator<string> {
  const tokens = ['(?=', '(?!', '\\b', '$)', '|^', 'a', 'Z', '0', '9', '-', '_', '/', '.', '*', '+', '?', '|', '(', ')', '(?:', '[', ']', '[^', '^', '$', '{', '}', '{2}', '{1,3}', '{2,}', '{,3}', '{1000}', '{1001}', '\\d', '\\.', '\\w', '\\', '\\-', 'a-z', 'z-a', '0-9', ',', '%', '~', ':'];
  let seed = 0x5eed;
  const rand = (k: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % k;
  };
  for (let i = 0; i < n; i++) {
    let s = rand(4) === 0 ? '^/' : '/';
    const len = 1 + rand(10);
    for (let j = 0; j < len; j++) s += tokens[rand(tokens.length)];
    yield s;
  }
}

test('every regex the schema accepts passes nginx -t; every corpus regex nginx rejects, the schema rejects', () => {
  for (const re of ACCEPTED_TRICKY) assert.ok(accepts(re), `the schema should accept ${re}`);
  for (const re of STRICTER_THAN_NGINX) assert.ok(!accepts(re), `the schema should reject ${re}`);

  const randoms = [...generated(4000)];
  const accepted = [...ACCEPTED_TRICKY, ...randoms.filter(accepts)];
  assert.ok(accepted.length > 600, `the generator should produce enough accepted regexes (${accepted.length})`);
  const all = nginxTest(accepted);
  assert.ok(all.ok, `nginx -t rejects a regex the schema accepted: ${JSON.stringify(all.culprit)}\n${all.output}`);
  // Both engines agree they are valid (compiled only; nothing is matched).
  for (const re of accepted) assert.doesNotThrow(() => new RegExp(re, 'i'), re);

  // The stricter cases are in fact fine for nginx (so the corpus documents real choices, not mistakes).
  const stricter = nginxTest(STRICTER_THAN_NGINX.filter((re) => !re.includes('"') && !re.endsWith('\\')));
  assert.ok(stricter.ok, stricter.output);

  for (const re of NGINX_REJECTS) {
    const r = nginxTest([re]);
    assert.equal(r.ok, false, `nginx -t was expected to reject ${re}`);
    assert.ok(!accepts(re), `the schema accepts ${re}, which nginx rejects:\n${r.output}`);
  }
});
