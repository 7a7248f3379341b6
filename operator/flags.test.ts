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
