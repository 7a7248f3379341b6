// ingress-nginx's snippet annotations (configuration-snippet, server-snippet), the safe way. Portico has no
// per-Ingress location in nginx.conf to paste raw text into, and would not paste it if it had: a snippet is read
// with nginx's own lexical rules (tokenize), checked against an allowlist of directives with validated arguments,
// and compiled into data (SnippetStatement[], reconcilers/config/types.ts) that the Lua snippet plugin
// (nginx-assets/lua/portico/plugins/snippet.lua) runs per request. Anything else — Lua, include, load_module, file
// paths, proxy_pass, access directives, a directive not on the list, a variable not on the list — refuses the
// whole snippet with a message naming the directive (or variable) and the line; nothing of a refused snippet runs.
//
// The allowlist (and where nginx allows each one):
//   more_set_headers [-s statuses] [-t types] "Name: value"...   response header, replaced (empty value: removed)
//   more_clear_headers [-s statuses] [-t types] Name...          response header removed ("X-*" = a prefix)
//   more_set_input_headers [-r] [-t types] "Name: value"...      request header to the backend
//   more_clear_input_headers [-t types] Name...
//   add_header Name value [always]                               response header appended (2xx/3xx, or always)
//   proxy_set_header Name value                                  request header to the backend (not inside if)
//   set $name value                                              a variable of this snippet
//   return code [text | URL] / return URL                        Portico answers (3xx with a Location)
//   rewrite regex replacement [last | break | redirect | permanent]
//   break
//   if (condition) { ... }                                       ($v), ($v = s), ($v != s), ($v ~ re), ~*, !~, !~*
// Values may read only: $host, $uri, $document_uri, $request_uri, $args, $query_string, $is_args, $scheme, $https,
// $remote_addr, $request_method, $server_name, $server_protocol, $content_type, $content_length, $http_<name>,
// $arg_<name>, $cookie_<name>, $1..$9 (after a regex) and variables `set` earlier in the same snippet.
//
// auth-snippet (kind "auth"): ingress-nginx pastes it into the auth subrequest's location; here it is compiled into
// the external-auth instance (external_auth.lua runs it on the headers of the subrequest, after
// auth-proxy-set-headers). Only what shapes that subrequest applies: proxy_set_header (not Host), more_set_input_headers,
// more_clear_input_headers, set and if (with set / more_*_input_headers inside). return, rewrite, break and the
// response-header directives would answer or change what the auth service decides and are refused by name, as are
// $uri, $document_uri, $args, $query_string, $is_args and $arg_* (the auth location's own there, not the client's).
import type { SnippetCondition, SnippetStatement, SnippetValue } from '../config/types.ts';
import { checkRegex, fail, SnippetError, tokenize, type Token } from './snippet-syntax.ts';

export { checkRegex, MAX_SNIPPET, SnippetError, tokenize, type Token } from './snippet-syntax.ts';

const MAX_STATEMENTS = 256;
const MAX_VALUE = 4096;

// ---- structure: directives and blocks -------------------------------------------------------------------------

export interface Directive {
  name: string;
  args: Extract<Token, { kind: 'word' }>[];
  line: number;
  block?: Directive[];
}

/** Groups tokens into directives ("name args... ;" or "name args... { ... }"); refuses unbalanced braces. */
export function parse(tokens: Token[]): Directive[] {
  let i = 0;
  const block = (depth: number, openLine: number): Directive[] => {
    const out: Directive[] = [];
    for (;;) {
      const t = tokens[i];
      if (!t) {
        if (depth > 0) fail(openLine, 'unbalanced "{": the block is never closed');
        return out;
      }
      if (t.kind === '}') {
        if (depth === 0) fail(t.line, 'unbalanced "}": nothing to close');
        i++;
        return out;
      }
      if (t.kind === ';') fail(t.line, 'unexpected ";" (an empty directive)');
      if (t.kind === '{') fail(t.line, 'unexpected "{" (a block without a directive)');
      const words: Extract<Token, { kind: 'word' }>[] = [];
      const first = t as Extract<Token, { kind: 'word' }>;
      for (;;) {
        const w = tokens[i];
        if (!w) fail(first.line, `directive "${first.text}" is not terminated by ";"`);
        const tok = w as Token;
        if (tok.kind === 'word') {
          words.push(tok);
          i++;
          continue;
        }
        if (tok.kind === '}') fail(tok.line, `directive "${first.text}" is not terminated by ";" before "}"`);
        i++;
        const [name, ...args] = words as [Extract<Token, { kind: 'word' }>, ...Extract<Token, { kind: 'word' }>[]];
        if (tok.kind === ';') out.push({ name: name.text, args, line: name.line });
        // Only `if` takes a block: anything else (a *_by_lua_block, location, server...) is refused before its
        // content is even looked at.
        else if (name.text !== 'if') fail(name.line, notAllowed(name.text, 'location'));
        else out.push({ name: name.text, args, line: name.line, block: block(depth + 1, tok.line) });
        break;
      }
    }
  };
  return block(0, 0);
}

