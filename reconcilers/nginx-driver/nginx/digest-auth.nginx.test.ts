// ingress-nginx's auth-type: digest inside a real nginx: the configuration is the pure translation of Ingresses whose
// auth-secret is an htdigest file, rendered, checked by nginx -t and loaded; the digest-auth Lua plugin answers.
// A client written here does the RFC 7616 handshake (HA1, HA2, response) — right and wrong passwords, forged,
// replayed and expired nonces — and curl --digest checks that a common client interoperates. The backend ("echo"
// kind of testnet-backend.test-helpers.ts) runs in this file's own network namespace, testnet.test-helpers.ts subnet
// 219. Ports 33420-33429 belong to this file: nginx 33420-33422, the backend 33423.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import winston from 'winston';
import { translate } from '../../translate/translate.ts';
import { structureChecksum } from '../../translate/diff.ts';
import { OPTS, ing, modelOf, rule, slice, svc, svcRef } from '../../translate/fixtures.test-helpers.ts';
import { normalizeIngress } from '../../model/normalize.ts';
import type { GatewayConfig } from '../../config/types.ts';
import { TestNet } from './testnet.test-helpers.ts';
import { liveNginx, sendTo, startLive, stopLive, type Answer } from './live.test-helpers.ts';

const LISTEN = { httpPort: 33420, httpsPort: 33421, statusPort: 33422, address: '127.0.0.1' };
const BACKEND_PORT = 33423;
const net = new TestNet(219);
const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });
const { nginx, dynamic } = liveNginx('portico-digest-', logger);

const A = 'nginx.ingress.kubernetes.io/';
const REALM = 'Team Area';
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const HTDIGEST = `ann:${REALM}:${md5(`ann:${REALM}:pa55word`)}\nbob:Elsewhere:${md5('bob:Elsewhere:x')}\n`;
// digest.example.com as annotations make it; short.example.com the same with nonces good for 2 s (set on the
// translated instance: annotations always give 300 s), to see expiry without waiting five minutes.
const HOSTS = ['digest.example.com', 'short.example.com'];
let config: GatewayConfig;

before(async () => {
  net.up();
  await net.start('app', BACKEND_PORT, 'echo');
  const m = modelOf({
    services: [svc('app', [{ name: 'http', port: 80, targetPort: BACKEND_PORT }])],
    slices: [slice('app-1', 'app', [{ name: 'http', port: BACKEND_PORT }], [{ ip: net.ip }])],
  });
  const secret = { auth: Buffer.from(HTDIGEST).toString('base64') };
  for (const [i, h] of HOSTS.entries()) {
    const annotations = { [`${A}auth-type`]: 'digest', [`${A}auth-secret`]: 'users', [`${A}auth-realm`]: REALM };
    const n = normalizeIngress(ing(`d${i}`, { rules: [rule(h, [{ path: '/', backend: svcRef('app', 80) }])] }, { annotations }), (k) => (k === 'default/users' ? { data: secret } : undefined));
    assert.ok(n.ok);
    // bob's line is of another realm: reported, not used.
    assert.match(n.ingress.problems.join('\n'), /line 2 of "auth": its realm is not "Team Area"/);
    m.setIngress(n.ingress);
  }
  const r = translate(m.snapshot(), { ...OPTS, listen: LISTEN });
  const short = r.config.data.routes['short.example.com']?.rules[0]?.route.plugins?.[0] ?? '';
  const inst = r.config.data.plugins[short];
  assert.equal(inst?.type, 'digest-auth');
  r.config.data.plugins[short] = { ...inst, nonceSeconds: 2 } as typeof inst;
  config = r.config;
  await startLive(nginx, dynamic, config);
});
after(() => stopLive(nginx, dynamic, net));

