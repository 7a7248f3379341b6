// digest-auth (nginx-assets/lua/portico/plugins/digest_auth.lua): HTTP Digest authentication (MD5, qop=auth)
// against the users of the plugin itself — ingress-nginx's auth-type: digest with an htdigest auth-secret. No Plugin
// object configures it (its users come from a Secret the Ingress names; Consumers hold no digest credentials).
import { definePlugin } from './plugin.ts';

export type Instance = {
  type: 'digest-auth';
  /** The realm of the challenge and of every user's HA1: printable ASCII without quotes, backslashes or ":". */
  realm: string;
  /** The users: name and HA1 = lower-case hex MD5("user:realm:password"). */
  users: { username: string; ha1: string }[];
  /**
   * How long a nonce is good for, in seconds (1-3600). Absent = 300, which is what annotations make; the real-nginx
   * test sets a short one to see expiry.
   */
  nonceSeconds?: number;
};

export const plugin = definePlugin<Instance>()({ name: 'digest-auth' });
