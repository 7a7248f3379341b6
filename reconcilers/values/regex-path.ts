// Regex paths (use-regex, rewrite-target) are evaluated by the Lua router with ngx.re (nginx's PCRE2), as
// ingress-nginx's `location ~* "^<path>"` would be: case-insensitive and anchored at the start only, so a regex
// path is prefix-like ("/blog(/|$)(.*)" matches "/blog", "/blog/" and "/blog/2024/x"). They are data, never written
// into nginx.conf, but PCRE2 and JavaScript still disagree on many inputs (`[]` is an empty class in JavaScript and
// an unterminated one in PCRE2, `[a-\d]` is a literal in JavaScript and an invalid range in PCRE2, `a{,3}` changed
// meaning in PCRE2 10.43...). Portico therefore accepts what this hand-written parser can vouch PCRE2 compiles and
// reads one way, and refuses with the position and the reason what PCRE2 would not compile or what is unsafe in a
// shared data plane: control verbs (*VERB) that change the engine's limits, recursion and subroutine calls, callouts,
// conditionals, inline flags and code. How long a match may take is not decided here: catastrophic backtracking is
// cut by lua_regex_match_limit (nginx.conf), and a request whose regex hits it simply does not match that path.
//
// The accepted language:
//   - literals: letters, digits and  _ ~ ! & , = : @ % / -   (the path alphabet minus regex operators)
//   - `.`, escapes \d \D \w \W \s \S, the word boundaries \b \B and the escaped operators \. \/ \- \( \) \[ \] \* \+ \? \|
//   - classes [...] / [^...]: literals, the escapes above, ranges between two lower-case letters, two upper-case
//     letters or two digits in ascending order; "-" only first, last or escaped; never empty
//   - groups (...), (?:...), named groups (?<name>...), lookaheads (?=...) and (?!...), nested at most MAX_DEPTH
//     deep; alternation a|b with no empty alternative
//   - quantifiers ? * + {n} {n,} {n,m} (n ≤ m ≤ MAX_REPEAT), optionally lazy (a*?); never on nothing, never twice
//   - anchors: "^" at the start of the regex or of an alternative ("^/a|^/b", "(^/x)"), "$" at the end of the regex,
//     of an alternative or of a group ("/blog(/|$)(.*)", ingress-nginx's rewrite example); a "$" followed by anything
//     else (it would read as an nginx variable such as $host) is refused
//
// MAX_REPEAT is 1000, well below PCRE2's own limit of 65535: nginx reads the request line into buffers of 8 KB by
// default, so larger counts have no use in a path, and small counts keep the compiled pattern small. Because
// PCRE2 copies a repeated group once per repetition, nested counts multiply; an estimate of the compiled size
// (PCRE_SIZE_BUDGET, half of what PCRE2 compiles with its default 2-byte links) rejects what would fail with
// "regular expression is too large".

export const MAX_REPEAT = 1000;
export const MAX_DEPTH = 32;
export const MAX_REGEX_LENGTH = 1024;
/** Estimated compiled size (bytes) allowed; PCRE2 built with LINK_SIZE=2 (Debian) fails above 65535. */
export const PCRE_SIZE_BUDGET = 32_000;

const LITERAL = /^[A-Za-z0-9_~!&,=:@%/-]$/;
/** Operators that lose their meaning inside a class and may appear there unescaped. */
const CLASS_LITERAL = /^[A-Za-z0-9_~!&,=:@%/.*+?()|]$/;
const CLASS_ESCAPES = new Set(['d', 'D', 'w', 'W', 's', 'S']);
const LITERAL_ESCAPES = new Set(['.', '/', '-', '(', ')', '[', ']', '*', '+', '?', '|']);
/** Zero-width escapes (word boundaries): allowed outside classes, never repeated. */
const ASSERT_ESCAPES = new Set(['b', 'B']);
const ESCAPES_HELP = '\\. \\/ \\- \\( \\) \\[ \\] \\* \\+ \\? \\| \\d \\D \\w \\W \\s \\S \\b \\B';

/** A validated regex: the size estimate is exposed for tests. */
export interface RegexPathInfo {
  pcreSizeEstimate: number;
}

export class RegexPathError extends Error {
  /** 1-based character position of the problem. */
  readonly position: number;
  constructor(position: number, what: string) {
    super(`at character ${position}: ${what}`);
    this.position = position;
  }
}

