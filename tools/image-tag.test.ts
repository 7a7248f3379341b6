// The Deployment runs the image `make image` builds: kustomize/deployment.yaml's `image:` must be exactly
// portico/portico:<package.json version> (dist/portico-<version>.oci.tar is docker.io/portico/portico:<version>,
// the name the kubelet resolves `portico/portico:<version>` to).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

test('kustomize/deployment.yaml runs portico/portico:<package.json version>', () => {
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const yaml = readFileSync(path.join(root, 'kustomize/deployment.yaml'), 'utf8');
  const images = [...yaml.matchAll(/^\s*(?:-\s+)?image:\s*["']?([^"'\s#]+)/gm)].map((m) => m[1]);
  assert.ok(images.length > 0, 'no image: in kustomize/deployment.yaml');
  const portico = images.filter((i) => /(^|\/)portico\/portico(:|@|$)/.test(i ?? ''));
  assert.deepEqual(portico, [`portico/portico:${version}`], `image tags ${JSON.stringify(images)} vs package.json version ${version}`);
});
