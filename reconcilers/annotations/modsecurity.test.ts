import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAnnotations } from './parse.ts';
import { MAX_MODSEC_SNIPPET, ModsecSnippetError, modsecuritySnippetConfigSchema, modsecuritySnippetSchema, parseModsecuritySnippet, transactionIdSchema } from './modsecurity.ts';
import { defaultGlobalConfig, parseGlobalConfig } from '../model/global-config.ts';

const A = 'nginx.ingress.kubernetes.io/';

test('modsecurity-snippet: every allowlisted directive is read (any case), comments and continuations as ModSecurity reads them', () => {
  const src = [
    '# blocking mode',
    'SecRuleEngine On',
    '  secrequestbodyaccess   off  ',
    'SecResponseBodyAccess Off\r',
    'SecRequestBodyLimit 1048576',
    'SecAuditEngine relevantonly',
    'SecRuleRemoveById 920350 941000-942999 \\',
    '    "932100 932110"',
    'SecRuleRemoveByTag "attack-sqli"',
    'SecRuleRemoveByTag OWASP_CRS/WEB_ATTACK/XSS',
    '# a comment ending in a backslash does not swallow the next line \\',
    'SecRuleEngine DetectionOnly',
    '',
  ].join('\n');
  assert.deepEqual(parseModsecuritySnippet(src), [
    { directive: 'SecRuleEngine', value: 'On' },
    { directive: 'SecRequestBodyAccess', value: 'Off' },
    { directive: 'SecResponseBodyAccess', value: 'Off' },
    { directive: 'SecRequestBodyLimit', value: 1048576 },
    { directive: 'SecAuditEngine', value: 'RelevantOnly' },
    { directive: 'SecRuleRemoveById', value: ['920350', '941000-942999', '932100', '932110'] },
    { directive: 'SecRuleRemoveByTag', value: 'attack-sqli' },
    { directive: 'SecRuleRemoveByTag', value: 'OWASP_CRS/WEB_ATTACK/XSS' },
    { directive: 'SecRuleEngine', value: 'DetectionOnly' },
  ]);
  assert.deepEqual(parseModsecuritySnippet(''), []);
  assert.deepEqual(parseModsecuritySnippet('# only a comment\n\n'), []);
});

