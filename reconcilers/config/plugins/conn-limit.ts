// conn-limit (nginx-assets/lua/portico/plugins/conn_limit.lua): made from ingress-nginx's limit-connections
// annotation only (reconcilers/annotations/groups/rate-limit.ts); no Plugin object configures it.
import { definePlugin } from './plugin.ts';

/** ingress-nginx's limit-connections (annotation only): requests of one client address in progress at once. */
export type Instance = {
  type: 'conn-limit';
  limit: number;
  /** Answer when over the limit (the ConfigMap's limit-conn-status-code, default 503). */
  status: number;
  /** Counter namespace in shared memory (the plugin id). */
  key: string;
  /** Client CIDRs never limited (limit-allowlist). */
  exempt?: string[];
};

export const plugin = definePlugin<Instance>()({ name: 'conn-limit' });
