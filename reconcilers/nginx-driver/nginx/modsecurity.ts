// ModSecurity in Portico's nginx: Debian's connector module (libnginx-mod-http-modsecurity, libmodsecurity3) and
// the OWASP Core Rule Set (modsecurity-crs). A directive profile with `modsecurity` gets `modsecurity on` and a
// rules file that Portico writes into its runtime directory before nginx -t, named by the digest of its text (a file
// nginx uses is never rewritten; a new combination is a new file, hence one reload). The file holds, in this order:
//   1. Include of Debian's recommended configuration (/etc/nginx/modsecurity.conf: SecRuleEngine DetectionOnly,
//      request body inspection, audit of relevant transactions);
//   2. Portico's own settings over it: no audit log unless a snippet asks for one (SecAuditEngine RelevantOnly or
//      On), then in the runtime directory (modsecurity/audit.log; the root filesystem may be read-only, and nginx's
//      stderr is a socket, which libmodsecurity cannot open) — every rule match is a line of nginx's error log anyway,
//      which the controller forwards into its own log (the profile's location logs at info level for that: see
//      http.hbs and process.ts); temporary and data files in the runtime directory; no status reporting;
//   3. with `crs`, the Core Rule Set as Debian lays it out (setup, the exclusion files, the rules; libmodsecurity
//      3.0 has no IncludeOptional, so each is named);
//   4. the snippets' directives (the ConfigMap's, then the Ingress's), re-emitted from parsed data, each checked
//      again here.
// The module is loaded (load_module) only when some profile uses it. Without it, or without the CRS a route asks
// for, the translation fails those routes closed (detectModsecurity tells it what is installed).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ModsecDirective, ModsecurityInstall, ModsecuritySettings, Structure } from '../../config/types.ts';
import { MAX_REQUEST_BODY_LIMIT, RULE_ID_RE, RULE_TAG_RE, transactionIdParts } from '../../annotations/modsecurity.ts';
import { UnsafeValueError } from './escape.ts';
import type { RuntimePaths } from './runtime.ts';

/** Debian's files (bookworm: libnginx-mod-http-modsecurity 1.0.3, libmodsecurity3 3.0.9, modsecurity-crs 3.3.4). */
export const MODSECURITY_FILES = {
  module: '/usr/lib/nginx/modules/ngx_http_modsecurity_module.so',
  /** ModSecurity's modsecurity.conf-recommended, as the connector's package installs it (with unicode.mapping). */
  recommended: '/etc/nginx/modsecurity.conf',
  crs: [
    '/etc/modsecurity/crs/crs-setup.conf',
    '/etc/modsecurity/crs/REQUEST-900-EXCLUSION-RULES-BEFORE-CRS.conf',
    '/usr/share/modsecurity-crs/rules/*.conf',
    '/etc/modsecurity/crs/RESPONSE-999-EXCLUSION-RULES-AFTER-CRS.conf',
  ],
  /** A file of the rules directory, to tell whether it is there (the glob above is libmodsecurity's to expand). */
  crsProbe: '/usr/share/modsecurity-crs/rules/REQUEST-949-BLOCKING-EVALUATION.conf',
} as const;

/** What this machine has: undefined without the module (or its recommended configuration). */
export function detectModsecurity(files: { module: string; recommended: string; crs: readonly string[]; crsProbe: string } = MODSECURITY_FILES): ModsecurityInstall | undefined {
  if (!existsSync(files.module) || !existsSync(files.recommended)) return undefined;
  const crs = existsSync(files.crsProbe) && files.crs.every((f) => f.includes('*') || existsSync(f));
  return { crs };
}

