// pod add <ns>/<name> [--label k=v]... [--port 8080] [--port-name http] [--not-ready]   → prints the pod IP
// pod rm <ns>/<name> [--grace SECONDS]
// pod ready <ns>/<name> true|false
// pod ls
import { addPod, listPods, removePod, setPodReady } from '../harness/pods.ts';

function usage(): never {
  process.stderr.write(
    'usage: pod add <ns>/<name> [--label k=v]... [--port N] [--port-name NAME] [--not-ready]\n' +
      '       pod rm <ns>/<name> [--grace SECONDS]\n       pod ready <ns>/<name> true|false\n       pod ls\n',
  );
  process.exit(2);
}

const [cmd, target, ...rest] = process.argv.slice(2);
const split = (t: string | undefined) => {
  const m = /^([a-z0-9-]+)\/([a-z0-9.-]+)$/.exec(t ?? '');
  if (!m) usage();
  return { ns: m[1] as string, name: m[2] as string };
};
const flag = (name: string) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : undefined;
};

if (cmd === 'add') {
  const { ns, name } = split(target);
  const labels: Record<string, string> = {};
  rest.forEach((a, i) => {
    if (a === '--label') {
      const [k, v] = (rest[i + 1] ?? '').split('=');
      if (!k || v === undefined) usage();
      labels[k] = v;
    }
  });
  const ip = await addPod(ns, name, {
    labels,
    port: flag('--port') ? Number(flag('--port')) : undefined,
    portName: flag('--port-name'),
    ready: !rest.includes('--not-ready'),
  });
  process.stdout.write(`${ip}\n`);
} else if (cmd === 'rm') {
  const { ns, name } = split(target);
  const { terminated } = await removePod(ns, name, Number(flag('--grace') ?? 0));
  await terminated;
} else if (cmd === 'ready') {
  const { ns, name } = split(target);
  if (rest[0] !== 'true' && rest[0] !== 'false') usage();
  await setPodReady(ns, name, rest[0] === 'true');
} else if (cmd === 'ls') {
  for (const p of await listPods()) process.stdout.write(`${p.namespace}/${p.name}\t${p.ip}:${p.port}\n`);
} else usage();
