// snippet (nginx-assets/lua/portico/plugins/snippet.lua): ingress-nginx's server-snippet and configuration-snippet,
// compiled from an allowlist of directives (reconcilers/annotations/snippets.ts); no Plugin object configures it.
import { definePlugin } from './plugin.ts';

export type Instance = {
  type: 'snippet';
  /** server-snippet: runs first (nginx's server rewrite phase); a return/break there ends only this block. */
  server?: SnippetStatement[];
  /** configuration-snippet: runs after the server block, unless that answered. */
  location?: SnippetStatement[];
};

export const plugin = definePlugin<Instance>()({ name: 'snippet' });

/**
 * A value of a compiled snippet, concatenated at request time: literal text, a request variable from the allowlist
 * (`v`: "host", "http_x_token", "arg_page", "cookie_sid"...), a capture of the last successful regex of the run
 * (`c`: 1-9), or a variable `set` earlier in the same snippet (`s`). Nothing else can be read.
 */
export type SnippetValue = (string | { v: string } | { c: number } | { s: string })[];

/**
 * One directive of an ingress-nginx snippet, compiled by reconcilers/annotations/snippets.ts from the allowlist and
 * run by the Lua snippet plugin (plugins/snippet.lua) top to bottom.
 */
export type SnippetStatement =
  | { op: 'set'; name: string; value: SnippetValue }
  /** return: `text` is the body; `location` makes it a redirect (3xx). */
  | { op: 'return'; status: number; text?: SnippetValue; location?: SnippetValue }
  /**
   * rewrite: PCRE `regex` on $uri; on a match the path becomes `path` (and the query `args`, followed by the
   * client's unless `keepArgs` is false). `redirect` (a 301/302 status) answers with a Location instead; `stop`
   * ends the block (flags last and break).
   */
  | { op: 'rewrite'; regex: string; path: SnippetValue; args?: SnippetValue; keepArgs: boolean; redirect?: number; stop: boolean }
  | { op: 'break' }
  | { op: 'if'; cond: SnippetCondition; body: SnippetStatement[] }
  /**
   * Response header, applied in the header filter (and to the snippet's own answers): `set` replaces
   * (more_set_headers; an empty value removes), `add` appends (add_header; only on 200, 201, 204, 206, 301, 302,
   * 303, 304, 307, 308 unless `always`), `clear` removes (a name ending in "*" is a prefix). `statuses` / `types`:
   * more_set_headers' -s / -t.
   */
  | { op: 'response'; action: 'set' | 'add' | 'clear'; name: string; value?: SnippetValue; always?: boolean; statuses?: number[]; types?: string[] }
  /**
   * Request header sent to the backend: `set` replaces (proxy_set_header / more_set_input_headers; an empty value
   * removes; `replaceOnly` = more_set_input_headers -r), `clear` removes (a name ending in "*" is a prefix); `types`
   * = -t (the request's Content-Type). The name "host" (proxy_set_header Host) sets the Host sent upstream.
   */
  | { op: 'request'; action: 'set' | 'clear'; name: string; value?: SnippetValue; replaceOnly?: boolean; types?: string[] };

/**
 * An `if` condition: `($v)` is true when the value is neither empty nor "0"; `=`/`!=` compare strings; `~`/`~*`
 * (caseless) match a PCRE regex and set the captures $1-$9, `negate` for `!~`/`!~*`.
 */
export type SnippetCondition =
  | { test: 'nonempty'; value: SnippetValue }
  | { test: 'eq' | 'ne'; left: SnippetValue; right: SnippetValue }
  | { test: 'match'; left: SnippetValue; regex: string; caseless: boolean; negate: boolean };
