// The data-plane benchmarks' fixed parts (dataplane.ts, peers.ts): a static backend (nginx answering `return 200`)
// on pod addresses in the test network namespace, so the proxy in front is what is measured, and the plain nginx
// reference (one worker, static upstream to those backends, keepalive) the proxies are compared with.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { addPod } from '../harness/pods.ts';

/** Two pods labelled app=static with one nginx inside the pod namespace on port 9090 of both; returns their IPs. */
export async function startStaticBackends(ns: string, dir: string, children: ChildProcess[]): Promise<string[]> {
  const ips = [await addPod(ns, 'static-1', { labels: { app: 'static' } }), await addPod(ns, 'static-2', { labels: { app: 'static' } })];
  mkdirSync(path.join(dir, 'b'), { recursive: true });
  writeFileSync(path.join(dir, 'b', 'nginx.conf'), `daemon off; worker_processes 1; pid ${dir}/b/pid; error_log stderr error;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000;
  server { ${ips.map((ip) => `listen ${ip}:9090;`).join(' ')} location / { return 200 "ok\\n"; } } }`);
  children.push(spawn('ip', ['netns', 'exec', 'portico-pods', 'nginx', '-p', path.join(dir, 'b'), '-c', path.join(dir, 'b', 'nginx.conf'), '-e', 'stderr'], { stdio: 'inherit' }));
  return ips;
}

/** Plain nginx's configuration under dir/name: one worker, a static upstream to the backends, `log` as its access log line. */
export function plainNginxConf(dir: string, name: string, port: number, ips: string[], log: string): string {
  return `daemon off; worker_processes 1; pid ${dir}/${name}/pid; error_log stderr error;
events { worker_connections 16384; multi_accept on; }
http { keepalive_requests 1000;
  log_format l '$remote_addr - [$time_local] "$request" $status $body_bytes_sent "$http_user_agent" $request_time $upstream_addr $upstream_status $upstream_response_time';
  ${log}
  upstream u { ${ips.map((ip) => `server ${ip}:9090;`).join(' ')} keepalive 320; }
  server { listen 127.0.0.1:${port}; location / { proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $host; proxy_pass http://u; } } }`;
}

/** Starts plain nginx (plainNginxConf) on 127.0.0.1:port. */
export function startPlainNginx(dir: string, name: string, port: number, ips: string[], log: string, children: ChildProcess[]): void {
  mkdirSync(path.join(dir, name), { recursive: true });
  writeFileSync(path.join(dir, name, 'nginx.conf'), plainNginxConf(dir, name, port, ips, log));
  children.push(spawn('nginx', ['-p', path.join(dir, name), '-c', path.join(dir, name, 'nginx.conf'), '-e', 'stderr'], { stdio: 'inherit' }));
}
