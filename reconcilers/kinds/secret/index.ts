// The Secret kind: TLS Secrets (certificates, SecretReconciler) and the others (credentials, plugin configs, CA
// bundles: CredentialSecretReconciler). Listed last (stage 2), once every Ingress and CR is in the model, so each
// Secret's data is kept only when something references it, right at list time. It serves Secret data to the
// other kinds' normalizers (ctx.secrets).
import { Resources } from '../../resources.ts';
import type { KindDescriptor } from '../kind.ts';
import { followReads } from '../reads.ts';
import { CredentialSecretReconciler } from './credentials.ts';
import { SecretReconciler, secretTransform, type SecretObject } from './reconciler.ts';

const STAGE = 2;

export const secret: KindDescriptor = {
  kind: 'Secret',
  resource: Resources.Secret,
  stage: STAGE,
  writes: ['Secret'],
  rbac: [
    {
      resource: Resources.Secret,
      verbs: ['get', 'list', 'watch'],
      why:
        'Secrets: TLS Secrets are watched without their data unless an Ingress or Route references them; a newly\n' +
        'referenced one is fetched once (get). Credential Secrets of Consumers (key-auth, basic-auth), Upstream CA\n' +
        'bundles and Plugin configFrom Secrets are Opaque, so the rule cannot be narrowed to the TLS type.',
    },
  ],
  wire(ctx) {
    const { m, model } = ctx;
    const secrets = m.informer<SecretObject>(Resources.Secret, { stage: STAGE, fieldSelector: 'type=kubernetes.io/tls', transform: secretTransform(model) });
    // Credential and plugin-config Secrets (any type but TLS): data kept only for Secrets a Consumer or Plugin names.
    const otherSecrets = m.informer<SecretObject>(Resources.Secret, { stage: STAGE, fieldSelector: 'type!=kubernetes.io/tls', transform: secretTransform(model) });
    // Secrets a Plugin, Consumer, Upstream or an Ingress's auth-secret or proxy-ssl-secret reads (see credentials.ts).
    const rereads = new Set(ctx.kinds.filter((k) => k.rereadsCredentials).map((k) => k.kind));
    const credentials = new CredentialSecretReconciler({
      model,
      informers: [otherSecrets, secrets],
      client: m.client,
      enqueue: (ref) => {
        const slash = ref.indexOf('/');
        const kind = ref.slice(0, slash);
        if (rereads.has(kind)) ctx.enqueue(kind, ref.slice(slash + 1));
      },
    });
    const secretCtrl = m.controller({ name: 'secret', reconciler: new SecretReconciler(secrets, model, m.client, m.events), stage: STAGE });
    secretCtrl.watch(secrets);
    const credentialCtrl = m.controller({ name: 'credential-secret', reconciler: credentials, stage: STAGE });
    credentialCtrl.watch(otherSecrets);
    credentialCtrl.watch(secrets);

    // A Secret becomes (un)referenced when an object that reads it changes in the model: re-check the Secrets it names
    // now and the ones it named before — TLS Secrets (Ingress and Route TLS) with the TLS reconciler, the others
    // (credentials, plugin configs, CA bundles, auth-secrets, proxy-ssl-secrets) with the credential reconciler.
    followReads(model, ctx.kinds, {
      read: (k) => k.secretsRead,
      none: { tls: [], other: [] },
      isEmpty: (r) => !r.tls.length && !r.other.length,
      changed(before, now) {
        for (const s of new Set([...before.tls, ...now.tls])) secretCtrl.enqueue(s);
        for (const s of new Set([...before.other, ...now.other])) credentialCtrl.enqueue(s);
      },
    });
    return { informer: secrets, controller: secretCtrl, provides: { secrets: credentials.lookup } };
  },
};