// ---- the allowlist ---------------------------------------------------------------------------------------------

export type SnippetKind = 'location' | 'server' | 'auth';
type Context = SnippetKind | 'if-location' | 'if-server' | 'if-auth';

const HEADER_DIRECTIVES = ['more_set_headers', 'more_clear_headers', 'more_set_input_headers', 'more_clear_input_headers', 'add_header'];
const REWRITE_DIRECTIVES = ['set', 'return', 'rewrite', 'break'];
const ALLOWED: Record<Context, Set<string>> = {
  location: new Set([...HEADER_DIRECTIVES, ...REWRITE_DIRECTIVES, 'proxy_set_header', 'if']),
  server: new Set([...HEADER_DIRECTIVES, ...REWRITE_DIRECTIVES, 'proxy_set_header', 'if']),
  'if-location': new Set([...HEADER_DIRECTIVES, ...REWRITE_DIRECTIVES]),
  'if-server': new Set(REWRITE_DIRECTIVES),
  // auth-snippet: what shapes the auth subrequest — the headers sent to the auth service and the variables they read.
  auth: new Set(['proxy_set_header', 'more_set_input_headers', 'more_clear_input_headers', 'set', 'if']),
  'if-auth': new Set(['more_set_input_headers', 'more_clear_input_headers', 'set']),
};
const AUTH_ALLOWED = 'proxy_set_header, more_set_input_headers, more_clear_input_headers, set, if';
const ALL_ALLOWED = new Set([...HEADER_DIRECTIVES, ...REWRITE_DIRECTIVES, 'proxy_set_header', 'if']);

/** Why a directive that is not on the allowlist is refused (the usual suspects get a reason of their own). */
function notAllowed(name: string, ctx: Context): string {
  const n = name.toLowerCase();
  if (ctx === 'auth' || ctx === 'if-auth') {
    const why = authNotAllowed(n, ctx);
    if (why) return `directive "${name}" ${why}`;
  }
  if (ALL_ALLOWED.has(n)) {
    return ctx.startsWith('if')
      ? `directive "${name}" is not allowed inside an if block of a ${ctx === 'if-server' ? 'server-snippet' : 'configuration-snippet'} (nginx refuses it there too)`
      : `directive "${name}" is not allowed here`;
  }
  if (n.includes('by_lua') || n.startsWith('lua_') || n.includes('_lua_')) return `directive "${name}" runs Lua code and is never accepted`;
  if (n === 'include' || n === 'load_module') return `directive "${name}" reads files and is never accepted`;
  if (n === 'root' || n === 'alias' || n.endsWith('_file') || n.endsWith('_path') || n === 'try_files' || n.endsWith('_log') || n.startsWith('ssl_') || n === 'error_page')
    return `directive "${name}" names files on the controller and is never accepted`;
  if (n.endsWith('_pass') || n === 'mirror' || n.startsWith('proxy_') || n.startsWith('grpc_') || n.startsWith('fastcgi_') || n.startsWith('uwsgi_') || n.startsWith('scgi_'))
    return `directive "${name}" changes how or where requests are proxied and is not accepted (only proxy_set_header is)`;
  if (['allow', 'deny', 'satisfy', 'auth_basic', 'auth_basic_user_file', 'auth_request', 'auth_request_set', 'auth_jwt'].includes(n))
    return `directive "${name}" is access control, which Portico does not run from snippets (use the allowlist-source-range / denylist-source-range / auth-* annotations or Plugin objects)`;
  if (n === 'location' || n === 'server' || n === 'http' || n === 'upstream' || n === 'map' || n === 'geo' || n === 'limit_except')
    return `"${name}" blocks are not supported in snippets (Portico has no per-Ingress nginx blocks)`;
  if (ctx === 'auth' || ctx === 'if-auth') return `directive "${name}" is not on the allowlist of an auth-snippet (${AUTH_ALLOWED})`;
  return `directive "${name}" is not on the allowlist (more_set_headers, more_clear_headers, more_set_input_headers, more_clear_input_headers, add_header, proxy_set_header, set, return, rewrite, break, if)`;
}

