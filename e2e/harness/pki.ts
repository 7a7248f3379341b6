// A small PKI for the e2e suites, made with the openssl CLI in a temporary directory: CAs (root or intermediate),
// server certificates (with a DNS name) and client certificates. EC P-256 keys, valid two days.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export class Pki {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'portico-pki-'));

  private openssl(args: string[]): void {
    execFileSync('openssl', args, { stdio: 'ignore' });
  }

  file(name: string): string {
    return path.join(this.dir, name);
  }

  /** PEM text of `<name>.crt` / `<name>.key` (or any file of the directory). */
  read(name: string): string {
    return readFileSync(this.file(name), 'utf8');
  }

  private newKey(name: string, cn: string): void {
    this.openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${cn}`, '-keyout', this.file(`${name}.key`), '-out', this.file(`${name}.csr`)]);
  }

  private sign(name: string, issuer: string, ext: string): void {
    writeFileSync(this.file(`${name}.ext`), ext);
    this.openssl(['x509', '-req', '-in', this.file(`${name}.csr`), '-CA', this.file(`${issuer}.crt`), '-CAkey', this.file(`${issuer}.key`), '-CAcreateserial', '-days', '2', '-extfile', this.file(`${name}.ext`), '-out', this.file(`${name}.crt`)]);
  }

  /** A self-signed root CA, or with `issuer` an intermediate CA signed by it. */
  ca(name: string, issuer?: string): this {
    if (!issuer) {
      this.openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', this.file(`${name}.key`), '-out', this.file(`${name}.crt`)]);
      return this;
    }
    this.newKey(name, name);
    this.sign(name, issuer, 'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign\n');
    return this;
  }

  /** A server certificate for `dns` (CN: the first name; subjectAltName: all). */
  server(name: string, issuer: string, dns: string | string[]): this {
    const names = typeof dns === 'string' ? [dns] : dns;
    this.newKey(name, names[0] as string);
    this.sign(name, issuer, `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\n`);
    return this;
  }

  /** A client certificate with subject CN `cn`. */
  client(name: string, issuer: string, cn: string): this {
    this.newKey(name, cn);
    this.sign(name, issuer, 'extendedKeyUsage=clientAuth\n');
    return this;
  }

  /** The certificate followed by its issuers' certificates (what a server sends as its chain). */
  chain(...names: string[]): string {
    return names.map((n) => this.read(`${n}.crt`)).join('');
  }
}
