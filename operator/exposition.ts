// Prometheus text exposition written piece by piece, for metric families too big to build as one string: a scrape of
// the per-request series at 1,000 Ingresses is tens of MB of text, and prom-client renders a family as one string
// after building a label object, a label array and a line per sample (hundreds of MB of garbage per scrape, and
// glibc keeps much of the native memory those big strings and buffers took). Here a series' labels are escaped once
// and its lines appended to a chunk that is handed on (to the HTTP response) every CHUNK characters.
// The output is what prom-client writes for the same samples (escaping, value format, "# HELP" / "# TYPE").

/** Characters per chunk handed on: small enough for the young generation, large enough for few writes. */
export const CHUNK = 64 * 1024;

export type Labels = Readonly<Record<string, string>>;

/** A sample of a family: metricName for the _bucket / _sum / _count lines of a histogram. */
export interface Sample {
  metricName?: string;
  labels: Labels;
  value: number;
}

/** A metric family as prom-client's collectors describe it. */
export interface MetricShape {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: 'sum';
  values: Sample[];
}

export function escapeText(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** `a="x",b="y"` (no braces); values escaped as in the text format. */
export function labelPairs(labels: Labels): string {
  let out = '';
  for (const k in labels) out += `${out ? ',' : ''}${k}="${escapeText(labels[k] as string).replace(/"/g, '\\"')}"`;
  return out;
}

export function valueText(v: number): string {
  if (Number.isNaN(v)) return 'Nan'; // (sic: prom-client's spelling)
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  return String(v);
}

/** `# HELP` and `# TYPE` of a family. */
export function familyHeader(name: string, help: string, type: string): string {
  return `# HELP ${name} ${escapeText(help)}\n# TYPE ${name} ${type}\n`;
}

/** Collects lines and hands out a chunk once it holds about CHUNK characters. */
export class TextChunks {
  private buf = '';

  /** Appends text (whole lines); returns a chunk to hand on when enough has gathered, else undefined. */
  add(text: string): string | undefined {
    this.buf += text;
    if (this.buf.length < CHUNK) return undefined;
    return this.take();
  }

  /** What is left (possibly ''). */
  take(): string {
    const out = this.buf;
    this.buf = '';
    return out;
  }
}

/** One family in chunks: header, then `name{labels} value` per sample. */
export function* familyText(m: MetricShape): Generator<string> {
  const out = new TextChunks();
  let c = out.add(familyHeader(m.name, m.help, m.type));
  if (c) yield c;
  for (const v of m.values) {
    const pairs = labelPairs(v.labels);
    c = out.add(`${v.metricName ?? m.name}${pairs ? `{${pairs}}` : ''} ${valueText(v.value)}\n`);
    if (c) yield c;
  }
  const rest = out.take();
  if (rest) yield rest;
}