/**
 * Why a directive nginx would accept in ingress-nginx's auth location is not applied to Portico's auth subrequest
 * (undefined: the general reasons of notAllowed apply).
 */
function authNotAllowed(n: string, ctx: 'auth' | 'if-auth'): string | undefined {
  if (n === 'return') return 'would answer the auth subrequest in place of the auth service; Portico does not run it there (an auth-snippet may only shape the subrequest: ' + AUTH_ALLOWED + ')';
  if (n === 'rewrite' || n === 'break') return `would change the auth location's own URI or stop its rewrite phase, which Portico's auth subrequest does not have (an auth-snippet may use ${AUTH_ALLOWED})`;
  if (n === 'add_header' || n === 'more_set_headers' || n === 'more_clear_headers')
    return `would change the auth service's response, which Portico does not do (an auth-snippet may use ${AUTH_ALLOWED})`;
  if (n === 'proxy_set_header' && ctx === 'if-auth') return 'is not allowed inside an if block (nginx refuses it there too)';
  return undefined;
}

/** Request variables a snippet may read; $http_*, $arg_*, $cookie_* are checked by pattern. */
const VARIABLES = new Set(['host', 'uri', 'document_uri', 'request_uri', 'args', 'query_string', 'is_args', 'scheme', 'https', 'remote_addr', 'request_method', 'server_name', 'server_protocol', 'content_type', 'content_length']);
const PREFIXED = /^(?:http|arg|cookie)_[a-z0-9_]{1,128}$/;

interface Scope {
  /** Variables `set` so far (lower-case). */
  vars: Set<string>;
  /** A regex came before (textually), so $1..$9 may be read. */
  captures: boolean;
  statements: number;
  /** An auth-snippet: the variables of the auth location's own URI and query are refused. */
  auth?: boolean;
}

/**
 * In ingress-nginx's auth location these are the subrequest's own (its internal location, no query), not the
 * client's: Portico runs the auth-snippet before its subrequest, where they would be the client's — refused rather
 * than silently different.
 */
const AUTH_LOCATION_VARS = new Set(['uri', 'document_uri', 'args', 'query_string', 'is_args']);

/** Compiles a value with variables ("prefix $host ${uri}x $1") into parts. */
function value(text: string, line: number, scope: Scope): SnippetValue {
  if (text.length > MAX_VALUE) fail(line, `a value is longer than ${MAX_VALUE} characters`);
  const out: SnippetValue = [];
  let lit = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c !== '$') {
      lit += c;
      i++;
      continue;
    }
    let name: string;
    if (text[i + 1] === '{') {
      const close = text.indexOf('}', i + 2);
      name = close < 0 ? '' : text.slice(i + 2, close);
      if (!/^[A-Za-z0-9_]+$/.test(name)) fail(line, `invalid variable name in ${JSON.stringify(text.slice(i, i + 40))}`);
      i = close + 1;
    } else if (/[0-9]/.test(text[i + 1] ?? '')) {
      name = text[i + 1] as string;
      i += 2;
    } else {
      const m = /^[A-Za-z0-9_]+/.exec(text.slice(i + 1));
      if (!m) fail(line, `a "$" that does not start a variable name in ${JSON.stringify(text.slice(Math.max(0, i - 20), i + 20))}`);
      name = (m as RegExpExecArray)[0];
      i += 1 + name.length;
    }
    if (lit) out.push(lit);
    lit = '';
    const lower = name.toLowerCase();
    if (/^[0-9]+$/.test(name)) {
      const k = Number(name);
      if (k < 1 || k > 9) fail(line, `capture $${name}: only $1 to $9 can be read`);
      if (!scope.captures) fail(line, `capture $${name} is read before any regex (if ~ or rewrite) in this snippet`);
      out.push({ c: k });
    } else if (scope.vars.has(lower)) out.push({ s: lower });
    else if (scope.auth && (AUTH_LOCATION_VARS.has(lower) || lower.startsWith('arg_')))
      fail(line, `variable $${name} is not allowed in an auth-snippet: in ingress-nginx's auth location it is the auth subrequest's own (its internal URI, no query), not the client's; $request_uri is the client's`);
    else if (VARIABLES.has(lower) || PREFIXED.test(lower)) out.push({ v: lower });
    else fail(line, `variable $${name} is not allowed (allowed: $${[...VARIABLES].join(', $')}, $http_<name>, $arg_<name>, $cookie_<name>, $1-$9 after a regex, and variables set earlier in this snippet)`);
  }
  if (lit) out.push(lit);
  return out;
}