/** Character shown in messages: printable as is, anything else as a JSON escape. */
function show(c: string): string {
  return /^[\x21-\x7e]$/.test(c) ? `"${c}"` : JSON.stringify(c);
}

function notAllowed(c: string): string {
  if (c === '"' || c === "'") return `quote ${show(c)} is not allowed`;
  if (c === ' ' || c === '\t') return 'whitespace is not allowed (use \\s)';
  if (c === '\n' || c === '\r' || /[\u0000-\u001f\u007f]/.test(c)) return `control character ${show(c)} is not allowed`;
  if (c === '$') return '"$" is only allowed as an end anchor: last in the regex, an alternative or a group (a "$" followed by a name would read as an nginx variable)';
  if (c === '\\') return 'backslash is only allowed in the escapes ' + ESCAPES_HELP;
  return `character ${show(c)} is not allowed in a regex path`;
}

class Parser {
  private i = 0;
  private readonly s: string;
  private readonly names = new Set<string>();
  /** A space is a literal (header-value regexes). */
  private readonly spaces: boolean;
  constructor(s: string, spaces = false) {
    this.s = s;
    this.spaces = spaces;
  }

  private fail(at: number, what: string): never {
    throw new RegexPathError(at + 1, what);
  }

  /** Returns the estimated PCRE2 size of the whole regex. */
  parse(): number {
    const size = this.alternation(0);
    if (this.i < this.s.length) this.fail(this.i, 'unmatched ")"');
    return size;
  }

  /** alternation := sequence ("|" sequence)*; stops at ")" or the end. */
  private alternation(depth: number): number {
    let size = 0;
    let branches = 0;
    for (;;) {
      const start = this.i;
      const seq = this.sequence(depth);
      branches++;
      const atBar = this.s[this.i] === '|';
      const empty = this.i === start;
      if (empty && (atBar || branches > 1)) this.fail(start, 'empty alternative (write (x)? for an optional part)');
      size += seq;
      if (!atBar) break;
      this.i++;
    }
    return size + (branches > 1 ? 6 * branches : 0);
  }

  private sequence(depth: number): number {
    let size = 0;
    const start = this.i;
    while (this.i < this.s.length) {
      const c = this.s[this.i] as string;
      if (c === '|') break;
      if (c === ')') {
        if (depth === 0) this.fail(this.i, 'unmatched ")"');
        break;
      }
      if (c === '^') {
        // A start anchor opens the regex, an alternative or a group: "^/a|^/b", "(^/x)".
        if (this.i !== start) this.fail(this.i, '"^" is only allowed at the start of the regex, of an alternative or of a group (start anchor)');
        this.i++;
        this.noQuantifier('"^"');
        size += 2;
        continue;
      }
      if (c === '$') {
        // An end anchor closes the regex, an alternative or a group: "/blog(/|$)(.*)", "/a$|/b$".
        const next = this.s[this.i + 1];
        if (next !== undefined && next !== '|' && next !== ')') this.fail(this.i, notAllowed('$'));
        this.i++;
        size += 2;
        continue;
      }
      if (c === '\\' && ASSERT_ESCAPES.has(this.s[this.i + 1] ?? '')) {
        this.i += 2;
        this.noQuantifier(`\\${this.s[this.i - 1]}`);
        size += 2;
        continue;
      }
      size += this.quantified(this.atom(depth));
    }
    return size;
  }

  /** Anchors and assertions match no character: a quantifier after one is refused (PCRE2 and JavaScript differ). */
  private noQuantifier(what: string): void {
    const q = this.s[this.i];
    if (q === '*' || q === '+' || q === '?' || q === '{') this.fail(this.i, `${what} matches no character and cannot be repeated`);
  }

