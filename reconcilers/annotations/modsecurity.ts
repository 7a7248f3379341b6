// ingress-nginx's ModSecurity settings, the safe way. ingress-nginx pastes modsecurity-snippet into nginx.conf as
// `modsecurity_rules '<text>'` (raw ModSecurity configuration: Critical risk, CVE material — SecRule actions can run
// Lua or programs, Include and SecAuditLog read and write files). Portico reads a snippet line by line and accepts
// only these directives, each with a validated value, which the renderer re-emits from the parsed data:
//   SecRuleEngine On | Off | DetectionOnly        SecAuditEngine On | Off | RelevantOnly
//   SecRequestBodyAccess On | Off                 SecResponseBodyAccess On | Off
//   SecRequestBodyLimit <bytes, 1 to 1 GiB>
//   SecRuleRemoveById <id or range>...            e.g. 920350 941000-942999 (ids of 1 to 9 digits)
//   SecRuleRemoveByTag <tag>                      letters, digits and . _ / - (optionally in double quotes)
// "#" starts a comment line and "\" at the end of a line continues it, as in ModSecurity. Anything else — SecRule,
// SecAction (their actions may be exec: or lua), Include, SecAuditLog, SecDebugLog and SecDebugLogLevel (files, and
// no place to write them), any other directive, a bad value, a control or non-ASCII character — refuses the whole
// snippet with a message naming the directive and the line. Directive names and On/Off values are read without
// regard to case, as ModSecurity reads them.
import { z } from 'zod';
import type { ModsecDirective } from '../config/types.ts';
import { isKnownVariable } from '../values/nginx-variables.ts';

/** Longest modsecurity-snippet read (the annotation refuses anything longer outright). */
export const MAX_MODSEC_SNIPPET = 16_384;
const MAX_DIRECTIVES = 256;
const MAX_REMOVE_IDS = 64;
/** SecRequestBodyLimit: at most 1 GiB (ModSecurity's own ceiling). */
export const MAX_REQUEST_BODY_LIMIT = 1024 * 1024 * 1024;

/** A rule id or an id range of SecRuleRemoveById. */
export const RULE_ID_RE = /^[1-9]\d{0,8}(-[1-9]\d{0,8})?$/;
/** A tag of SecRuleRemoveByTag. */
export const RULE_TAG_RE = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/;

const ENUMS: Record<'SecRuleEngine' | 'SecAuditEngine' | 'SecRequestBodyAccess' | 'SecResponseBodyAccess', readonly string[]> = {
  SecRuleEngine: ['On', 'Off', 'DetectionOnly'],
  SecAuditEngine: ['On', 'Off', 'RelevantOnly'],
  SecRequestBodyAccess: ['On', 'Off'],
  SecResponseBodyAccess: ['On', 'Off'],
};
const ALLOWED = ['SecRuleEngine', 'SecRequestBodyAccess', 'SecResponseBodyAccess', 'SecRequestBodyLimit', 'SecAuditEngine', 'SecRuleRemoveById', 'SecRuleRemoveByTag'] as const;
const CANONICAL = new Map<string, (typeof ALLOWED)[number]>(ALLOWED.map((d) => [d.toLowerCase(), d]));

/** Why a directive that is not on the allowlist is refused, for the ones users write most. */
const WHY: Record<string, string> = {
  include: 'reads files',
  includeoptional: 'reads files',
  secrule: 'defines rules, whose actions may run code (exec, lua) or change the request',
  secaction: 'defines rules, whose actions may run code (exec, lua) or change the request',
  secauditlog: 'names a file to write (Portico writes the audit log to its own log)',
  secauditlog2: 'names a file to write',
  secauditlogstoragedir: 'names a directory to write',
  secdebuglog: 'names a file to write',
  secdebugloglevel: 'has no debug log to write to (SecDebugLog is not accepted)',
  sectmpdir: 'names a directory (Portico chooses it)',
  secdatadir: 'names a directory (Portico chooses it)',
  secuploaddir: 'names a directory to write',
  secremoterules: 'downloads rules',
  secdefaultaction: 'sets the actions of every rule',
};

