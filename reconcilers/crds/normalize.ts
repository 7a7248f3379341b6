// The CRD normalizers moved to reconcilers/kinds/<kind>/normalize.ts (a kind is a folder). This re-export keeps the
// older import path for the modules outside reconcilers/kinds/ that still use it (translate/plugin-instances.ts and
// some tests); new code imports from the kind's folder.
export { issuesText, type CrdResult, type SecretData, type SecretLookup } from '../kinds/crd-normalize.ts';
export { normalizeRoute } from '../kinds/route/normalize.ts';
export { normalizeUpstream } from '../kinds/upstream/normalize.ts';
export { limitKey, normalizePlugin, pluginInstanceOf } from '../kinds/plugin/normalize.ts';
export { normalizeConsumer, passwordHash } from '../kinds/consumer/normalize.ts';