  /** One repeatable item; returns its size and whether it is a group (PCRE2 copies groups per repetition). */
  private atom(depth: number): { size: number; group: boolean } {
    const at = this.i;
    const c = this.s[at] as string;
    switch (c) {
      case '(': {
        if (depth + 1 > MAX_DEPTH) this.fail(at, `groups are nested more than ${MAX_DEPTH} deep`);
        this.i++;
        let lookahead = false;
        if (this.s[this.i] === '*') this.fail(this.i, 'control verbs like (*ACCEPT) or (*LIMIT_MATCH=n) are not allowed');
        if (this.s[this.i] === '?') {
          const kind = this.s[this.i + 1];
          const named = /^\?<([A-Za-z_][A-Za-z0-9_]{0,31})>/.exec(this.s.slice(this.i));
          if (kind === ':') this.i += 2;
          else if (kind === '=' || kind === '!') {
            this.i += 2;
            lookahead = true;
          } else if (named && !this.names.has(named[1] as string)) {
            this.names.add(named[1] as string);
            this.i += named[0].length;
          } else if (named) this.fail(this.i, `group name ${named[1]} is used twice`);
          else {
            this.fail(
              this.i,
              'only (...), (?:...), (?<name>...), (?=...) and (?!...) groups are supported (no lookbehinds, inline flags, recursion, subroutine calls, callouts, conditionals or comments)',
            );
          }
        }
        const inner = this.alternation(depth + 1);
        if (this.s[this.i] !== ')') this.fail(at, '"(" is never closed');
        this.i++;
        if (lookahead) this.noQuantifier('a lookahead');
        return { size: 8 + inner, group: true };
      }
      case '[':
        return { size: this.charClass(), group: false };
      case '\\':
        this.escape(false);
        return { size: 2, group: false };
      case '.':
        this.i++;
        return { size: 2, group: false };
      case ']':
        return this.fail(at, 'unmatched "]" (write \\] for a literal "]")');
      case '{':
      case '}':
        return this.fail(at, 'braces are only allowed as counted repetition {n}, {n,} or {n,m} after an item');
      case '*':
      case '+':
      case '?':
        return this.fail(at, `nothing to repeat before ${show(c)}`);
      default:
        if (!LITERAL.test(c) && !(this.spaces && c === ' ')) this.fail(at, notAllowed(c));
        this.i++;
        return { size: 2, group: false };
    }
  }

  /** An optional quantifier after an atom; returns the atom's size including its repetitions. */
  private quantified(atom: { size: number; group: boolean }): number {
    const at = this.i;
    const c = this.s[at];
    let min: number;
    let max: number | null;
    if (c === '*' || c === '+' || c === '?') {
      this.i++;
      min = c === '+' ? 1 : 0;
      max = c === '?' ? 1 : null;
    } else if (c === '{') {
      const m = /^\{(\d{1,5})(,(\d{0,5}))?\}/.exec(this.s.slice(at));
      if (!m) {
        if (/^\{,\d+\}/.test(this.s.slice(at))) this.fail(at, 'write {0,m} instead of {,m} (PCRE2 versions disagree on {,m})');
        this.fail(at, 'braces are only allowed as counted repetition {n}, {n,} or {n,m}');
      }
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? null : Number(m[3]);
      if (min > MAX_REPEAT || (max !== null && max > MAX_REPEAT)) this.fail(at, `repetition counts may be at most ${MAX_REPEAT}`);
      if (max !== null && max < min) this.fail(at, `numbers out of order in {${min},${max}}`);
      this.i += m[0].length;
    } else {
      return atom.size;
    }
    if (this.s[this.i] === '?') this.i++; // lazy: same set of matches, accepted by both engines
    const next = this.s[this.i];
    if (next === '+') this.fail(this.i, 'possessive quantifiers (like a*+) are not supported');
    if (next === '*' || next === '?' || next === '{') this.fail(this.i, 'a quantifier cannot follow another quantifier');
    if (!atom.group) return atom.size + 6;
    const copies = Math.max(1, max ?? min + 1);
    return atom.size * copies + 8;
  }

  /** "\x" outside or inside a class; returns the escaped character and whether it is a class escape (\d...). */
  private escape(inClass: boolean): { char: string; isClass: boolean } {
    const at = this.i;
    const e = this.s[at + 1];
    if (e === undefined) this.fail(at, 'trailing backslash');
    if (CLASS_ESCAPES.has(e)) {
      this.i += 2;
      return { char: e, isClass: true };
    }
    if (LITERAL_ESCAPES.has(e)) {
      this.i += 2;
      return { char: e, isClass: false };
    }
    return this.fail(at, `\\${e.length === 1 && /[\x21-\x7e]/.test(e) ? e : JSON.stringify(e)} is not allowed${inClass ? ' in a class' : ''}; allowed escapes: ${ESCAPES_HELP}`);
  }

