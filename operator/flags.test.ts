import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { ConfigError, flagTableMarkdown, flagTypes, parseFlags } from './flags.ts';

const flags = {
  port: { schema: flagTypes.port.default(80), help: 'listen port' },
  verbose: { schema: flagTypes.bool.default(false), help: 'more logs' },
  name: { schema: z.string().optional(), help: 'a name' },
};
const parser = { flags, envPrefix: 'DEMO', boolFlags: new Set(['verbose']), unknownFlagHint: (n: string) => (n === 'old' ? 'use --name' : undefined) };

test('an application table: defaults, environment under its own prefix, flags win', () => {
  assert.deepEqual(parseFlags(parser, [], {}), { port: 80, verbose: false, name: undefined });
  const v = parseFlags(parser, ['--verbose', '--port=81'], { DEMO_PORT: '90', DEMO_NAME: 'x' });
  assert.deepEqual(v, { port: 81, verbose: true, name: 'x' });
});

test('unknown flags, with the application\'s hint', () => {
  assert.throws(() => parseFlags(parser, ['--nope'], {}), (e: Error) => e instanceof ConfigError && e.message === 'unknown flag --nope');
  assert.throws(() => parseFlags(parser, ['--old', 'a'], {}), /^Error: unknown flag --old: use --name$/);
});

test('markdown table uses the application\'s prefix', () => {
  assert.match(flagTableMarkdown(flags, 'DEMO'), /\| `--port` \| `DEMO_PORT` \| `80` \| listen port \|/);
});

test('durations, whole seconds and booleans as Go and pflag write them', () => {
  const d = (v: string) => flagTypes.duration.parse(v);
  assert.equal(d('500ms'), 500);
  assert.equal(d('15s'), 15_000);
  assert.equal(d('1m30s'), 90_000);
  assert.equal(d('1.5h'), 5_400_000);
  assert.equal(d('0'), 0);
  assert.equal(d('1500us'), 2);
  for (const bad of ['30', '1d', '-1s', 's', '1m 30s', '']) assert.equal(flagTypes.duration.safeParse(bad).success, false, bad);
  const s = (v: string) => flagTypes.secondsOrDuration.parse(v);
  assert.equal(s('30'), 30_000);
  assert.equal(s('0'), 0);
  assert.equal(s('250ms'), 250);
  assert.equal(flagTypes.secondsOrDuration.safeParse('30.5').success, false);
  for (const t of ['true', 't', 'T', 'TRUE', 'True', '1']) assert.equal(flagTypes.bool.parse(t), true, t);
  for (const f of ['false', 'f', 'F', 'FALSE', 'False', '0']) assert.equal(flagTypes.bool.parse(f), false, f);
  assert.equal(flagTypes.bool.safeParse('yes').success, false);
});
