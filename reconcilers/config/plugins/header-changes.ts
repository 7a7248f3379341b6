// What request-headers and response-headers share (request-headers.ts, response-headers.ts): the same fields, the
// same settings; only the headers they may not change differ.
import { z } from 'zod';
import { headerName, headerValue } from '../../../crds/schema/common.ts';
import { headerList, lowerAll, rule } from './plugin.ts';

export type HeaderChanges<T extends string> = {
  type: T;
  /** Replace (or create) these headers. */
  set: { name: string; value: string }[];
  /** Add these (keeping existing values). */
  add: { name: string; value: string }[];
  remove: string[];
};

const headerSetting = () => z.strictObject({ name: headerName(), value: headerValue() });
/** Headers that frame the message or the connection: no plugin changes them (the data plane refuses them too). */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection']);
/** Request headers nginx owns for the proxied request. */
const REQUEST_ONLY = new Set(['host', 'expect']);

export const headerChangesSchema = <T extends 'request-headers' | 'response-headers'>(type: T) =>
  rule(
    rule(
      z.strictObject({
        type: z.literal(type),
        set: z.array(headerSetting()).max(64).optional(),
        add: z.array(headerSetting()).max(64).optional(),
        remove: headerList(64).optional(),
      }),
      (c) => (c.set?.length ?? 0) + (c.add?.length ?? 0) + (c.remove?.length ?? 0) > 0,
      'set at least one of set, add, remove (non-empty)',
      ['set'],
    ),
    (c) =>
      [...(c.set ?? []).map((h) => h.name), ...(c.add ?? []).map((h) => h.name), ...(c.remove ?? [])].every((n) => {
        const l = n.toLowerCase();
        return !FRAMING.has(l) && !(type === 'request-headers' && REQUEST_ONLY.has(l));
      }),
    type === 'request-headers' ? 'framing headers (Content-Length, Transfer-Encoding, Connection…) and Host or Expect cannot be changed' : 'framing headers (Content-Length, Transfer-Encoding, Connection…) cannot be changed',
    ['set'],
  );

type Settings<T extends string> = { type: T; set?: { name: string; value: string }[] | undefined; add?: { name: string; value: string }[] | undefined; remove?: string[] | undefined };

/** The validated settings as the Lua plugin runs them (names lower-case). */
export function headerChangesOf<T extends string>(c: Settings<T>): HeaderChanges<T> {
  const pairs = (xs: { name: string; value: string }[] | undefined) => (xs ?? []).map((x) => ({ name: x.name.toLowerCase(), value: x.value }));
  return { type: c.type, set: pairs(c.set), add: pairs(c.add), remove: lowerAll(c.remove) };
}