test('modsecurity-snippet: anything off the allowlist refuses the whole snippet, naming the directive and the line', () => {
  const refused: [string, RegExp][] = [
    ['SecRuleEngine On\nInclude /etc/passwd', /^line 2: directive "Include" reads files and is not accepted/],
    ['SecRule ARGS "@rx x" "id:1,phase:1,deny,exec:/bin/sh"', /^line 1: directive "SecRule" defines rules, whose actions may run code/],
    ['SecAction "id:2,phase:1,pass,setvar:tx.x=1"', /^line 1: directive "SecAction" defines rules/],
    ['SecRuleEngine On\n\nSecAuditLog /tmp/x', /^line 3: directive "SecAuditLog" names a file to write/],
    ['SecDebugLog /tmp/debug.log', /^line 1: directive "SecDebugLog" names a file/],
    ['SecDebugLogLevel 9', /^line 1: directive "SecDebugLogLevel" has no debug log/],
    ['IncludeOptional /x.conf', /directive "IncludeOptional" reads files/],
    ['SecRemoteRules key https://evil/rules', /directive "SecRemoteRules" downloads rules/],
    ['SecTmpDir /tmp', /directive "SecTmpDir" names a directory/],
    ['SecDefaultAction "phase:2,log,pass"', /directive "SecDefaultAction" sets the actions of every rule/],
    ['SecComponentSignature x', /directive "SecComponentSignature" is not accepted in modsecurity-snippet \(accepted: SecRuleEngine, /],
    ['modsecurity_rules_file /x;', /directive "modsecurity_rules_file" is not accepted/],
    ['SecRuleEngine Maybe', /^line 1: SecRuleEngine "Maybe": expected On, Off, DetectionOnly/],
    ['SecRuleEngine On Off', /SecRuleEngine takes one value, got 2/],
    ['SecRuleEngine', /SecRuleEngine takes one value, got 0/],
    ['SecAuditEngine DetectionOnly', /expected On, Off, RelevantOnly/],
    ['SecRequestBodyLimit 0', /expected a number of bytes between 1 and 1073741824/],
    ['SecRequestBodyLimit 99999999999', /expected a number of bytes/],
    ['SecRequestBodyLimit 1k', /expected a number of bytes/],
    ['SecRuleRemoveById', /takes 1 to 64 rule ids or ranges, got 0/],
    ['SecRuleRemoveById 942100;', /SecRuleRemoveById "942100;": expected a rule id/],
    ['SecRuleRemoveById 942999-942000', /expected a rule id such as 920350 or a range/],
    ['SecRuleRemoveById 0', /expected a rule id/],
    [`SecRuleRemoveById ${Array.from({ length: 65 }, (_, i) => 900000 + i).join(' ')}`, /takes 1 to 64/],
    ['SecRuleRemoveByTag "attack sqli"', /SecRuleRemoveByTag takes one value|expected a tag/],
    ['SecRuleRemoveByTag attack-sqli"', /a value is not a word/],
    ['SecRuleRemoveByTag "unbalanced', /a value is not a word/],
    ['SecRuleRemoveByTag a\\b', /a value is not a word/],
    ['SecRuleRemoveByTag $x', /expected a tag/],
    ['SecRuleEngine On # inline comment', /takes one value, got 4/],
    ['SecRuleEngine On\u0000', /line 1: a NUL character is never accepted/],
    ['SecRuleEngine On\nSecRuleEngine\u2028On', /line 2: a Unicode line\/paragraph separator \(U\+2028\)/],
    ['SecRuleEngine\u000bOn', /control character U\+000B/],
    ['SecRuleEngine \u00d6n', /non-ASCII character U\+00D6 outside a comment/],
    ['SecRuleEngine On\n' + 'SecRuleEngine Off\n'.repeat(256), /at most 256 directives/],
  ];
  for (const [src, re] of refused) {
    assert.throws(() => parseModsecuritySnippet(src), (e: unknown) => e instanceof ModsecSnippetError && re.test(e.message), JSON.stringify(src.slice(0, 60)));
  }
  assert.throws(() => parseModsecuritySnippet('#'.repeat(MAX_MODSEC_SNIPPET + 1)), /at most 16384 are accepted/);
  // A non-ASCII comment is only a comment.
  assert.deepEqual(parseModsecuritySnippet('# blocage activé\nSecRuleEngine On'), [{ directive: 'SecRuleEngine', value: 'On' }]);
});

test('the annotation: directives, or why the snippet is refused (applied by nothing); only an oversized one is an invalid value', () => {
  assert.deepEqual(modsecuritySnippetSchema.parse('SecRuleEngine On'), { directives: [{ directive: 'SecRuleEngine', value: 'On' }] });
  assert.deepEqual(modsecuritySnippetSchema.parse('SecRuleEngine On\nSecRule ARGS x "id:1,deny"'), { error: 'line 2: directive "SecRule" defines rules, whose actions may run code (exec, lua) or change the request and is not accepted in modsecurity-snippet (accepted: SecRuleEngine, SecRequestBodyAccess, SecResponseBodyAccess, SecRequestBodyLimit, SecAuditEngine, SecRuleRemoveById, SecRuleRemoveByTag)' });
  const p = parseAnnotations({ [`${A}modsecurity-snippet`]: 'x'.repeat(MAX_MODSEC_SNIPPET * 4 + 1) });
  assert.equal(p.values['modsecurity-snippet'], undefined);
  assert.equal(p.errors.length, 1);
});

test('the ConfigMap key: the same allowlist; a refused value is an error naming the line (the previous value stays)', () => {
  assert.deepEqual(modsecuritySnippetConfigSchema.parse('SecRuleEngine On\nSecRuleRemoveById 920350'), [
    { directive: 'SecRuleEngine', value: 'On' },
    { directive: 'SecRuleRemoveById', value: ['920350'] },
  ]);
  const prev = { ...defaultGlobalConfig(), modsecuritySnippet: [{ directive: 'SecRuleEngine' as const, value: 'On' as const }] };
  const r = parseGlobalConfig({ 'enable-modsecurity': 'true', 'enable-owasp-modsecurity-crs': 'true', 'modsecurity-snippet': 'SecRuleEngine Off\nInclude /etc/shadow' }, prev);
  assert.equal(r.values.enableModsecurity, true);
  assert.equal(r.values.enableOwaspModsecurityCrs, true);
  assert.deepEqual(r.values.modsecuritySnippet, prev.modsecuritySnippet);
  assert.equal(r.errors.length, 1);
  assert.match(r.errors[0]!.message, /^modsecurity-snippet=.*line 2: directive "Include" reads files/);
  assert.deepEqual(r.unknown, []);
  const d = parseGlobalConfig({}, defaultGlobalConfig()).values;
  assert.deepEqual([d.enableModsecurity, d.enableOwaspModsecurityCrs, d.modsecuritySnippet], [false, false, []]);
});

test('modsecurity-transaction-id: nginx variables it defines and literal [A-Za-z0-9_-] text, at least one variable', () => {
  for (const ok of ['$request_id', 'web-$request_id', '$portico_request_id', '$http_x_request_id', '$request_id-$connection_x', '  $request_id\t', '$request_id_']) {
    const r = transactionIdSchema.safeParse(ok);
    if (ok === '$request_id-$connection_x' || ok === '$request_id_') {
      assert.equal(r.success, false, `${ok}: "$connection_x" / "$request_id_" are not variables nginx defines`);
      continue;
    }
    assert.ok(r.success, ok);
    assert.equal(r.data, ok.trim());
  }
  const bad: [string, RegExp][] = [
    ['static-id', /at least one nginx variable/],
    ['$nosuch', /\$nosuch is not a variable nginx defines/],
    ['${request_id}', /unexpected "\$\{request_" at character 1/],
    ['$Request_Id', /unexpected/],
    ['$request_id"; pwn on; "', /unexpected/],
    ['$request_id pwn', /unexpected/],
    ['$request_id;', /unexpected ";"/],
    ['$request_id\n', /unexpected/],
    ['$request_id\u2028', /unexpected/],
    ['', /1 to 256 characters/],
    [`$request_id${'a'.repeat(256)}`, /1 to 256 characters/],
  ];
  for (const [v, re] of bad) {
    const r = transactionIdSchema.safeParse(v);
    assert.equal(r.success, false, JSON.stringify(v));
    assert.match(r.error!.issues.map((i) => i.message).join(), re, JSON.stringify(v));
  }
});

test('every injection payload class through every ModSecurity annotation and ConfigMap key: refused', () => {
  const payloads = [
    'SecRuleEngine On; pwn on;',
    'SecRuleEngine On }\npwn {',
    'SecRuleEngine On\npwn_newline on;',
    "SecRuleEngine 'On' pwn",
    'SecRuleEngine "On\\" pwn"',
    'SecRuleEngine $pwn',
    'SecRuleEngine On\r\nInclude /pwn.conf',
    'SecRuleEngine On\u0000pwn',
    'SecRuleEngine On\u2028pwn',
    'SecRuleEngine On\u0085pwn',
    'SecRuleRemoveByTag content_by_lua_block',
    '\';\n  modsecurity_rules_file /pwn.conf;\n',
  ];
  for (const p of payloads) {
    const v = modsecuritySnippetSchema.parse(p);
    // content_by_lua_block is a valid tag word: inert data, re-emitted in double quotes into a ModSecurity file only.
    if (p.endsWith('content_by_lua_block')) assert.deepEqual(v, { directives: [{ directive: 'SecRuleRemoveByTag', value: 'content_by_lua_block' }] });
    else assert.ok('error' in v, JSON.stringify(p));
    assert.equal(modsecuritySnippetConfigSchema.safeParse(p).success, p.endsWith('content_by_lua_block'), JSON.stringify(p));
    assert.equal(transactionIdSchema.safeParse(p).success, false, JSON.stringify(p));
    for (const n of ['enable-modsecurity', 'enable-owasp-core-rules']) assert.equal(parseAnnotations({ [`${A}${n}`]: p }).errors.length, 1, `${n}: ${JSON.stringify(p)}`);
  }
});
