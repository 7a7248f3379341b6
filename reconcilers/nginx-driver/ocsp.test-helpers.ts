// A test PKI for OCSP stapling, made with the openssl CLI: a CA, a leaf whose Authority Information Access names an
// OCSP responder URL, the responder's signing certificate, and the index file `openssl ocsp` answers from.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeCa, type Pem } from '../translate/pki.test-helpers.ts';

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export interface OcspPki {
  ca: Pem;
  /** The leaf (its chain: leaf then CA, as a Secret's tls.crt holds it), for `name`, naming `url` as its responder. */
  leaf: Pem & { chain: string };
  /** The responder's signing certificate (OCSPSigning, issued by the CA). */
  signer: Pem;
  /** A second leaf of the same CA (name `revoked.<name>`), listed as revoked. */
  revoked: Pem & { chain: string; name: string };
  /** openssl ca's index: the leaf valid ("V"), the second one revoked ("R"). */
  index: string;
}

function signed(dir: string, ca: Pem, name: string, ext: string): Pem {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const extFile = path.join(dir, `${name}.ext`);
  writeFileSync(extFile, ext);
  openssl(['req', '-new', ...EC, '-subj', `/CN=${name}`, '-keyout', keyFile, '-out', csr]);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.certFile, '-CAkey', ca.keyFile, '-CAcreateserial', '-days', '2', '-extfile', extFile, '-out', certFile]);
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile, keyFile };
}

/** A CA, a leaf for `name` whose AIA names `url` (and a revoked one), a responder signer, and the index. */
export function ocspPki(dir: string, name: string, url: string): OcspPki {
  const ca = makeCa(dir, `${name}-ca`);
  const aia = (n: string) => `subjectAltName=DNS:${n}\nbasicConstraints=CA:FALSE\nauthorityInfoAccess=OCSP;URI:${url}\n`;
  const leaf = signed(dir, ca, name, aia(name));
  const revokedName = `revoked.${name}`;
  const revoked = signed(dir, ca, revokedName, aia(revokedName));
  const signer = signed(dir, ca, `${name}-ocsp`, 'basicConstraints=CA:FALSE\nextendedKeyUsage=OCSPSigning\n');
  const field = (file: string, what: string) => execFileSync('openssl', ['x509', '-in', file, '-noout', `-${what}`], { encoding: 'utf8' }).trim().replace(/^[a-zA-Z]+=/, '');
  const p = (n: number) => String(n).padStart(2, '0');
  const asn1 = (d: Date) => `${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  const line = (status: string, pem: Pem, n: string) => `${status}\t${asn1(new Date(field(pem.certFile, 'enddate')))}\t${status === 'R' ? asn1(new Date(Date.now() - 3600_000)) : ''}\t${field(pem.certFile, 'serial')}\tunknown\t/CN=${n}\n`;
  const index = path.join(dir, `${name}-index.txt`);
  writeFileSync(index, line('V', leaf, name) + line('R', revoked, revokedName));
  return { ca, leaf: { ...leaf, chain: leaf.cert + ca.cert }, revoked: { ...revoked, chain: revoked.cert + ca.cert, name: revokedName }, signer, index };
}