export class ModsecSnippetError extends Error {}
const fail = (line: number, message: string): never => {
  throw new ModsecSnippetError(`line ${line}: ${message}`);
};
const charName = (c: string) => `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/** The logical lines of a snippet (continuations joined), with the number of the line each starts on. */
function logicalLines(src: string): { line: number; text: string }[] {
  const physical = src.split('\n');
  const out: { line: number; text: string }[] = [];
  let pending: { line: number; text: string } | null = null;
  physical.forEach((raw, i) => {
    const n = i + 1;
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    for (const c of text) {
      const code = c.codePointAt(0) ?? 0;
      if (code === 0) fail(n, 'a NUL character is never accepted');
      if (c === '\u2028' || c === '\u2029') fail(n, `a Unicode line/paragraph separator (${charName(c)}) is never accepted`);
      if ((code < 0x20 && c !== '\t') || (code >= 0x7f && code <= 0x9f)) fail(n, `control character ${charName(c)} is not accepted (only tab and newline)`);
    }
    // A comment ends with its line, backslash or not (as ModSecurity reads it).
    const cont = /\\$/.test(text) && !(pending === null && text.trimStart().startsWith('#'));
    const body = cont ? text.slice(0, -1) : text;
    if (pending) pending.text += ` ${body}`;
    else pending = { line: n, text: body };
    if (!cont) {
      out.push(pending);
      pending = null;
    }
  });
  if (pending) out.push(pending);
  return out;
}

/** A value's words: blanks separate them; a word may be in double quotes (no quote or backslash inside). */
function words(text: string, line: number): string[] {
  const out: string[] = [];
  const re = /\s*(?:"([^"\\]*)"|([^\s"\\]+))(?=\s|$)/y;
  let i = 0;
  while (i < text.length) {
    if (!text.slice(i).trim()) break;
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) fail(line, 'a value is not a word or a double-quoted word (backslashes and unbalanced quotes are not accepted)');
    out.push((m![1] ?? m![2]) as string);
    i = re.lastIndex;
  }
  return out;
}

/** Parses a modsecurity-snippet (ConfigMap or annotation): the directives, or a ModsecSnippetError naming the line. */
export function parseModsecuritySnippet(src: string): ModsecDirective[] {
  if (src.length > MAX_MODSEC_SNIPPET) throw new ModsecSnippetError(`the snippet is ${src.length} characters long; at most ${MAX_MODSEC_SNIPPET} are accepted`);
  const out: ModsecDirective[] = [];
  for (const { line, text } of logicalLines(src)) {
    const t = text.trim();
    if (!t || t.startsWith('#')) continue;
    const nonAscii = [...t].find((c) => (c.codePointAt(0) ?? 0) > 0x7e);
    if (nonAscii) fail(line, `non-ASCII character ${charName(nonAscii)} outside a comment`);
    const [name = '', ...rest] = t.split(/\s+/);
    const shown = JSON.stringify(name.slice(0, 40));
    const directive = CANONICAL.get(name.toLowerCase());
    if (!directive) {
      const why = WHY[name.toLowerCase()];
      fail(line, `directive ${shown} ${why ? `${why} and ` : ''}is not accepted in modsecurity-snippet (accepted: ${ALLOWED.join(', ')})`);
    }
    const args = words(t.slice(name.length), line);
    const one = (): string => {
      if (args.length !== 1) fail(line, `${directive} takes one value, got ${args.length}`);
      return args[0] as string;
    };
    switch (directive) {
      case 'SecRuleEngine':
      case 'SecAuditEngine':
      case 'SecRequestBodyAccess':
      case 'SecResponseBodyAccess': {
        const v = one();
        const choices = ENUMS[directive];
        const value = choices.find((c) => c.toLowerCase() === v.toLowerCase());
        if (!value) fail(line, `${directive} ${JSON.stringify(v.slice(0, 40))}: expected ${choices.join(', ')}`);
        out.push({ directive, value } as ModsecDirective);
        break;
      }
      case 'SecRequestBodyLimit': {
        const v = one();
        const n = /^\d{1,10}$/.test(v) ? Number(v) : NaN;
        if (!(n >= 1 && n <= MAX_REQUEST_BODY_LIMIT)) fail(line, `SecRequestBodyLimit ${JSON.stringify(v.slice(0, 40))}: expected a number of bytes between 1 and ${MAX_REQUEST_BODY_LIMIT}`);
        out.push({ directive, value: n });
        break;
      }
      case 'SecRuleRemoveById': {
        // ModSecurity also reads the ids of one quoted word: "920350 941000-942999".
        const ids = args.flatMap((a) => a.split(/[\s,]+/)).filter(Boolean);
        if (!ids.length || ids.length > MAX_REMOVE_IDS) fail(line, `SecRuleRemoveById takes 1 to ${MAX_REMOVE_IDS} rule ids or ranges, got ${ids.length}`);
        for (const id of ids) {
          const [a, b] = id.split('-');
          if (!RULE_ID_RE.test(id) || (b !== undefined && Number(b) < Number(a))) fail(line, `SecRuleRemoveById ${JSON.stringify(id.slice(0, 40))}: expected a rule id such as 920350 or a range such as 941000-942999`);
        }
        out.push({ directive, value: ids });
        break;
      }
      case 'SecRuleRemoveByTag': {
        const v = one();
        if (!RULE_TAG_RE.test(v)) fail(line, `SecRuleRemoveByTag ${JSON.stringify(v.slice(0, 40))}: expected a tag such as attack-sqli (letters, digits and . _ / -, at most 128)`);
        out.push({ directive, value: v });
        break;
      }
    }
    if (out.length > MAX_DIRECTIVES) fail(line, `at most ${MAX_DIRECTIVES} directives are accepted`);
  }
  return out;
}

/**
 * The annotation's value: the parsed directives, or why the snippet is refused (the translation warns and, where
 * ModSecurity is on, fails the Ingress's paths closed). Only a snippet far over the size limit is an invalid value.
 */
export type ModsecSnippetValue = { directives: ModsecDirective[] } | { error: string };
export const modsecuritySnippetSchema = z
  .string()
  .max(MAX_MODSEC_SNIPPET * 4, `longer than ${MAX_MODSEC_SNIPPET * 4} characters`)
  .transform((v): ModsecSnippetValue => {
    try {
      return { directives: parseModsecuritySnippet(v) };
    } catch (e) {
      if (e instanceof ModsecSnippetError) return { error: e.message };
      throw e;
    }
  });

/** The ConfigMap's modsecurity-snippet: the same allowlist; a refused one is an invalid value (the previous one stays). */
export const modsecuritySnippetConfigSchema = z.string().transform((v, ctx): ModsecDirective[] => {
  try {
    return parseModsecuritySnippet(v);
  } catch (e) {
    if (!(e instanceof ModsecSnippetError)) throw e;
    ctx.addIssue({ code: 'custom', message: e.message });
    return z.NEVER;
  }
});

/** The parts of a transaction id: `$name` variables and literal [A-Za-z0-9_-] text; or what is wrong. */
export function transactionIdParts(v: string): { vars: string[] } | { error: string } {
  if (!v.length || v.length > 256) return { error: 'expected 1 to 256 characters' };
  const re = /\$([a-z0-9_]+)|([A-Za-z0-9_-]+)/y;
  const vars: string[] = [];
  for (let i = 0; i < v.length; ) {
    re.lastIndex = i;
    const m = re.exec(v);
    if (!m) return { error: `unexpected ${JSON.stringify(v.slice(i, i + 10))} at character ${i + 1}: expected nginx variables ($request_id, lower case, no braces) and letters, digits, "_" or "-"` };
    if (m[1] !== undefined) {
      if (!isKnownVariable(m[1])) return { error: `$${m[1]} is not a variable nginx defines (e.g. $request_id, $portico_request_id, $http_x_request_id)` };
      vars.push(m[1]);
    }
    i = re.lastIndex;
  }
  if (!vars.length) return { error: 'expected at least one nginx variable, e.g. $request_id (a fixed text would give every transaction the same id)' };
  return { vars };
}

/** modsecurity-transaction-id: e.g. "$request_id" or "web-$request_id"; blanks around it are dropped. */
export const transactionIdSchema = z
  .string()
  .transform((v) => v.replace(/^[ \t]+|[ \t]+$/g, ''))
  .superRefine((v, ctx) => {
    const r = transactionIdParts(v);
    if ('error' in r) ctx.addIssue({ code: 'custom', message: r.error });
  });
