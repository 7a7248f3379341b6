// regexPathSchema is the boundary for regex paths: a user string goes from an Ingress to ngx.re in the Lua router. These tests pin the PCRE2-compatible subset (with the position and the reason of each
// rejection) and feed it every ingress-nginx CVE payload class. The nginx -t differential test is in
// regex-path.nginx.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRegexPath, MAX_REPEAT, PCRE_SIZE_BUDGET, regexPathProblem } from './regex-path.ts';
import { regexPathSchema, zodMessage } from './safe.ts';

const schemaProblem = (re: string): string | null => {
  const r = regexPathSchema.safeParse(re);
  return r.success ? null : zodMessage(r.error);
};

test('regex paths in the subset are accepted', () => {
  for (const re of [
    '/',
    '^/',
    '/api/v[0-9]+/items',
    '^/api/v[0-9]+/items$',
    '/app[a-z]',
    '/[^/]+/edit',
    '/\\.well-known/.*',
    '/c\\+\\+/\\(x\\)',
    '/[.*+?()|]',
    '/[-a]',
    '/[a-]',
    '/[^-a]',
    '/[A-Za-z0-9_~!&,=:@%/]',
    '/[\\d\\w\\s\\D\\W\\S\\.\\-\\[\\]]',
    '/(a|b)+',
    '/(?:a|bc)*?d',
    '/a()b',
    '/x{1}y{2,}z{0,3}',
    `/a{${MAX_REPEAT}}`,
    '/a{3}?',
    '/a.b',
    '/%2F',
    '/~user/!x&y=z,w:@',
    `/${'((('.repeat(10)}a${')))'.repeat(10)}`,
    // ingress-nginx's documented examples (rewrite, path matching) and other common forms
    '/something(/|$)(.*)',
    '/blog(/|$)(.*)',
    '/foo/bar/(.+)',
    '/foo/.*',
    '/(api|v1)/?(.*)',
    '/a$|/b$',
    '(^/x)'.replace('(', '/('),
    '^/a|^/b',
    '/(a$)',
    '/(?<id>[0-9]+)/edit',
    '/(?!internal/).*',
    '/(?=v[0-9])v.*',
    '/word\\b',
    '/a\\Bb',
  ]) {
    assert.equal(schemaProblem(re), null, re);
  }
});

test('regexes PCRE2 rejects or reads differently are rejected with the position and the reason', () => {
  const cases: [string, number, RegExp][] = [
    // The three from the issue: JavaScript's RegExp accepts them, nginx -t does not.
    ['/app[]', 5, /empty character class/],
    ['/app[a-\\d]', 6, /range must be between two lower-case letters/],
    ['/appa{99999}', 6, /at most 1000/],
    ['/a[^]', 3, /empty character class/],
    ['/a[\\d-z]', 4, /range must be between/],
    ['/a[z-a]', 4, /range z-a is out of order/],
    ['/a[A-z]', 4, /range must be between/],
    ['/a[a-z-0]', 7, /"-" inside a class must be first, last/],
    ['/a[[:alpha:]]', 4, /"\[" inside a class must be escaped/],
    ['/a[x^]', 5, /"\^" inside a class is only allowed first/],
    ['/a[b', 3, /"\[" is never closed/],
    ['/a]', 3, /unmatched "\]"/],
    ['/a{3,2}', 3, /numbers out of order in \{3,2\}/],
    ['/a{,3}', 3, /write \{0,m\} instead of \{,m\}/],
    ['/a{x}', 3, /braces are only allowed as counted repetition/],
    ['/a{', 3, /braces are only allowed/],
    ['/a}', 3, /braces are only allowed/],
    ['/a**', 4, /quantifier cannot follow another quantifier/],
    ['/a{2}{3}', 6, /quantifier cannot follow another quantifier/],
    ['/a*+', 4, /possessive quantifiers/],
    ['/(?:*a)', 5, /nothing to repeat before "\*"/],
    ['/(+a)', 3, /nothing to repeat before "\+"/],
    ['/a|?', 4, /nothing to repeat before "\?"/],
    ['/(*ACCEPT)a', 3, /control verbs/],
    ['/(*LIMIT_MATCH=1)a', 3, /control verbs/],
    ['/(?R)', 3, /no lookbehinds, inline flags, recursion/],
    ['/(a)(?1)', 6, /recursion, subroutine calls/],
    ['/(?C1)a', 3, /callouts/],
    ['/(?(1)a|b)', 3, /conditionals/],
    ['/(?<=a)b', 3, /no lookbehinds/],
    ['/(?<n>a)(?<n>b)', 10, /group name n is used twice/],
    ['/a$?', 3, /"\$" is only allowed as an end anchor/],
    ['/a(?=b)*', 8, /lookahead matches no character and cannot be repeated/],
    ['/a|^*b', 5, /"\^" matches no character/],
    ['/a\\b+', 5, /\\b matches no character/],
    ['/a(', 3, /"\(" is never closed/],
    ['/a)', 3, /unmatched "\)"/],
    ['/a(b))', 6, /unmatched "\)"/],
    ['/a(?i)b', 4, /inline flags/],
    ['/a||b', 4, /empty alternative/],
    ['/a|', 4, /empty alternative/],
    ['/(|a)', 3, /empty alternative/],
    ['/a^b', 3, /"\^" is only allowed at the start of the regex, of an alternative or of a group/],
    ['/a$b', 3, /"\$" is only allowed as an end anchor/],
    ['/a\\', 3, /trailing backslash/],
    ['/a\\1', 3, /\\1 is not allowed/],
    ['/a\\Q.\\E', 3, /\\Q is not allowed/],
    ['a', 1, /must start with "\/" or "\^\/"/],
    ['', 1, /must start with/],
  ];
  for (const [re, position, why] of cases) {
    const p = schemaProblem(re);
    assert.ok(p, `${re} must be rejected`);
    assert.match(p, new RegExp(`^regex path at character ${position}: `), `${re}: ${p}`);
    assert.match(p, why, `${re}: ${p}`);
  }
});

