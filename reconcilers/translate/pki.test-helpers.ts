// A test PKI made with the openssl CLI (node:crypto cannot issue certificates): certificate authorities, and the
// server or client certificates they sign. Each is its PEM text and its files, in a directory of the caller's.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Pem {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const read = (certFile: string, keyFile: string): Pem => ({ cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile, keyFile });

/** A self-signed CA named `name` (CN), valid two days. */
export function makeCa(dir: string, name: string): Pem {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  openssl(['req', '-x509', ...EC, '-days', '2', '-subj', `/CN=${name}`, '-keyout', keyFile, '-out', certFile]);
  return read(certFile, keyFile);
}

/** A certificate for `name` (CN) signed by `ca`: with `dns` (and `uris`), those subjectAltNames (a server's). */
export function issue(dir: string, ca: Pem, name: string, dns: string[] = [], uris: string[] = []): Pem {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, `${name}.ext`);
  const sans = [...dns.map((d) => `DNS:${d}`), ...uris.map((u) => `URI:${u}`)];
  writeFileSync(ext, sans.length ? `subjectAltName=${sans.join(',')}\n` : 'basicConstraints=CA:FALSE\n');
  openssl(['req', '-new', ...EC, '-subj', `/CN=${name}`, '-keyout', keyFile, '-out', csr]);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.certFile, '-CAkey', ca.keyFile, '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', certFile]);
  return read(certFile, keyFile);
}

export const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A proxy-ssl-secret's data: tls.crt/tls.key of `client` and ca.crt of `ca`, each when given. */
export function proxySslData(o: { client?: Pem; ca?: Pem }): Record<string, string> {
  return {
    ...(o.client ? { 'tls.crt': b64(o.client.cert), 'tls.key': b64(o.client.key) } : {}),
    ...(o.ca ? { 'ca.crt': b64(o.ca.cert) } : {}),
  };
}
