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
  /** openssl ca's index: the leaf, valid ("V"). */
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

/** A CA, a leaf for `name` whose AIA names `url`, a responder signer, and the index listing the leaf as valid. */
export function ocspPki(dir: string, name: string, url: string): OcspPki {
  const ca = makeCa(dir, `${name}-ca`);
  const leaf = signed(dir, ca, name, `subjectAltName=DNS:${name}\nbasicConstraints=CA:FALSE\nauthorityInfoAccess=OCSP;URI:${url}\n`);
  const signer = signed(dir, ca, `${name}-ocsp`, 'basicConstraints=CA:FALSE\nextendedKeyUsage=OCSPSigning\n');
  const serial = execFileSync('openssl', ['x509', '-in', leaf.certFile, '-noout', '-serial'], { encoding: 'utf8' }).trim().replace(/^serial=/, '');
  const expiry = execFileSync('openssl', ['x509', '-in', leaf.certFile, '-noout', '-enddate'], { encoding: 'utf8' }).trim().replace(/^notAfter=/, '');
  const d = new Date(expiry);
  const p = (n: number) => String(n).padStart(2, '0');
  const asn1 = `${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  const index = path.join(dir, `${name}-index.txt`);
  writeFileSync(index, `V\t${asn1}\t\t${serial}\tunknown\t/CN=${name}\n`);
  return { ca, leaf: { ...leaf, chain: leaf.cert + ca.cert }, signer, index };
}
