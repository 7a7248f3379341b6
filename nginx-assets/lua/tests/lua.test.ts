// Runs the Lua unit tests with luajit (OpenResty's luajit2 from Debian) under node's test runner: the pure
// algorithms, and the modules that use nginx's API against a mocked `ngx` (mock_ngx.lua). Each file prints
// "ok - name" / "not ok - name: why" and exits non-zero on a failure; every test below also names checks that
// must have run, so a file that silently stops early cannot pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

function run(file: string, mustPass: RegExp[]): void {
  const r = spawnSync('luajit', [path.join(here, file), path.join(here, '..')], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.doesNotMatch(r.stdout, /not ok/);
  for (const m of mustPass) assert.match(r.stdout, m, `${file} did not report ${m}:\n${r.stdout}`);
}

test('Lua: smooth weighted round-robin', () => {
  run('rr_test.lua', [/ok - smooth 5:1:1 sequence/, /ok - 3:1 distribution/, /ok - skip honoured/]);
});

test('Lua: consistent hash ring (stability when an endpoint is added, balance)', () => {
  run('chash_test.lua', [/ok - adding 1 endpoint/, /ok - moved keys only go to the new endpoint/, /ok - balanced within/]);
});

test('Lua: EWMA with two random choices prefers fast peers in the expected proportions and decays back', () => {
  run('ewma_test.lua', [/ok - fast peer wins/, /ok - mid wins only against slow/, /ok - slow never wins/, /ok - scores decay/]);
});

test('Lua store: change log, safe_set failures counted without eviction, forbidden endpoints refused', () => {
  run('store_test.lua', [/ok - a later sync decodes only the changed backend/, /ok - generation: unmoved, the version is not read/, /ok - generation: …and the one after reads nothing/, /ok - generation: without the zone, the version is read every time/, /ok - the failure is counted/, /ok - no entry was evicted/, /ok - only routable IP literals/, /ok - each refusal is counted/]);
});

test('Lua certs: one copy per certificate, sweep, SNI selection, bounded SNI cache, full zone fails without eviction', () => {
  run('certs_test.lua', [/ok - three hosts, one stored certificate/, /ok - a certificate no host uses any more is swept/, /ok - the SNI cache stays within its bound/, /ok - the other host keeps its certificate/, /ok - …names the hosts left without it, and applies the rest/, /ok - reject: an unknown name fails the handshake/, /ok - reject: a host with routes but no certificate gets the default/, /ok - reject off \(default\): an unknown name still gets the default certificate/]);
});

test('Lua certs, ssl-ciphers: the host\'s list set on the connection with its certificate, resumption tied to it, a refused list fails the handshake, the list validated', () => {
  run('certs_test.lua', [
    /ok - ciphers: the same certificate with a list is an entry of its own/,
    /ok - ciphers: the host's list is set on the connection with its certificate/,
    /ok - ciphers: …and the client hello resumes only sessions of this certificate and list/,
    /ok - ciphers: a host without a list \(same certificate\) keeps nginx's list and session context/,
    /ok - ciphers: a list OpenSSL refuses fails the handshake/,
    /ok - validate: a cipher list of OpenSSL's syntax is accepted/,
    /ok - validate: anything else in a cipher list is refused/,
  ]);
});

test('Lua OCSP stapling: handshakes staple only what is kept and never fetch; fetches bounded per certificate and per minute; only validated answers kept until nextUpdate; only vetted addresses', () => {
  run('ocsp_test.lua', [/ok - ocsp: nextUpdate read from the answer/, /ok - ocsp: a fetch is scheduled, not run in the handshake/, /ok - ocsp: one fetch per certificate per back-off/, /ok - ocsp: the next handshake staples it/, /ok - ocsp: an answer that does not validate/, /ok - ocsp: never connects to loopback/, /ok - ocsp: fetches a minute are capped/, /ok - ocsp validate: loopback, link-local/]);
});

test('Lua certs, client certificates: CAs stored once and swept, looked up as the router looks up hosts, asked for in the handshake, recorded in the TLS session', () => {
  run('certs_test.lua', [
    /ok - client: a CA no host asks with any more is swept/,
    /ok - client: a host cannot point at a CA that is not stored, and stops asking \(fail closed\)/,
    /ok - client: a host with its own routes below the wildcard asks for nothing/,
    /ok - client: the handshake asks with the host's CA chain and depth/,
    /ok - client: the TLS session records the CA configuration/,
    /ok - client: without a certificate of its own \(placeholder\) the host still asks/,
    /ok - client hello: the connection resumes only sessions of the host's CA configuration/,
    /ok - client: a changed CA applies to the next handshake \(no reload\)/,
    /ok - validate: a CA that is not only PEM certificates is refused/,
  ]);
});

test('Lua client-cert plugin (auth-tls-*): verify modes × results, SNI ≠ Host and foreign CA → 421, error page, match-cn, headers, order, router run, validation', () => {
  run('client_cert_test.lua', [
    /ok - verify on × SUCCESS → 200/, /ok - verify on × NONE → 400/, /ok - verify optional × NONE → 200/, /ok - verify optional × FAILED:unable to get local issuer certificate → 400/,
    /ok - verify optional_no_ca × FAILED:unable to get local issuer certificate → 200/, /ok - verify optional_no_ca × FAILED:certificate has expired → 400/,
    /ok - plain HTTP has no certificate: on answers 400/,
    /ok - SNI b.example, Host a.example → 421 Misdirected Request/,
    /ok - a certificate verified against another CA configuration/,
    /ok - error page: no certificate → 302 to it/, /ok - error page: a certificate that fails → 302 to it/,
    /ok - match-cn: one that does not → 403/, /ok - match-cn with optional and no certificate → 403/,
    /ok - headers: ssl-client-verify, -subject-dn, -issuer-dn from the connection/,
    /ok - headers: pass-certificate sends the escaped PEM in ssl-client-cert/,
    /ok - headers: without pass-certificate, a client-sent ssl-client-cert is removed/,
    /ok - order: the client certificate is checked before the IP allowlist/,
    /ok - a match-cn PCRE refuses fails its paths closed \(503\)/,
    /ok - router: …answered 302 to the error page/,
    /ok - validate: errorPage https:\/\/user@evil.example\/ is refused/,
    /ok - validate: matchCn CN=a;b is refused/,
  ]);
});

test('Lua balancer: retries, forbidden peers never used, 503 socket without a reason to the client, canary, affinity cookie reissued on failure', () => {
  run('balancer_test.lua', [/ok - hand-off: the request it names takes its backend and timeouts/, /ok - hand-off: forget\(\) drops it/, /ok - peer hand-off: three hand-offs, the three endpoints in turn/, /ok - peer hand-off: never for canary/, /ok - peer hand-off: the retry goes to another endpoint of the backend/, /ok - peer hand-off: …having asked how the handed attempt ended/, /ok - peer hand-off: a request not handed over balances its first attempt/, /ok - the retry goes to another endpoint/, /ok - cookie balanced: the retry goes elsewhere, change-on-failure reissues the cookie for the new endpoint/, /ok - only the routable endpoint is used/, /ok - cloud metadata \/ host agent endpoints are skipped/, /ok - no endpoints → the 503 socket/, /ok - the log line is rate-limited/, /ok - header always: canary/]);
});

test('Lua API: unix socket only, malformed input refused before storing, counters in GET /portico/config', () => {
  run('api_test.lua', [/ok - a TCP client \(127\.0\.0\.1\) is refused/, /ok - no refused request changed the data/, /ok - …the shared-memory failure counters/, /ok - backends: cookie name with a header break → 400/,
    /ok - certificates: a certificate padded to 900 KB → 400/, /ok - certificates: a chain of 11 certificates → 400/, /ok - certificates: text between the certificates → 400/,
    /ok - certificates: a block of another type in the chain → 400/, /ok - certificates: a key of 21 KiB → 400/]);
});

test('Lua router: nginx location semantics, one-label wildcards, catch-all, answers, profiles, incremental compile, 10k hosts', () => {
  run('router_test.lua', [/ok - native: a plain prefix route names its backend/, /ok - native: a name reached through a wildcard is registered as a name of its own/, /ok - native: names through a wildcard are bounded per generation/, /ok - native: a route's own timeouts go with it, in milliseconds/, /ok - native: \/retries is left to the router/, /ok - native: nginx's slash redirect is left to the router/, /ok - native: a new generation resets the table and the host is registered again/, /ok - listener filters: a deny filter refuses a path that exists/, /ok - listener filters: and one that does not/, /ok - listener filters: a chain with external auth goes to @portico_listener/, /ok - listener filters: a listener without filters on the same port/, /ok - listener filters: another port is unaffected/, /ok - listener filters: a listener's chain runs in the order written/, /ok - listener filters: a closed listener answers 503/, /ok - listener filters: a null chain is none/, /ok - no request id is made by the router/, /ok - route_set routes by set_by_lua's arguments/, /ok - route_set: an unmatched path is unmatched/, /ok - route_traced_set routes by the same arguments/, /ok - the router's per-request functions create no closures/, 
    /ok - method condition unmet: falls through/, /ok - query regex condition/, /ok - split 3:1 within 6 sd/, /ok - a synchronous chain runs in the router/, /ok - a refusal is answered by @portico_deny/, /ok - a chain that must yield/, /ok - subrequests are not routed/,
    /ok - Prefix is element-wise: \/foobar does not match \/foo/,
    /ok - Exact \/bar\/ does not answer \/bar \(no auto-redirect\)/,
    /ok - the first matching regex wins/,
    /ok - two labels do not/,
    /ok - Content-Length over the profile's limit answers 413/,
    /ok - the other host was not compiled again/,
    /ok - only the requested host is compiled/,
    /ok - 10k hosts: every request routed to its own host/,
    /ok - passthrough host over Portico's TLS: 421 Misdirected Request, nothing proxied/,
  ]);
});

test('Lua passive health: ejection after N failures, success resets, expiry, all-ejected fallback, multi-attempt logs, every algorithm skips', () => {
  run('health_test.lua', [
    /ok - the third failure in a row ejects it/,
    /ok - an ejected endpoint gets no new requests/,
    /ok - success resets: 2 \+ 2 failures do not eject/,
    /ok - expiry after ejectSeconds: not ejected any more/,
    /ok - old failures expire \(2 x ejectSeconds\)/,
    /ok - all-ejected fallback: every endpoint is used, no 503 socket/,
    /ok - 502, 200: the retried attempt is not counted again in the log phase/,
    /ok - 502, 503: the last attempt's listed status is a failure/,
    /ok - no-op without passiveHealth: nothing stored/,
    /ok - passiveHealth removed: the endpoint is used again at once/,
    /ok - another worker's ejection is seen at once/,
  ]);
  run('balancer_test.lua', [
    /ok - round_robin: the ejected endpoint is skipped/,
    /ok - ewma: the ejected endpoint is skipped/,
    /ok - chash: an ejected endpoint's keys fall over to one other endpoint/,
    /ok - cookie balanced: an ejected sticky endpoint falls over to another/,
    /ok - cookie persistent: an ejected sticky endpoint falls over to another/,
    /ok - a retry skips tried and ejected endpoints/,
  ]);
});

test('Lua plugin engine: fixed order, fail closed on unknown ids, per-worker chains dropped on change, consumer overrides, and every plugin but client-cert and snippet (client_cert_test.lua, snippet_test.lua)', () => {
  run('plugins_test.lua', [/ok - basic-auth: apr1 equals openssl/, /ok - basic-auth: an htpasswd \$apr1\$ user passes/, /ok - basic-auth: a crypt\(3\) \$6\$/, /ok - rate-limit: exempt clients/, 
    /ok - engine: handlers run in PLUGIN_ORDER whatever the route's order/,
    /ok - engine: an id the store does not have fails closed with 503/,
    /ok - engine: a changed plugin drops the chains using it and is compiled again/,
    /ok - engine: a consumer's plugin of the same type replaces the route's/,
    /ok - ip-restriction: deny wins over allow/,
    /ok - ip-restriction: an IPv4-mapped IPv6 client is matched as IPv4/,
    /ok - cors: a preflight from an allowed origin is answered 204 by Portico/,
    /ok - cors: …not the parent domain itself, another scheme, or a look-alike/,
    /ok - key-auth: …client-sent X-Consumer-\* are removed/,
    /ok - basic-auth: sha256\$salt\$hex/,
    /ok - basic-auth: bcrypt \$2a\$ and \$2y\$ pass/,
    /ok - basic-auth: at most 200 ms of bcrypt per second per worker/,
    /ok - basic-auth: crypt refuses bcrypt cost 13 and sha512-crypt rounds=500001/,
    /ok - basic-auth: …and computes them at the bound/,
    /ok - basic-auth: a user whose hash is over the bound is refused \(401\), even with the right password/,
    /ok - validate: a basic-auth user with bcrypt cost 31 or sha512-crypt 999999999 rounds is refused/,
    /ok - validate: a consumer's bcrypt hash of cost 31 is refused/,
    /ok - basic-auth: unknown user: the password is checked against a hash of the realm's typical scheme and cost/,
    /ok - basic-auth: unknown consumer user: checked against the namespace's typical hash/,
    /ok - basic-auth: crypto.typical picks the most common cost/,
    /ok - basic-auth: passwords are never logged/,
    /ok - external-auth: 2xx → proxied with the auth response's upstreamHeaders/,
    /ok - external-auth: auth service answering 504 → 503 \(fails closed\)/,
    /ok - auth-url: the client's headers go, with X-Original-URL/,
    /ok - auth-url: …X-Forwarded-Proto removed/,
    /ok - auth-url: auth-signin: 401 → 302 to the sign-in URL with rd/,
    /ok - auth-url: …rd uses \$host when the Host header names another host/,
    /ok - auth-url: a variable cannot break the Location header/,
    /ok - auth-url: auth service answering 504 → 500 \(auth_request\)/,
    /ok - auth-url: auth-always-set-cookie/,
    /ok - auth-cache-key: the second request with the same key is answered from the cache/,
    /ok - auth-cache-duration: per status/,
    /ok - rate-limit: the next one gets 429 with Retry-After/,
    /ok - rate-limit: counters expire once the bucket has drained/,
    /ok - request-headers: set replaces with the literal value/,
    /ok - response-headers: also on Portico's own answers/,
    /ok - redirect: a query cannot break the Location header/,
    /ok - rewrite: regex with \$1\.\. captures/,
    /ok - rewrite: host sets \$portico_upstream_host/,
  ]);
});

test('Lua plugins and consumers as data: one store version, lazy decode, API without credentials, validation of plugins, consumers and route fields', () => {
  run('plugin_data_test.lua', [
    /ok - store: backends, plugins, consumers and routes are published as one version/,
    /ok - store: a full re-read finds plugins and consumers/,
    /ok - API: …never a key or password hash/,
    /ok - API: …and nothing refused was stored/,
    /ok - validate: rewrite with an nginx variable in the replacement/,
    /ok - validate: the three hash formats are accepted/,
    /ok - validate: a passthrough host \(ssl-passthrough\) is true or absent/,
    /ok - validate: external-auth ingress-nginx mode/,
    /ok - validate: auth-url: a sign-in template reading a variable off the allowlist/,
    /ok - validate: a route with split, plugins, observe, websocket and conditions/,
    /ok - validate: route regex condition that does not compile is refused/,
  ]);
});

test('Lua snippet plugin: compiled ingress-nginx snippets — headers, if/return, rewrite/set, the router run and its jump, validation', () => {
  run('snippet_test.lua', [
    /ok - response: more_set_headers sets, add_header adds with \$host/,
    /ok - response: add_header without always skips a 404; with always it is there/,
    /ok - router: the header filter after the jump applies the values evaluated in the router/,
    /ok - router: the log phase drops headers a request left behind/,
    /ok - if: a true condition's return is answered through @portico_deny/,
    /ok - if: …with exactly its text \(newline kept, nothing added\)/,
    /ok - if: ~ sets \$1 for its block/,
    /ok - rewrite: \$1 into the new path; break stops the later rewrites/,
    /ok - rewrite: a replacement with a query sets it, followed by the client's/,
    /ok - rewrite: a URL replacement with permanent answers 301/,
    /ok - values read from the request cannot break a header/,
    /ok - return: header directives after it still apply/,
    /ok - order: the snippet runs after ip-restriction/,
    /ok - a snippet whose regex PCRE refuses fails closed \(503\)/,
    /ok - validate: a compiled snippet is accepted/,
    /ok - validate: refused: nested if/,
    /ok - validate: refused: a variable outside the allowlist/,
  ]);
});

test('Lua custom error pages and mirroring: route variables, default-backend fallback, the mirror balancer and its slots, errors.lua, validation', () => {
  run('errors_mirror_test.lua', [/ok - errors.lua: the default backend is balanced, with the global timeouts \(the hand-off was dropped\)/, /ok - the router names the backend's upstream/, /ok - …an id of another shape is its own name/, /ok - …the router's upstream name is cleared/, /ok - a backend with endpoints keeps the router's upstream name/, /ok - …the route's upstream name cleared/, /ok - …named as ingress-nginx names its upstream/, 
    /ok - …\$portico_error_route carries the backend and the X-\* values/,
    /ok - custom-http-errors with --default-backend-service: its backend in \$portico_error_route, still no fallback/,
    /ok - …the route's own default backend wins over it/,
    /ok - validate: an error page with --default-backend-service's backend/,
    /ok - validate: errorPage backendId with a slash is refused/,
    /ok - unmatched backend: a path no rule matches is proxied to the default backend/,
    /ok - unmatched backend: an unknown host reaches the catch-all host and the default backend/,
    /ok - a host without it still answers 404 itself/,
    /ok - validate: a host's unmatchedBackendId with a space is refused/,
    /ok - mirror with \$request_uri: the client's URI as sent/,
    /ok - a route without them sets none of the variables/,
    /ok - no endpoint \+ default-backend: the default backend's endpoint/,
    /ok - endpoints back \(data only\): the route's own backend again/,
    /ok - …\$portico_backend and \$portico_set_cookie untouched, no cookie header/,
    /ok - with a default backend: on to @portico_errors/,
    /ok - without a default backend: nginx's own page for the code/,
    /ok - validate: mirror host with CR\/LF is refused/,
    /ok - two whole copies: both targets by slot, the request's Host and URI/,
    /ok - shares: each slot with its probability \(1\/5, whole, 25\/50\)/,
    /ok - mirror_pick: a slot the list does not have answers 204 itself/,
    /ok - mirror_pick: a share of 0.2 copies about 20 % of the requests/,
    /ok - mirror_pick: two slots of 0.5 are drawn independently/,
    /ok - the mirror balancer in slot 1: slot 1's backend/,
    /ok - a list of slots in the one-copy location: the 503 socket/,
    /ok - validate: several copies with shares/,
    /ok - validate: a share of all is refused/,
    /ok - validate: several copies over https is refused/,
  ]);
});

test('Lua plugin registry: a plugin is one module and one registry line — engine order, validation, log hook; a registry out of order refuses to load', () => {
  run('registry_test.lua', [
    /ok - registry: one added line loads the new module/,
    /ok - registry: validate.lua checks the new type with the module's check/,
    /ok - registry: the engine runs the new plugin in its order \(after rewrite\)/,
    /ok - registry: the module's log hook runs in the log phase/,
    /ok - registry: a module whose order does not ascend down the list is refused/,
  ]);
});

test('Lua tracing (OpenTelemetry): traceparent parsing, which routes trace, sampling and propagation, the bounded queue, OTLP JSON, batched export', () => {
  run('tracing_test.lua', [
    /ok - traceparent: version ff, zero ids, upper case, short are invalid/,
    /ok - global on: enable-opentelemetry false opts out/,
    /ok - operation name: request variables read when a sampled span starts/,
    /ok - trusted traceparent: the trace is continued, Portico's span is the upstream's parent/,
    /ok - parent-based: an unsampled parent is not sampled/,
    /ok - AlwaysOff, untrusted: nothing recorded, the client's traceparent is not passed on/,
    /ok - TraceIdRatioBased 0.01: about 1 % of 20000 sampled/,
    /ok - log: what does not fit is dropped and counted/,
    /ok - encode: attributes, old and stable names/,
    /ok - export: 3 spans in batches of 2 = 2 POSTs/,
    /ok - export: a dead collector drops the batch \(counted\) and keeps the rest for the next tick/,
  ]);
});

test('Lua external-auth on the request\'s own host ($host in auth-url): the host\'s route for the auth path, fail closed without one, on a loop or another namespace; variables in the auth URL', () => {
  run('own_host_auth_test.lua', [
    /ok - own host: the subrequest goes to the backend of the host's route for the auth path/,
    /ok - own host: a host without a route for the auth path fails closed/,
    /ok - own host: the host's catch-all "\/" \(the application, not an auth service\) does not count/,
    /ok - own host: a route for the auth path that requires auth-url itself fails closed \(no recursion\)/,
    /ok - own host: a route whose backend is another namespace's fails closed/,
    /ok - auth URL variables: filled from the request, percent-encoded/,
    /ok - check: own host with a host, a variable in the path, an unknown variable or a bad namespace is refused/,
  ]);
});

test('Lua external-auth with auth-snippet: set / if / request-header statements shape the auth subrequest after auth-proxy-set-headers, the request is put back, the auth answer decides; check refuses what does not apply there', () => {
  run('auth_snippet_test.lua', [
    /ok - check: a valid auth snippet passes/,
    /ok - auth snippet: the auth subrequest carries the snippet's headers/,
    /ok - auth snippet: …after auth-proxy-set-headers/,
    /ok - auth snippet: the proxied request is put back as the client sent it/,
    /ok - auth snippet: the auth service's 403 \(decided on the snippet's header\) denies/,
    /ok - auth snippet: an if block's set applies when its condition holds/,
    /ok - auth snippet: a control character a client sent is percent-encoded/,
    /ok - check: return, rewrite and response headers do not apply to the auth subrequest/,
    /ok - check: the auth location's own URI and query variables are refused/,
  ]);
});

