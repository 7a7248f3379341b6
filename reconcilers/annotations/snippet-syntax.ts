// How a snippet's text is read, before anything is allowed or refused: nginx's lexical rules (tokenize, as
// ngx_conf_read_token reads a configuration) and the check of a regex for PCRE (checkRegex). snippets.ts parses the
// tokens into directives and compiles them against its allowlist.

/** Longest snippet accepted (ingress-nginx has no limit; one annotation may hold 256 KiB). */
export const MAX_SNIPPET = 16_384;
const MAX_REGEX = 1024;

export class SnippetError extends Error {}
export const fail = (line: number, message: string): never => {
  throw new SnippetError(line > 0 ? `line ${line}: ${message}` : message);
};

// ---- lexical rules (nginx's ngx_conf_read_token) ---------------------------------------------------------------

export type Token = { kind: 'word'; text: string; quoted: boolean; line: number } | { kind: ';' | '{' | '}'; line: number };

/** nginx's unescaping of a token: \" \' \\ and \t \r \n; any other backslash is kept with the character after it. */
function unescape(raw: string): string {
  return raw.replace(/\\(["'\\trn])/g, (_m, c: string) => (c === 't' ? '\t' : c === 'r' ? '\r' : c === 'n' ? '\n' : c));
}

const charName = (c: string) => `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Splits a snippet into nginx tokens: words (unquoted or in single/double quotes, backslash escapes), ";", "{" and
 * "}"; "#" starts a comment up to the end of the line. Refuses NUL, control characters other than tab and newline,
 * Unicode line/paragraph separators, non-ASCII outside comments, unterminated quotes and over-long input.
 */
export function tokenize(src: string): Token[] {
  if (src.length > MAX_SNIPPET) fail(0, `the snippet is ${src.length} characters long; at most ${MAX_SNIPPET} are accepted`);
  let line = 1;
  for (let i = 0; i < src.length; i++) {
    const c = src[i] as string;
    const code = c.charCodeAt(0);
    if (c === '\n') line++;
    else if (code === 0) fail(line, 'a NUL character is never accepted');
    else if (c === '\u2028' || c === '\u2029') fail(line, `a Unicode line/paragraph separator (${charName(c)}) is never accepted`);
    else if ((code < 0x20 && c !== '\t') || (code >= 0x7f && code <= 0x9f) || c === '\u0085') fail(line, `control character ${charName(c)} is not accepted (only tab and newline)`);
  }
  const out: Token[] = [];
  line = 1;
  let i = 0;
  const n = src.length;
  const ascii = (c: string) => {
    if (c.charCodeAt(0) > 0x7e) fail(line, `non-ASCII character ${charName(c)} outside a comment`);
  };
  while (i < n) {
    const c = src[i] as string;
    if (c === '\n') {
      line++;
      i++;
      continue;
    }
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < n && src[i] !== '\n') i++;
      continue;
    }
    if (c === ';' || c === '{' || c === '}') {
      out.push({ kind: c, line });
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const start = line;
      let j = i + 1;
      let raw = '';
      for (;;) {
        if (j >= n) fail(start, `unbalanced ${c === '"' ? 'double' : 'single'} quote`);
        const d = src[j] as string;
        if (d === '\\' && j + 1 < n) {
          const e = src[j + 1] as string;
          ascii(e);
          if (e === '\n') line++;
          raw += d + e;
          j += 2;
          continue;
        }
        if (d === c) break;
        if (d === '\n') line++;
        ascii(d);
        raw += d;
        j++;
      }
      out.push({ kind: 'word', text: unescape(raw), quoted: true, line: start });
      i = j + 1;
      // After a quoted string nginx wants a space, ";", "{" or ")" (the end of an if condition).
      const next = src[i];
      if (next === ')') {
        out.push({ kind: 'word', text: ')', quoted: false, line });
        i++;
      } else if (next !== undefined && !' \t\n;{'.includes(next)) fail(line, `unexpected ${JSON.stringify(next)} after a quoted string`);
      continue;
    }
    // An unquoted word: up to a space, ";" or "{" — except the "{" of "${name}". A backslash escapes the next
    // character (so "\ " or "\;" do not end the word). "}" and quotes inside a word are plain characters, as in nginx.
    let raw = '';
    let j = i;
    while (j < n) {
      const d = src[j] as string;
      if (d === '\\' && j + 1 < n) {
        const e = src[j + 1] as string;
        ascii(e);
        if (e === '\n') line++;
        raw += d + e;
        j += 2;
        continue;
      }
      if (d === '{' && raw.endsWith('$') && !raw.endsWith('\\$')) {
        const close = src.indexOf('}', j);
        if (close < 0) fail(line, 'unbalanced "${"');
        const inner = src.slice(j, close + 1);
        if (/[\s;"']/.test(inner)) fail(line, `invalid variable name in "$${inner}"`);
        raw += inner;
        j = close + 1;
        continue;
      }
      if (d === ' ' || d === '\t' || d === '\n' || d === ';' || d === '{') break;
      ascii(d);
      raw += d;
      j++;
    }
    out.push({ kind: 'word', text: unescape(raw), quoted: false, line });
    i = j;
  }
  return out;
}

// ---- regexes ---------------------------------------------------------------------------------------------------

/**
 * Checks a regex for PCRE (nginx's ngx.re compiles it again when the plugin is loaded, and the data plane bounds
 * backtracking with lua_regex_match_limit): printable ASCII, at most 1024 characters, no PCRE verbs ("(*...)"),
 * no back-references, no recursion or callouts, balanced groups and classes — and it must compile as a JavaScript
 * regex once PCRE's named groups and leading inline flags are translated. Returns the number of capturing groups.
 */
export function checkRegex(re: string, line: number): number {
  if (!re) fail(line, 'empty regex');
  if (re.length > MAX_REGEX) fail(line, `a regex is longer than ${MAX_REGEX} characters`);
  if (/[^\x20-\x7e]/.test(re)) fail(line, 'a regex must be printable ASCII');
  let groups = 0;
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < re.length; i++) {
    const c = re[i] as string;
    if (c === '\\') {
      const e = re[i + 1] ?? '';
      if (/[1-9gkR]/.test(e)) fail(line, `regex ${JSON.stringify(re.slice(0, 80))}: back-references and recursion (\\${e}) are not accepted`);
      if (/[CQEX]/.test(e)) fail(line, `regex ${JSON.stringify(re.slice(0, 80))}: \\${e} is not accepted`);
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      if (re[i + 1] === '^') i++;
      if (re[i + 1] === ']') i++;
      continue;
    }
    if (c === '(') {
      depth++;
      if (re[i + 1] === '*') fail(line, `regex ${JSON.stringify(re.slice(0, 80))}: PCRE verbs "(*...)" are not accepted`);
      if (re[i + 1] === '?') {
        const rest = re.slice(i + 2);
        if (/^P?<[A-Za-z_][A-Za-z0-9_]*>/.test(rest)) groups++;
        else if (!/^(?::|=|!|<=|<!|[imsx-]+\)|[imsx-]+:)/.test(rest)) fail(line, `regex ${JSON.stringify(re.slice(0, 80))}: the group "(?${rest.slice(0, 3)}" is not accepted (recursion, conditionals, callouts, atomic groups)`);
      } else groups++;
    } else if (c === ')') {
      depth--;
      if (depth < 0) fail(line, `regex ${JSON.stringify(re.slice(0, 80))}: unbalanced ")"`);
    }
  }
  if (inClass) fail(line, `regex ${JSON.stringify(re.slice(0, 80))}: unterminated "["`);
  if (depth !== 0) fail(line, `regex ${JSON.stringify(re.slice(0, 80))}: unbalanced "("`);
  let js = re.replace(/\(\?P</g, '(?<');
  let flags = '';
  const lead = /^\(\?([imsx]+)\)/.exec(js);
  if (lead) {
    flags = [...new Set((lead[1] as string).replace('x', '').split(''))].join('');
    js = js.slice(lead[0].length);
  }
  try {
    new RegExp(js, flags);
  } catch (e) {
    fail(line, `regex ${JSON.stringify(re.slice(0, 80))} does not compile: ${(e as Error).message.replace(/^Invalid regular expression: /, '')}`);
  }
  return groups;
}