/** Headers an auth-snippet may not set on the auth subrequest (as auth-proxy-set-headers, groups/external-auth.ts). */
const AUTH_REFUSED_HEADERS = new Set(['host', 'proxy-connection']);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** Headers that frame the message: changing them would break or smuggle requests. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer']);

function headerName(name: string, line: number, o: { wildcard?: boolean; request?: boolean } = {}): string {
  const wild = o.wildcard && name.endsWith('*') ? '*' : '';
  const base = wild ? name.slice(0, -1) : name;
  if (!TOKEN.test(base) || base.includes('*')) fail(line, `invalid header name ${JSON.stringify(name.slice(0, 80))}`);
  const lower = base.toLowerCase();
  if (!wild && FRAMING.has(lower)) fail(line, `header ${base} frames the message and cannot be changed`);
  if (wild && [...FRAMING].some((f) => f.startsWith(lower))) fail(line, `pattern ${name} would match ${[...FRAMING].find((f) => f.startsWith(lower))}, which frames the message`);
  if (o.request && (lower === 'host' || lower === 'expect')) fail(line, `request header ${base} cannot be changed with this directive${lower === 'host' ? ' (proxy_set_header Host can set the Host sent to the backend)' : ''}`);
  return base + wild;
}

/** Checks a literal value (after variables were split out): printable ASCII and tab; no CR/LF. */
function printable(v: SnippetValue, line: number, what: string): SnippetValue {
  for (const p of v) if (typeof p === 'string' && /[^\t\x20-\x7e]/.test(p)) fail(line, `${what} contains a control character (CR, LF...); only printable ASCII and tab are accepted`);
  return v;
}

function statusList(text: string, line: number): number[] {
  const out: number[] = [];
  for (const s of text.split(/\s+/).filter(Boolean)) {
    if (!/^[1-5][0-9][0-9]$/.test(s)) fail(line, `invalid status ${JSON.stringify(s)} in -s (100-599)`);
    out.push(Number(s));
  }
  if (!out.length) fail(line, '-s needs at least one status');
  return out;
}
function typeList(text: string, line: number): string[] {
  const out: string[] = [];
  for (const s of text.split(/\s+/).filter(Boolean)) {
    if (!/^[A-Za-z0-9!#$&^_.+-]{1,64}\/[A-Za-z0-9!#$&^_.+*-]{1,64}$/.test(s)) fail(line, `invalid content type ${JSON.stringify(s.slice(0, 80))} in -t`);
    out.push(s.toLowerCase());
  }
  if (!out.length) fail(line, '-t needs at least one content type');
  return out;
}

/** The options (-s, -t, -r) and the remaining arguments of a headers-more directive. */
function moreOptions(d: Directive, allowed: string) {
  const o: { statuses?: number[]; types?: string[]; replaceOnly?: boolean; rest: Directive['args'] } = { rest: [] };
  const args = d.args;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as Directive['args'][number];
    if (!a.quoted && a.text.startsWith('-')) {
      const opt = a.text;
      if (!allowed.includes(opt[1] ?? '?') || opt.length !== 2) fail(d.line, `${d.name}: option ${JSON.stringify(opt)} is not supported (${allowed.split('').map((x) => `-${x}`).join(', ')} only)`);
      if (opt === '-r') {
        o.replaceOnly = true;
        continue;
      }
      const v = args[++i];
      if (!v) fail(d.line, `${d.name}: option ${opt} needs a value`);
      if (opt === '-s') o.statuses = [...(o.statuses ?? []), ...statusList((v as { text: string }).text, d.line)];
      else o.types = [...(o.types ?? []), ...typeList((v as { text: string }).text, d.line)];
      continue;
    }
    o.rest.push(a);
  }
  if (!o.rest.length) fail(d.line, `${d.name} needs at least one header`);
  return o;
}

/** "Name: value" of more_set_headers / more_set_input_headers. */
function headerSpec(text: string, line: number, scope: Scope, request: boolean): { name: string; value: SnippetValue } {
  const i = text.indexOf(':');
  if (i < 0) fail(line, `${JSON.stringify(text.slice(0, 80))} is not "Name: value"`);
  const name = headerName(text.slice(0, i).trim(), line, { request });
  return { name, value: printable(value(text.slice(i + 1).replace(/^[ \t]+/, ''), line, scope), line, `the value of ${name}`) };
}

// ---- directives ------------------------------------------------------------------------------------------------

const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);
const isUrl = (t: string) => /^(?:https?:\/\/|\$scheme:\/\/|\$\{scheme\}:\/\/)/.test(t);