/** The parameters of a Digest challenge. */
function challenge(a: Answer): Record<string, string> {
  const h = String(a.headers['www-authenticate'] ?? '');
  assert.match(h, /^Digest /, `a Digest challenge: ${h}`);
  const out: Record<string, string> = {};
  for (const m of h.slice(7).matchAll(/([a-z]+)=(?:"([^"]*)"|([^,\s]*))/g)) out[m[1] as string] = m[2] ?? m[3] ?? '';
  return out;
}

/** What an RFC 7616 client sends for `c`'s nonce (MD5, qop=auth). */
function authorization(c: Record<string, string>, o: { user?: string; password?: string; method?: string; uri: string; nc?: number; cnonce?: string }): string {
  const user = o.user ?? 'ann';
  const nc = (o.nc ?? 1).toString(16).padStart(8, '0');
  const cnonce = o.cnonce ?? 'c0ffee42';
  const ha1 = md5(`${user}:${c.realm}:${o.password ?? 'pa55word'}`);
  const ha2 = md5(`${o.method ?? 'GET'}:${o.uri}`);
  const response = md5(`${ha1}:${c.nonce}:${nc}:${cnonce}:auth:${ha2}`);
  return `Digest username="${user}", realm="${c.realm}", nonce="${c.nonce}", uri="${o.uri}", algorithm=MD5, qop=auth, nc=${nc}, cnonce="${cnonce}", response="${response}", opaque="${c.opaque}"`;
}

const get = (host: string, p: string, authorization?: string, method = 'GET') => sendTo(LISTEN.httpPort, host, p, { method, ...(authorization ? { headers: { authorization } } : {}) });
const stale = (a: Answer) => /, stale=true$/.test(String(a.headers['www-authenticate']));

test('digest: the challenge, the right answer → 200 from the backend (without the credentials), the wrong password → 401', async () => {
  const first = await get('digest.example.com', '/private?x=1');
  assert.equal(first.status, 401);
  const c = challenge(first);
  assert.deepEqual([c.realm, c.qop, c.algorithm, c.stale], [REALM, 'auth', 'MD5', undefined]);
  assert.match(c.nonce ?? '', /^[0-9a-f]{64}$/);
  assert.match(c.opaque ?? '', /^[0-9a-f]{32}$/);

  const ok = await get('digest.example.com', '/private?x=1', authorization(c, { uri: '/private?x=1' }));
  assert.equal(ok.status, 200, ok.body);
  const seen = JSON.parse(ok.body) as { url: string; headers: Record<string, string> };
  assert.equal(seen.url, '/private?x=1');
  assert.equal(seen.headers.authorization, undefined, 'the credentials stay at the proxy (as ingress-nginx clears them)');

  // The same nonce with the next nc, each on a new connection (any worker: the nonce key is in shared memory).
  for (let nc = 2; nc <= 6; nc++) assert.equal((await get('digest.example.com', '/p', authorization(c, { uri: '/p', nc }))).status, 200, `nc ${nc}`);

  const wrong = await get('digest.example.com', '/p', authorization(c, { uri: '/p', nc: 7, password: 'nope' }));
  assert.equal(wrong.status, 401);
  assert.equal(stale(wrong), false, 'a wrong password is not stale: the user is asked again');
  const otherRealm = await get('digest.example.com', '/p', authorization({ ...c, realm: 'Elsewhere' }, { user: 'bob', password: 'x', uri: '/p', nc: 8 }));
  assert.equal(otherRealm.status, 401, "a user of the file's other realm is not a user here");
  const unknown = await get('digest.example.com', '/p', authorization(c, { user: 'zed', uri: '/p', nc: 9 }));
  assert.equal(unknown.status, 401);
  // The answer binds the method and the URI.
  assert.equal((await get('digest.example.com', '/p', authorization(c, { uri: '/p', nc: 10 }), 'POST')).status, 401, 'an answer for GET sent with POST');
  assert.equal((await get('digest.example.com', '/admin', authorization(c, { uri: '/p', nc: 11 }))).status, 401, 'an answer for /p sent for /admin');
  assert.equal((await get('digest.example.com', '/p', authorization(c, { uri: '/p', nc: 12, method: 'POST' }), 'POST')).status, 200, 'POST answered for POST');
});

test('digest: a forged nonce → 401 (stale=true only for an answer right for it, as RFC 7616 says); a replayed or lower nc → 401 stale=true', async () => {
  const c = challenge(await get('digest.example.com', '/'));
  const nonce = c.nonce as string;
  const flipped = nonce.slice(0, -1) + (nonce.endsWith('0') ? '1' : '0');
  // A younger time stamp on a real nonce (the MAC covers it).
  const stamp = (parseInt(nonce.slice(0, 8), 16) + 60).toString(16).padStart(8, '0');
  for (const bad of [flipped, stamp + nonce.slice(8)]) {
    const right = await get('digest.example.com', '/', authorization({ ...c, nonce: bad }, { uri: '/' }));
    assert.deepEqual([right.status, stale(right)], [401, true], `${bad}: never let in; the client may retry with the new nonce`);
    const wrong = await get('digest.example.com', '/', authorization({ ...c, nonce: bad }, { uri: '/', password: 'nope' }));
    assert.deepEqual([wrong.status, stale(wrong)], [401, false], `${bad}: a wrong answer is never stale`);
  }

  const once = authorization(c, { uri: '/', nc: 5 });
  assert.equal((await get('digest.example.com', '/', once)).status, 200);
  const replay = await get('digest.example.com', '/', once);
  assert.equal(replay.status, 401, 'the same request again (same nonce and nc) is refused');
  assert.ok(stale(replay), 'stale=true: a client that did send it twice takes a new nonce without asking the user');
  const lower = await get('digest.example.com', '/', authorization(c, { uri: '/', nc: 3 }));
  assert.deepEqual([lower.status, stale(lower)], [401, true]);
  // The new nonce of a stale answer works at once.
  const fresh = challenge(replay);
  assert.equal((await get('digest.example.com', '/', authorization(fresh, { uri: '/' }))).status, 200);
});

test('digest: an expired nonce → 401 stale=true for the right answer, not stale for a wrong one; nonces of one Ingress are not good at another', async () => {
  const c = challenge(await get('short.example.com', '/'));
  assert.equal((await get('short.example.com', '/', authorization(c, { uri: '/' }))).status, 200, 'good while young');
  // Good for 2 s: ngx.time() has whole seconds, so past 3 s it is expired whatever the rounding.
  await new Promise((r) => setTimeout(r, 3_200));
  const late = await get('short.example.com', '/', authorization(c, { uri: '/', nc: 2 }));
  assert.deepEqual([late.status, stale(late)], [401, true]);
  const lateWrong = await get('short.example.com', '/', authorization(c, { uri: '/', nc: 3, password: 'nope' }));
  assert.deepEqual([lateWrong.status, stale(lateWrong)], [401, false]);
  const fresh = challenge(late);
  assert.equal((await get('short.example.com', '/', authorization(fresh, { uri: '/' }))).status, 200);
  // The same realm and users on another Ingress: its nonces are bound to their plugin instance, refused there (the
  // answer is right for the nonce it names: stale) — with that Ingress's own opaque, or not (another opaque is
  // refused before the nonce is looked at: not stale).
  const own = challenge(await get('digest.example.com', '/'));
  const elsewhere = await get('digest.example.com', '/', authorization({ ...fresh, opaque: own.opaque as string }, { uri: '/', nc: 2 }));
  assert.deepEqual([elsewhere.status, stale(elsewhere)], [401, true]);
  const otherOpaque = await get('digest.example.com', '/', authorization(fresh, { uri: '/', nc: 3 }));
  assert.deepEqual([otherOpaque.status, stale(otherOpaque)], [401, false]);
});

test('digest: nonces outlive a reload (the key is in a shared dict that nginx keeps)', async () => {
  const c = challenge(await get('digest.example.com', '/'));
  assert.equal((await get('digest.example.com', '/', authorization(c, { uri: '/' }))).status, 200);
  assert.ok(await nginx.reload(structureChecksum(config.structure)));
  assert.equal((await get('digest.example.com', '/', authorization(c, { uri: '/', nc: 2 }))).status, 200, 'the nonce of before the reload');
  const replay = await get('digest.example.com', '/', authorization(c, { uri: '/', nc: 2 }));
  assert.deepEqual([replay.status, stale(replay)], [401, true], 'and its nc record too');
});

const run = promisify(execFile);
async function curl(args: string[]): Promise<{ code: string; body: string }> {
  const r = await run('curl', ['-sS', '--max-time', '10', '-H', 'Host: digest.example.com', '-w', '\n%{http_code}', ...args], { encoding: 'utf8' });
  const i = r.stdout.lastIndexOf('\n');
  return { code: r.stdout.slice(i + 1), body: r.stdout.slice(0, i) };
}

test('curl --digest (a common client) gets in with the password, with a query and with POST, and not without it', async () => {
  const base = `http://127.0.0.1:${LISTEN.httpPort}`;
  const ok = await curl(['--digest', '-u', 'ann:pa55word', `${base}/curl?q=a%20b&n=1`]);
  assert.equal(ok.code, '200', ok.body);
  assert.equal((JSON.parse(ok.body) as { url: string }).url, '/curl?q=a%20b&n=1');
  const post = await curl(['--digest', '-u', 'ann:pa55word', '--data', 'x=1', `${base}/form`]);
  assert.equal(post.code, '200', post.body);
  assert.equal((JSON.parse(post.body) as { method: string }).method, 'POST');
  assert.equal((await curl(['--digest', '-u', 'ann:wrong', `${base}/curl`])).code, '401');
  assert.equal((await curl(['--digest', '-u', 'zed:pa55word', `${base}/curl`])).code, '401');
});
