// The certificate zone: hosts whose certificate (or client CA) the Lua side could not store because its zone is
// full. While any is missing the next diff compares every host again; a full zone is logged, counted and reported
// with a Warning naming the Secrets and hosts, and cleared once all are stored.
import type { Logger } from '../../operator/log.ts';
import type { DataPlane } from '../config/types.ts';
import type { PushResult } from './nginx/dynamic.ts';
import type { SyncReporting } from './sync-reporting.ts';

export class CertificateZone {
  private missingV: string[] = [];
  private readonly reporting: SyncReporting;
  private readonly log: Logger;

  constructor(reporting: SyncReporting, log: Logger) {
    this.reporting = reporting;
    this.log = log;
  }

  /** Hosts the last push could not store. */
  get missing(): readonly string[] {
    return this.missingV;
  }

  /** After a push of `data`: what it could not store (nothing: every certificate is stored). */
  update(notStored: PushResult['notStored'], data: DataPlane): void {
    const hosts = notStored ? [...notStored.hosts, ...notStored.clientHosts] : [];
    const before = this.missingV;
    this.missingV = hosts;
    this.reporting.m.certificatesNotStored.set(hosts.length);
    if (!notStored || !hosts.length) {
      if (before.length) this.log.info('every certificate is stored again', { hosts: before.length });
      return;
    }
    const secrets = [...new Set(notStored.hosts.map((h) => (h === '__default__' ? data.defaultCertificate?.source : data.certificates[h]?.source)).filter((x): x is string => !!x))].sort();
    const list = (xs: string[]) => (xs.length > 10 ? `${xs.slice(0, 10).join(', ')} and ${xs.length - 10} more` : xs.join(', '));
    const note = `nginx's certificate zone (portico_certs) is full: ${hosts.length} host(s) keep their previous certificate or get the default one (${list(hosts.sort())}; Secrets ${list(secrets)}); nothing else was evicted and everything else is programmed. Raise the ConfigMap's lua-shared-dicts certificate_data`;
    this.log.warn('certificates not stored: the certificate zone is full', { hosts: hosts.length, secrets: secrets.slice(0, 50), error: notStored.error });
    this.reporting.controllerEvent('Warning', 'CertificateZoneFull', note);
  }
}