function argc(d: Directive, min: number, max: number) {
  if (d.args.length < min || d.args.length > max) fail(d.line, `${d.name} takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, got ${d.args.length}`);
}

function condition(d: Directive, scope: Scope): SnippetCondition {
  const words = d.args.map((a) => ({ ...a }));
  if (!words.length) fail(d.line, 'if needs a condition in parentheses');
  const first = words[0] as (typeof words)[number];
  if (first.quoted || !first.text.startsWith('(')) fail(d.line, 'the condition of if must be in parentheses');
  first.text = first.text.slice(1);
  if (first.text === '') words.shift();
  const last = words[words.length - 1];
  if (!last || (last.quoted && last.text !== ')')) fail(d.line, 'the condition of if must end with ")"');
  const l = last as (typeof words)[number];
  if (!l.text.endsWith(')') || l.quoted) fail(d.line, 'the condition of if must end with ")"');
  l.text = l.text.slice(0, -1);
  if (l.text === '' && !l.quoted) words.pop();
  if (!words.length) fail(d.line, 'empty if condition');
  const left = words[0] as (typeof words)[number];
  if (!left.quoted && /^!?-[fdex]$/.test(left.text)) fail(d.line, `file tests (${left.text}) are never accepted: they read the controller's file system`);
  if (left.quoted || !left.text.startsWith('$')) fail(d.line, `the condition of if must start with a variable, got ${JSON.stringify(left.text.slice(0, 40))}`);
  const lv = value(left.text, d.line, scope);
  if (lv.length !== 1 || typeof lv[0] === 'string') fail(d.line, 'the left side of an if condition must be one variable');
  if (words.length === 1) return { test: 'nonempty', value: lv };
  if (words.length !== 3) fail(d.line, 'an if condition is ($var), ($var = value), ($var != value) or ($var ~ regex) with ~, ~*, !~, !~*');
  const op = (words[1] as (typeof words)[number]).text;
  const right = words[2] as (typeof words)[number];
  if (op === '=' || op === '!=') return { test: op === '=' ? 'eq' : 'ne', left: lv, right: printable(value(right.text, d.line, scope), d.line, 'the compared value') };
  if (op === '~' || op === '~*' || op === '!~' || op === '!~*') {
    checkRegex(right.text, d.line);
    return { test: 'match', left: lv, regex: right.text, caseless: op.endsWith('*'), negate: op.startsWith('!') };
  }
  return fail(d.line, `unknown if operator ${JSON.stringify(op.slice(0, 10))} (=, !=, ~, ~*, !~, !~*)`);
}

