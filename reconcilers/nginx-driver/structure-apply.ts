// Applying a new structure: render nginx.conf → nginx -t (finding and leaving out the directive profiles that break
// it) → start or reload → confirm the new generation is live. On any failure the running configuration stays.
import type { Logger } from '../../operator/log.ts';
import type { GatewayConfig } from '../config/types.ts';
import { diffConfig, structureChecksum } from '../translate/diff.ts';
import type { Exclusion } from './exclusion.ts';
import { excludeProfiles, findCulprits } from './isolate.ts';
import { writeModsecurityRules } from './nginx/modsecurity.ts';
import { moduleProblemReporter } from './nginx/optional-modules.ts';
import { fullNginxTuning } from '../config/nginx-tuning.ts';
import type { NginxProcess } from './nginx/process.ts';
import { renderNginxConf, writeClientCertificates, writeGatewayTlsFiles, writeTrustedCas } from './nginx/render.ts';
import type { NginxState } from './nginx-state.ts';
import { recordReload } from './metrics.ts';
import type { SyncReporting } from './sync-reporting.ts';

export class StructureApplier {
  private readonly nginx: NginxProcess;
  private readonly state: NginxState;
  private readonly exclusion: Exclusion;
  private readonly reporting: SyncReporting;
  private readonly log: Logger;
  /**
   * brotli or GeoIP2 asked for but not installed, or a GeoIP2 database missing: the renderer leaves them out (nginx
   * serves without them, the $geoip2_* variables empty); said once per change, on the controller and in the log.
   */
  private readonly reportModuleProblems = moduleProblemReporter((p) => {
    this.reporting.controllerEvent('Warning', p.reason, p.message);
    this.log.error(p.message, { reason: p.reason });
  });

  constructor(nginx: NginxProcess, state: NginxState, exclusion: Exclusion, reporting: SyncReporting, log: Logger) {
    this.nginx = nginx;
    this.state = state;
    this.exclusion = exclusion;
    this.reporting = reporting;
    this.log = log;
  }

  /**
   * Render → nginx -t (with fault isolation) → start or reload → confirm. False when the running config stays.
   * Culprits found are left out of `desired.structure` and recorded in the exclusion state.
   */
  async apply(desired: GatewayConfig, running: GatewayConfig | null): Promise<boolean> {
    const t0 = performance.now();
    let checksum = structureChecksum(desired.structure);
    writeTrustedCas(desired.structure, this.nginx.runtime);
    writeClientCertificates(desired.structure, this.nginx.runtime);
    writeGatewayTlsFiles(desired.structure, this.nginx.runtime);
    writeModsecurityRules(desired.structure, this.nginx.runtime);
    this.reportModuleProblems(fullNginxTuning(desired.structure.global));
    let conf = renderNginxConf(desired.structure, this.nginx.runtime, checksum);
    const tTest = performance.now();
    let v = await this.nginx.writeValidated(conf);
    // Starting or reloading parses the same file again: give it a few times what `nginx -t` took (at 10k
    // Ingresses a fixed 15 s made the first start time out and be retried).
    const liveBudgetMs = Math.max(15_000, Math.round(3 * (performance.now() - tTest)));
    if (!v.ok) {
      // Every object passed validation, yet nginx refuses the result: find the directive profiles that break it.
      const firstError = v.output;
      const iso = await findCulprits(desired.structure, async (s) => (await this.nginx.testContent(renderNginxConf(s, this.nginx.runtime, 'probe'))).ok);
      if (iso.isolated && iso.culprits.length) {
        for (const name of iso.culprits) {
          this.exclusion.add(name, firstError);
          this.log.error('left out a directive profile that fails nginx -t', { profile: name, output: firstError });
        }
        desired.structure = excludeProfiles(desired.structure, new Set(iso.culprits));
        if (running && !diffConfig(running, desired).reload && this.nginx.isRunning()) return true;
        checksum = structureChecksum(desired.structure);
        conf = renderNginxConf(desired.structure, this.nginx.runtime, checksum);
        v = await this.nginx.writeValidated(conf);
      }
    }
    if (!v.ok) {
      recordReload(this.reporting.m, false);
      this.reporting.controllerEvent('Warning', 'ReloadFailed', `nginx -t rejected the new configuration, keeping the running one: ${v.output.slice(0, 800)}`);
      this.log.error('nginx -t failed; keeping the last good configuration', { output: v.output });
      return false;
    }
    return this.goLive(desired, running, checksum, liveBudgetMs, t0);
  }

  /** Starts nginx (or reloads it) on the validated nginx.conf and waits until it reports `checksum`. */
  private async goLive(desired: GatewayConfig, running: GatewayConfig | null, checksum: string, liveBudgetMs: number, t0: number): Promise<boolean> {
    let live: boolean;
    if (!this.nginx.isRunning()) {
      this.nginx.start();
      this.state.dataLost = true; // a fresh nginx holds no data
      live = await this.nginx.waitLive(checksum, liveBudgetMs);
    } else {
      live = await this.nginx.reload(checksum, liveBudgetMs);
    }
    if (!live) {
      recordReload(this.reporting.m, false);
      this.reporting.controllerEvent('Warning', 'ReloadFailed', 'nginx did not confirm the new configuration in time');
      return false;
    }
    recordReload(this.reporting.m, true, checksum);
    this.state.structure = desired.structure;
    this.state.checksum = checksum;
    const why = diffConfig(running, desired).reasons.join('; ') || 'configuration changed';
    this.reporting.controllerEvent('Normal', 'Reload', `nginx reloaded: ${why}`);
    this.log.info('nginx reloaded', { reasons: why, ms: Math.round(performance.now() - t0) });
    return true;
  }
}