/** A path emitted into a rules file: absolute, safe characters only (no blanks, quotes or line breaks). */
function safePath(v: string): string {
  if (!/^\/[A-Za-z0-9._/*-]{1,512}$/.test(v)) throw new UnsafeValueError(`unsafe path for a ModSecurity rules file: ${JSON.stringify(v.slice(0, 100))}`);
  return v;
}

const ENUM: Record<string, readonly string[]> = {
  SecRuleEngine: ['On', 'Off', 'DetectionOnly'],
  SecAuditEngine: ['On', 'Off', 'RelevantOnly'],
  SecRequestBodyAccess: ['On', 'Off'],
  SecResponseBodyAccess: ['On', 'Off'],
};

/** One directive of a snippet, from its parsed data; anything that is not exactly what the parser makes is refused. */
export function modsecDirectiveText(d: ModsecDirective): string {
  const bad = (): never => {
    throw new UnsafeValueError(`invalid ModSecurity directive ${JSON.stringify(d).slice(0, 200)}`);
  };
  switch (d.directive) {
    case 'SecRuleEngine':
    case 'SecAuditEngine':
    case 'SecRequestBodyAccess':
    case 'SecResponseBodyAccess':
      if (typeof d.value !== 'string' || !ENUM[d.directive]?.includes(d.value)) bad();
      return `${d.directive} ${d.value}`;
    case 'SecRequestBodyLimit':
      if (!Number.isSafeInteger(d.value) || d.value < 1 || d.value > MAX_REQUEST_BODY_LIMIT) bad();
      return `${d.directive} ${d.value}`;
    case 'SecRuleRemoveById':
      if (!Array.isArray(d.value) || !d.value.length || !d.value.every((id) => typeof id === 'string' && RULE_ID_RE.test(id))) bad();
      return `${d.directive} ${d.value.join(' ')}`;
    case 'SecRuleRemoveByTag':
      if (typeof d.value !== 'string' || !RULE_TAG_RE.test(d.value)) bad();
      return `${d.directive} "${d.value}"`;
    default:
      return bad();
  }
}

/** Where ModSecurity may write: temporary and data files, and the audit log (when a snippet turns it on). */
export function modsecurityDirs(runtime: RuntimePaths): { tmp: string; data: string; audit: string } {
  const base = path.join(runtime.dir, 'modsecurity');
  return { tmp: path.join(base, 'tmp'), data: path.join(base, 'data'), audit: path.join(base, 'audit.log') };
}

/** The rules file's text for a profile's settings. */
export function modsecurityRules(m: ModsecuritySettings, runtime: RuntimePaths, files: { recommended: string; crs: readonly string[] } = MODSECURITY_FILES): string {
  const dirs = modsecurityDirs(runtime);
  const lines = [
    '# Generated by Portico: the ModSecurity rules of a directive profile (named by the digest of this text).',
    `Include ${safePath(files.recommended)}`,
    '# Rule matches are in nginx\'s error log (the controller\'s log); an audit log only when a snippet turns it on.',
    'SecAuditEngine Off',
    `SecAuditLog ${safePath(dirs.audit)}`,
    `SecTmpDir ${safePath(dirs.tmp)}`,
    `SecDataDir ${safePath(dirs.data)}`,
    'SecStatusEngine Off',
  ];
  if (m.crs) lines.push('# OWASP Core Rule Set', ...files.crs.map((f) => `Include ${safePath(f)}`));
  if (m.rules.length) lines.push('# modsecurity-snippet (the ConfigMap\'s, then the Ingress\'s)', ...m.rules.map(modsecDirectiveText));
  return `${lines.join('\n')}\n`;
}

/** Where a rules text lives: named by its digest. */
export function modsecurityRulesFile(runtime: RuntimePaths, text: string): string {
  return path.join(runtime.dir, 'modsecurity', `${createHash('sha256').update(text).digest('hex').slice(0, 32)}.conf`);
}

/** A transaction id as nginx reads it (a complex value in double quotes): variables nginx defines and [A-Za-z0-9_-]. */
export function transactionIdValue(v: unknown): string {
  if (typeof v !== 'string' || 'error' in transactionIdParts(v)) throw new UnsafeValueError(`invalid ModSecurity transaction id ${JSON.stringify(typeof v === 'string' ? v.slice(0, 100) : v)}`);
  return `"${v}"`;
}

/**
 * Writes the rules files of the structure's ModSecurity profiles (before nginx -t reads them), and the directories
 * ModSecurity writes to. Files no profile uses any more are left (a running nginx may still use them; they are small
 * and named by content).
 */
export function writeModsecurityRules(structure: Structure, runtime: RuntimePaths): void {
  let dirs = false;
  for (const p of structure.profiles) {
    if (!p.modsecurity) continue;
    const text = modsecurityRules(p.modsecurity, runtime);
    const file = modsecurityRulesFile(runtime, text);
    if (!dirs) {
      const d = modsecurityDirs(runtime);
      mkdirSync(d.tmp, { recursive: true, mode: 0o700 });
      mkdirSync(d.data, { recursive: true, mode: 0o700 });
      dirs = true;
    }
    if (!existsSync(file)) writeFileSync(file, text, { mode: 0o600 });
  }
}
