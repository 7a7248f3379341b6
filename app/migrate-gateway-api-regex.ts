// Regular expressions of ingress-nginx paths as Gateway API and Portico's rewrite Plugin can carry them
// (`portico migrate --to gateway-api`, app/migrate-gateway-api.ts). The paths were validated by Portico's regex subset
// (reconcilers/values/regex-path.ts: literals, escapes \d \w \s \b and escaped operators, classes with letter and
// digit ranges, groups, lookaheads, quantifiers, "^" and "$" anchors), which is what makes these rewrites safe: every
// construct that could hide a letter or a "|" is known.

/** Whether `re` has a "|" outside every group and class (ingress-nginx's "^" then binds only to the first branch). */
export function hasTopLevelAlternation(re: string): boolean {
  let depth = 0;
  for (let i = 0; i < re.length; i++) {
    const c = re[i];
    if (c === '\\') i++;
    else if (c === '[') {
      // A class: up to its "]" (escapes inside skipped; the subset never has a literal "]" first).
      for (i++; i < re.length && re[i] !== ']'; i++) if (re[i] === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return true;
  }
  return false;
}

const LETTER = /^[A-Za-z]$/;
const other = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());

/**
 * `re` matching as it does case-insensitively, without an inline flag (Portico's subset refuses "(?i)"): every letter
 * outside escapes, group syntax ("(?:", "(?<name>") and counts becomes a class of both cases, and a class gets the
 * other case of its letters and letter ranges ("[a-f]" → "[a-fA-F]", "[^x]" → "[^xX]").
 */
export function caseless(re: string): string {
  let out = '';
  let i = 0;
  while (i < re.length) {
    const c = re[i] as string;
    if (c === '\\') {
      out += re.slice(i, i + 2);
      i += 2;
    } else if (c === '(' && re[i + 1] === '?') {
      // "(?<name>": the name is not text to match; "(?:", "(?=", "(?!" are syntax.
      const end = re[i + 2] === '<' ? re.indexOf('>', i) + 1 : i + 3;
      out += re.slice(i, end);
      i = end;
    } else if (c === '{') {
      const end = re.indexOf('}', i) + 1;
      out += re.slice(i, end);
      i = end;
    } else if (c === '[') {
      let cls = '[';
      i++;
      if (re[i] === '^') cls += re[i++];
      let extra = '';
      while (i < re.length && re[i] !== ']') {
        const d = re[i] as string;
        if (d === '\\') {
          cls += re.slice(i, i + 2);
          i += 2;
        } else if (LETTER.test(d) && re[i + 1] === '-' && re[i + 2] !== undefined && re[i + 2] !== ']') {
          // A range of letters (the subset allows only a-z or A-Z ranges): the other case's range too.
          const e = re[i + 2] as string;
          cls += `${d}-${e}`;
          if (LETTER.test(e)) extra += `${other(d)}-${other(e)}`;
          i += 3;
        } else {
          cls += d;
          if (LETTER.test(d)) extra += other(d);
          i++;
        }
      }
      // Before a final "-" (a literal there), so the added letters do not make a range of it.
      out += cls.endsWith('-') ? `${cls.slice(0, -1)}${extra}-]` : `${cls}${extra}]`;
      i++;
    } else if (LETTER.test(c)) {
      out += `[${c.toLowerCase()}${c.toUpperCase()}]`;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * The pattern for the rewrite Plugin's regex mode (ngx.re.sub: the first match is replaced, the rest of the path
 * kept, case-sensitive) that gives the result of ingress-nginx's rewrite-target (`rewrite "(?i)<path>" <target>
 * break`: the first match anywhere, case-insensitive, and the whole path replaced): the path's regex made caseless,
 * anchored at the start and followed by the rest of the path, so the match is the whole path with the same captures.
 * Anchoring at the start is the same as ingress-nginx's first match because the route's own regex ("^<path>")
 * chose the request, so the path matches from its start — unless the regex has a top-level "|" (then "^" binds only
 * to its first branch): null, not convertible.
 */
export function wholePathPattern(pathRegex: string): string | null {
  if (hasTopLevelAlternation(pathRegex)) return null;
  const body = caseless(pathRegex.replace(/^\^/, ''));
  // A regex that already ends with "$" reaches the end itself (the subset allows nothing after a "$").
  return /(^|[^\\])\$$/.test(pathRegex) ? `^${body}` : `^${body}[\\s\\S]*$`;
}
