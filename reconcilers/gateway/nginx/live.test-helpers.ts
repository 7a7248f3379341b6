// Starting and stopping a real nginx with a first configuration, shared by the real-nginx tests: render and validate
// nginx.conf, start nginx, wait until the configuration is live, push the route and backend data; and the teardown
// that stops nginx, the API client and the test network even when one of them fails.
import assert from 'node:assert/strict';
import type { GatewayConfig } from '../../config/types.ts';
import { diffConfig, structureChecksum } from '../../translate/diff.ts';
import type { DynamicClient } from './dynamic.ts';
import type { NginxProcess } from './process.ts';
import { renderNginxConf } from './render.ts';

export async function startLive(nginx: NginxProcess, dynamic: DynamicClient, config: GatewayConfig): Promise<void> {
  nginx.prepare();
  const checksum = structureChecksum(config.structure);
  const v = await nginx.writeValidated(renderNginxConf(config.structure, nginx.runtime, checksum));
  assert.ok(v.ok, v.output);
  nginx.start();
  assert.ok(await nginx.waitLive(checksum));
  await dynamic.push(diffConfig(null, config).delta);
}

export async function stopLive(nginx: NginxProcess, dynamic: DynamicClient, net?: { close(): Promise<void> }): Promise<void> {
  try {
    await nginx.stop();
    await dynamic.close();
  } finally {
    await net?.close();
  }
}