test('Lua rate-limit policy redis (global-rate-limit): RESP client, sliding window, counting in Redis, refusals remembered, fail open/closed counted, keys per plugin, templates, check, access-phase chains', () => {
  run('redis_limit_test.lua', [
    /ok - resp: a command is an array of bulk strings, binary-safe/,
    /ok - resp: a bulk longer than the bound is a protocol error/,
    /ok - window: the wait is until the previous window's share has decayed enough/,
    /ok - redis: `limit` requests pass in a window, the next gets 429/,
    /ok - redis: one counter per plugin key, sample and window; the refused request is not counted/,
    /ok - redis: a refused client is refused from memory until it may pass again/,
    /ok - redis: the next window starts with the previous one's weighted count/,
    /ok - fail open: each is counted/,
    /ok - fail open: logged once per 10 s/,
    /ok - fail closed: 503/,
    /ok - a reply that is not RESP: the connection is closed/,
    /ok - keys: two namespaces' Ingresses never share a counter/,
    /ok - keys: a sample longer than 64 bytes is hashed/,
    /ok - exempt: ignored CIDRs are never limited and cost no Redis call/,
    /ok - engine: …and so does an auth chain/,
    /ok - engine: without any Redis rate limit an auth chain runs in the router again/,
    /ok - consumer: its own policy-redis rate limit counts the consumer across addresses, in Redis/,
    /ok - check: a variable outside the allowlist is refused/,
  ]);
});