  /** [...] or [^...]; returns its size. */
  private charClass(): number {
    const open = this.i;
    this.i++;
    if (this.s[this.i] === '^') this.i++;
    const first = this.i;
    if (this.s[this.i] === ']') this.fail(open, 'empty character class (write \\] for a literal "]")');
    for (;;) {
      const at = this.i;
      const c = this.s[at];
      if (c === undefined) this.fail(open, '"[" is never closed');
      if (c === ']') {
        this.i++;
        return 34;
      }
      if (c === '[') this.fail(at, 'a literal "[" inside a class must be escaped as \\[');
      if (c === '^') this.fail(at, '"^" inside a class is only allowed first (negation)');
      if (c === '-') {
        if (at === first || this.s[at + 1] === ']') {
          this.i++;
          continue;
        }
        this.fail(at, '"-" inside a class must be first, last, escaped (\\-) or part of a range like a-z');
      }
      let item: { char: string; isClass: boolean; escaped: boolean };
      if (c === '\\') item = { ...this.escape(true), escaped: true };
      else {
        if (!CLASS_LITERAL.test(c) && !(this.spaces && c === ' ')) this.fail(at, `${notAllowed(c)}${c === '{' || c === '}' ? ' inside a class' : ''}`);
        this.i++;
        item = { char: c, isClass: false, escaped: false };
      }
      // A range "x-y" (a "-" right before "]" is a literal, handled above on the next turn).
      if (this.s[this.i] === '-' && this.s[this.i + 1] !== undefined && this.s[this.i + 1] !== ']') {
        const endAt = this.i + 1;
        const end = this.s[endAt] as string;
        const kind = (ch: string) => (/^[a-z]$/.test(ch) ? 1 : /^[A-Z]$/.test(ch) ? 2 : /^[0-9]$/.test(ch) ? 3 : 0);
        if (item.escaped || end === '\\' || kind(item.char) === 0 || kind(item.char) !== kind(end)) {
          this.fail(at, 'a range must be between two lower-case letters, two upper-case letters or two digits (like a-z, A-Z, 0-9)');
        }
        if (end < item.char) this.fail(at, `range ${item.char}-${end} is out of order`);
        this.i = endAt + 1;
      }
    }
  }
}

/** Validates a regex path; returns null when it is in the subset, else a message with the position. */
export function regexPathProblem(re: string): string | null {
  try {
    checkRegexPath(re);
    return null;
  } catch (e) {
    if (e instanceof RegexPathError) return e.message;
    throw e;
  }
}

/**
 * The same subset for a regex that is not a path (block-user-agents, block-referers): no leading "/" required, and
 * a space is a literal too (header values have spaces; paths do not). Null when accepted, else why, with the position.
 */
export function regexProblem(re: string): string | null {
  try {
    if (re.length > MAX_REGEX_LENGTH) throw new RegexPathError(MAX_REGEX_LENGTH + 1, `regex is longer than ${MAX_REGEX_LENGTH} characters`);
    const size = new Parser(re, true).parse();
    if (size > PCRE_SIZE_BUDGET) throw new RegexPathError(1, `regex is too large once its repetitions are expanded (about ${size} bytes compiled, at most ${PCRE_SIZE_BUDGET}); use smaller counts`);
    return null;
  } catch (e) {
    if (e instanceof RegexPathError) return e.message;
    throw e;
  }
}

/** Throws RegexPathError when `re` is outside the subset. */
export function checkRegexPath(re: string): RegexPathInfo {
  if (re.length > MAX_REGEX_LENGTH) throw new RegexPathError(MAX_REGEX_LENGTH + 1, `regex path is longer than ${MAX_REGEX_LENGTH} characters`);
  if (!(re.startsWith('/') || re.startsWith('^/'))) throw new RegexPathError(1, 'regex path must start with "/" or "^/"');
  const size = new Parser(re).parse();
  if (size > PCRE_SIZE_BUDGET) {
    throw new RegexPathError(1, `regex is too large once its repetitions are expanded (about ${size} bytes compiled, at most ${PCRE_SIZE_BUDGET}); use smaller counts`);
  }
  return { pcreSizeEstimate: size };
}