function compileBlock(list: Directive[], ctx: Context, scope: Scope): SnippetStatement[] {
  const out: SnippetStatement[] = [];
  for (const d of list) {
    if (++scope.statements > MAX_STATEMENTS) fail(d.line, `more than ${MAX_STATEMENTS} directives`);
    const name = d.name;
    if (!ALLOWED[ctx].has(name)) fail(d.line, notAllowed(name, ctx));
    if (d.block && name !== 'if') fail(d.line, `${name} does not take a block`);
    switch (name) {
      case 'more_set_headers':
      case 'more_set_input_headers': {
        const request = name === 'more_set_input_headers';
        const o = moreOptions(d, request ? 'rt' : 'st');
        for (const a of o.rest) {
          const h = headerSpec(a.text, d.line, scope, request);
          if (request) out.push({ op: 'request', action: 'set', name: h.name, value: h.value, ...(o.replaceOnly ? { replaceOnly: true } : {}), ...(o.types ? { types: o.types } : {}) });
          else out.push({ op: 'response', action: 'set', name: h.name, value: h.value, ...(o.statuses ? { statuses: o.statuses } : {}), ...(o.types ? { types: o.types } : {}) });
        }
        break;
      }
      case 'more_clear_headers':
      case 'more_clear_input_headers': {
        const request = name === 'more_clear_input_headers';
        const o = moreOptions(d, request ? 't' : 'st');
        for (const a of o.rest) {
          for (const n of a.text.split(/\s+/).filter(Boolean)) {
            const h = headerName(n.replace(/:$/, ''), d.line, { wildcard: true, request });
            if (request) out.push({ op: 'request', action: 'clear', name: h, ...(o.types ? { types: o.types } : {}) });
            else out.push({ op: 'response', action: 'clear', name: h, ...(o.statuses ? { statuses: o.statuses } : {}), ...(o.types ? { types: o.types } : {}) });
          }
        }
        break;
      }
      case 'add_header': {
        argc(d, 2, 3);
        const [n, v, flag] = d.args as [Directive['args'][number], Directive['args'][number], Directive['args'][number] | undefined];
        if (flag && flag.text !== 'always') fail(d.line, `add_header: the third argument can only be "always", got ${JSON.stringify(flag.text.slice(0, 20))}`);
        const h = headerName(n.text, d.line);
        out.push({ op: 'response', action: 'add', name: h, value: printable(value(v.text, d.line, scope), d.line, `the value of ${h}`), ...(flag ? { always: true } : {}) });
        break;
      }
      case 'proxy_set_header': {
        argc(d, 2, 2);
        const [n, v] = d.args as [Directive['args'][number], Directive['args'][number]];
        const h = headerName(n.text, d.line);
        if (h.toLowerCase() === 'expect') fail(d.line, 'request header Expect cannot be changed');
        if (scope.auth && AUTH_REFUSED_HEADERS.has(h.toLowerCase()))
          fail(d.line, `proxy_set_header ${h}: ${h.toLowerCase() === 'host' ? "the auth subrequest's Host is the auth URL's host" : 'this header frames the auth subrequest'} and cannot be set by an auth-snippet`);
        out.push({ op: 'request', action: 'set', name: h.toLowerCase() === 'host' ? 'host' : h, value: printable(value(v.text, d.line, scope), d.line, `the value of ${h}`) });
        break;
      }
      case 'set': {
        argc(d, 2, 2);
        const [n, v] = d.args as [Directive['args'][number], Directive['args'][number]];
        const m = /^\$([A-Za-z_][A-Za-z0-9_]{0,63})$/.exec(n.text);
        if (!m) fail(d.line, `set: ${JSON.stringify(n.text.slice(0, 40))} is not a variable name ($ and letters, digits, "_")`);
        const lower = (m as RegExpExecArray)[1]!.toLowerCase();
        if (VARIABLES.has(lower) || /^(?:http|arg|cookie|sent_http|upstream|portico|ssl|proxy|request|server|remote|realip)_/.test(lower))
          fail(d.line, `set: $${lower} is a variable of nginx or Portico and cannot be set`);
        const val = printable(value(v.text, d.line, scope), d.line, `the value of $${lower}`);
        scope.vars.add(lower);
        out.push({ op: 'set', name: lower, value: val });
        break;
      }
      case 'break':
        argc(d, 0, 0);
        out.push({ op: 'break' });
        break;
      case 'return': {
        argc(d, 1, 2);
        const [a, b] = d.args as [Directive['args'][number], Directive['args'][number] | undefined];
        if (!b && isUrl(a.text)) {
          out.push({ op: 'return', status: 302, location: printable(value(a.text, d.line, scope), d.line, 'the URL') });
          break;
        }
        if (!/^[0-9]{3}$/.test(a.text)) fail(d.line, `return: ${JSON.stringify(a.text.slice(0, 40))} is neither a status code nor an http(s) URL`);
        const status = Number(a.text);
        if (status === 444) fail(d.line, 'return 444 (close the connection) is not supported');
        if (status < 200 || status > 599) fail(d.line, `return: status ${status} is not accepted (200-599)`);
        if (REDIRECT_CODES.has(status)) out.push({ op: 'return', status, ...(b ? { location: printable(value(b.text, d.line, scope), d.line, 'the URL') } : {}) });
        else out.push({ op: 'return', status, ...(b ? { text: value(b.text, d.line, scope) } : {}) });
        if (b && !REDIRECT_CODES.has(status) && /[^\t\n\x20-\x7e]/.test(b.text)) fail(d.line, 'return: the text may hold printable ASCII, tab and newline only');
        break;
      }
      case 'rewrite': {
        argc(d, 2, 3);
        const [re, rep, flag] = d.args as [Directive['args'][number], Directive['args'][number], Directive['args'][number] | undefined];
        checkRegex(re.text, d.line);
        scope.captures = true;
        const f = flag?.text ?? '';
        if (flag && !['last', 'break', 'redirect', 'permanent'].includes(f)) fail(d.line, `rewrite: unknown flag ${JSON.stringify(f.slice(0, 20))} (last, break, redirect, permanent)`);
        let template = rep.text;
        const url = isUrl(template);
        // A replacement ending in "?" drops the client's query; a "?" inside starts the new query (nginx's rules).
        let keepArgs = true;
        if (template.endsWith('?')) {
          keepArgs = false;
          template = template.slice(0, -1);
        }
        const q = template.indexOf('?');
        let args: SnippetValue | undefined;
        if (q >= 0) {
          const a = template.slice(q + 1);
          template = template.slice(0, q);
          if (a !== '') args = printable(value(a, d.line, scope), d.line, 'the query of the replacement');
        }
        const path = printable(value(template, d.line, scope), d.line, 'the replacement');
        const redirect = f === 'permanent' ? 301 : f === 'redirect' || url ? 302 : undefined;
        out.push({ op: 'rewrite', regex: re.text, path, ...(args ? { args } : {}), keepArgs, ...(redirect ? { redirect } : {}), stop: f === 'last' || f === 'break' });
        break;
      }
      case 'if': {
        if (!d.block) fail(d.line, 'if needs a block: if (condition) { ... }');
        const cond = condition(d, scope);
        const inner: Scope = { vars: scope.vars, captures: scope.captures || cond.test === 'match', statements: scope.statements, ...(scope.auth ? { auth: true } : {}) };
        const body = compileBlock(d.block as Directive[], ctx === 'server' ? 'if-server' : ctx === 'auth' ? 'if-auth' : 'if-location', inner);
        scope.statements = inner.statements;
        if (cond.test === 'match') scope.captures = true;
        out.push({ op: 'if', cond, body });
        break;
      }
      default:
        fail(d.line, notAllowed(name, ctx));
    }
  }
  return out;
}

export type CompileResult = { ok: true; statements: SnippetStatement[]; vars: ReadonlySet<string> } | { ok: false; error: string };

/**
 * Tokenizes, parses and compiles one snippet; any refusal refuses all of it (nothing partial is ever returned).
 * `vars`: variables set before it runs (the server-snippet's, for the configuration-snippet, as nginx's server-level
 * `set` is seen by its locations). The result's `vars` are those known after it.
 */
export function compileSnippet(src: string, kind: SnippetKind, vars: ReadonlySet<string> = new Set()): CompileResult {
  try {
    const scope: Scope = { vars: new Set(vars), captures: false, statements: 0, ...(kind === 'auth' ? { auth: true } : {}) };
    const statements = compileBlock(parse(tokenize(src)), kind, scope);
    return { ok: true, statements, vars: scope.vars };
  } catch (e) {
    if (e instanceof SnippetError) return { ok: false, error: e.message };
    throw e;
  }
}