test('Lua digest-auth (auth-type: digest): challenge, RFC 7616 answers (MD5, qop=auth), forged and expired nonces, nc replays, uri and method bound, parser bounds, satisfy any, zone full, validation', () => {
  run('digest_auth_test.lua', [
    /ok - digest: no credentials → 401 with a Digest challenge/,
    /ok - digest: the right answer passes/,
    /ok - digest: a wrong password → 401, not stale/,
    /ok - digest: an unknown user → 401, not stale/,
    /ok - replay: the same answer again → 401 stale=true/,
    /ok - replay: a higher nc passes/,
    /ok - expiry: the right answer for an expired nonce → 401 stale=true/,
    /ok - expiry: a wrong answer for an expired nonce → 401, not stale/,
    /ok - forgery: a made-up nonce with a wrong answer → 401, not stale/,
    /ok - forgery: …with a wrong answer, not stale/,
    /ok - forgery: no nonce was recorded for any of them/,
    /ok - forgery: after a restart \(new key\) an old nonce with the right answer → 401 stale=true/,
    /ok - workers: a nonce issued by one worker is good at another/,
    /ok - uri: an answer for another path → 401/,
    /ok - method: a GET answer sent with POST → 401/,
    /ok - qop: a client without qop \(RFC 2069\) is refused/,
    /ok - parse: a header over 4 KiB is refused/,
    /ok - satisfy any: the digest answer alone lets the request through/,
    /ok - zone full: the right answer is refused with 503/,
    /ok - validate: a realm with ":" is refused/,
    /ok - nonceSeconds: …and stale after it/,
  ]);
});