test('counted repetition is bounded, and nested counts by the compiled size they produce', () => {
  assert.match(regexPathProblem(`/a{${MAX_REPEAT + 1}}`) ?? '', /at most 1000/);
  assert.match(regexPathProblem(`/a{1,${MAX_REPEAT + 1}}`) ?? '', /at most 1000/);
  // PCRE2 copies a repeated group once per repetition: this fails nginx -t with "regular expression is too large".
  assert.match(regexPathProblem('/a((bc){1000}){1000}') ?? '', /at character 1: regex is too large/);
  assert.match(regexPathProblem('/(?:[a-z]{10}){900}') ?? '', /too large/);
  const ok = checkRegexPath('/([a-z]){700}');
  assert.ok(ok.pcreSizeEstimate <= PCRE_SIZE_BUDGET && ok.pcreSizeEstimate > 20_000, String(ok.pcreSizeEstimate));
  assert.match(regexPathProblem(`/${'('.repeat(33)}a${')'.repeat(33)}`) ?? '', /nested more than 32 deep/);
  assert.match(regexPathProblem(`/${'a'.repeat(1024)}`) ?? '', /longer than 1024 characters/);
});

test('injection boundary: every ingress-nginx CVE payload class is rejected', () => {
  const payloads = [
    // Breaking out of the quoted location name (CVE-2021-25742-style) and opening blocks
    '/a"; } server { listen 1; } location ~ "/x',
    "/a'; return 200 'pwned';",
    '/a" { return 200; } #',
    '/x";proxy_pass http://evil;"',
    '/a{ return 200; }',
    '/a}',
    '/a;',
    '/a;return 200',
    // nginx variables and script syntax
    '/$host',
    '/a$request_uri',
    '/a${x}',
    '/a$1',
    // newlines, carriage returns, tabs, NUL and other control characters
    '/a\nreturn 200;',
    '/a\r\nX: y',
    '/a\tb',
    '/a\u0000b',
    '/a\u007f',
    // comments
    '/a#',
    '/a# } location / {',
    // backslash escapes nginx's parser turns into something else, or that escape the closing quote
    '/a\\"',
    '/a\\\\',
    '/a\\',
    '/a\\n',
    '/a\\t',
    '/a\\x41',
    '/a\\u0041',
    '/a\\$',
    // Lua and includes (CVE-2021-25742 / CVE-2023-5044 / CVE-2025-1974 payload classes)
    '/a"; content_by_lua_block { os.execute("id") } "',
    '/a; access_by_lua_block { ngx.say(1) }',
    '/a" include /etc/passwd; "',
    '/a; include /var/run/secrets/kubernetes.io/serviceaccount/token;',
    '/a" load_module /tmp/evil.so; "',
    '/a; ssl_engine ../../../tmp/x.so;',
    // PCRE features that change matching or run code in other engines
    '/(?{print 1})',
    '/(?C1)a',
    '/(*LIMIT_MATCH=1)a',
    '/(?i:a)',
    '/\\Ka',
    '/\\p{L}',
    '/a(?#comment)',
    // Unicode look-alikes and non-ASCII
    '/a\u2028b',
    '/a\u00a0b',
    '/\u0430dmin',
    '/a\uFF02b',
    // very long inputs and pathological nesting
    `/${'a'.repeat(5000)}`,
    `/${'('.repeat(600)}${')'.repeat(600)}`,
    `/${'[a]'.repeat(400)}`,
    '/(a{1000}){1001}',
    '/((((a{1000}){1000}){1000}){1000})',
  ];
  for (const p of payloads) {
    const problem = schemaProblem(p);
    assert.ok(problem, `payload must be rejected: ${JSON.stringify(p.slice(0, 80))}`);
    assert.match(problem, /^regex path /, JSON.stringify(p.slice(0, 80)));
  }
});
