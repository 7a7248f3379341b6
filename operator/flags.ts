// Command-line flags and environment variables, parsed with zod, for a process built on this framework. The
// application declares its flag table (name → schema with its default, and a help line) and the environment prefix;
// flags win over the environment. A bad value throws ConfigError with a one-line reason.
import { z } from 'zod';

export interface FlagSpec {
  schema: z.ZodType;
  help: string;
}
export type FlagTable = Readonly<Record<string, FlagSpec>>;
/** The parsed values of a flag table, typed by each schema's output. */
export type FlagValues<T extends FlagTable> = { -readonly [K in keyof T]: z.output<T[K]['schema']> };

export class ConfigError extends Error {}

export interface FlagParser<T extends FlagTable> {
  flags: T;
  /** Environment variables are `<envPrefix>_<FLAG_NAME>` (upper case, "-" → "_"). */
  envPrefix: string;
  /** Flags that may be given without a value ("--flag" = "--flag=true"). */
  boolFlags?: ReadonlySet<string>;
  /** Extra text for an unknown flag (e.g. a flag of another program with what to use instead); appended after ": ". */
  unknownFlagHint?: (name: string) => string | undefined;
}

const GO_DURATION = /^(0|(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/;
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const TRUE_WORDS = new Set(['true', '1', 't', 'T', 'TRUE', 'True']);

/** A Go duration (already matched by GO_DURATION) in milliseconds, rounded to the nearest. */
function goDurationMs(v: string): number {
  let ms = 0;
  for (const m of v.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  return Math.round(ms);
}

/** Common value schemas for flag tables. */
export const flagTypes = {
  /** A Go duration ("500ms", "15s", "2m", "1m30s", "1.5h"; "0") → milliseconds (rounded). */
  duration: z
    .string()
    .regex(GO_DURATION, 'expected a duration like 500ms, 15s, 2m or 1m30s')
    .transform(goDurationMs),
  /** An integer number of seconds (as ingress-nginx's int flags), or a duration like the above → milliseconds. */
  secondsOrDuration: z
    .string()
    .regex(new RegExp(`^\\d+$|${GO_DURATION.source}`), 'expected whole seconds (30) or a duration like 500ms, 15s or 2m')
    .transform((v) => (/^\d+$/.test(v) ? Number(v) * 1000 : goDurationMs(v))),
  /** Go's strconv.ParseBool alphabet, as pflag reads a boolean flag. */
  bool: z.enum(['true', 'false', '1', '0', 't', 'f', 'T', 'F', 'TRUE', 'FALSE', 'True', 'False']).transform((v) => TRUE_WORDS.has(v)),
  port: z.coerce.number().int().min(1).max(65535),
  /** namespace/name of an object. */
  nsName: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'expected namespace/name'),
  /** host:port ([v6]:port accepted) → { host, port }. */
  hostPort: z
    .string()
    .regex(/^[0-9a-zA-Z.:[\]-]+:\d{1,5}$/, 'expected host:port')
    .transform((v) => {
      const i = v.lastIndexOf(':');
      return { host: v.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(v.slice(i + 1)) };
    }),
};

export const envName = (envPrefix: string, flag: string): string => `${envPrefix}_${flag.toUpperCase().replace(/-/g, '_')}`;

/** Parses argv (without node and script) and env. Throws ConfigError with a one-line reason. */
export function parseFlags<T extends FlagTable>(p: FlagParser<T>, argv: string[], env: NodeJS.ProcessEnv): FlagValues<T> {
  const raw: Record<string, string> = {};
  for (const name of Object.keys(p.flags)) {
    const v = env[envName(p.envPrefix, name)];
    if (v !== undefined) raw[name] = v;
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument "${arg}"`);
    let name = arg.slice(2);
    let value: string | undefined;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    if (!(name in p.flags)) {
      const hint = p.unknownFlagHint?.(name);
      throw new ConfigError(hint ? `unknown flag --${name}: ${hint}` : `unknown flag --${name}`);
    }
    if (value === undefined) {
      const next = argv[i + 1];
      const isBool = p.boolFlags?.has(name) ?? false;
      if (isBool && (next === undefined || next.startsWith('--'))) value = 'true';
      else if (next === undefined) throw new ConfigError(`flag --${name} needs a value`);
      else {
        value = next;
        i++;
      }
    }
    raw[name] = value;
  }
  const out: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(p.flags)) {
    const r = def.schema.safeParse(raw[name]);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw new ConfigError(`invalid --${name}=${JSON.stringify(raw[name])}: ${issue?.message ?? 'invalid'}`);
    }
    out[name] = r.data;
  }
  return out as FlagValues<T>;
}

/** A Markdown table of the flags: flag, environment variable, default, meaning. */
export function flagTableMarkdown(flags: FlagTable, envPrefix: string): string {
  const rows = Object.entries(flags).map(([name, d]) => {
    const dflt = d.schema.safeParse(undefined);
    const shown = dflt.success && dflt.data !== undefined ? `\`${typeof dflt.data === 'object' ? JSON.stringify(dflt.data) : String(dflt.data)}\`` : '—';
    return `| \`--${name}\` | \`${envName(envPrefix, name)}\` | ${shown} | ${d.help} |`;
  });
  return ['| flag | env | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
