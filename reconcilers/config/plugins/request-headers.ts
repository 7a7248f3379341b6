// request-headers (nginx-assets/lua/portico/plugins/request_headers.lua): headers set, added or removed on the
// request sent to the backend.
import { headerChangesOf, headerChangesSchema, type HeaderChanges } from './header-changes.ts';
import { definePlugin } from './plugin.ts';

export type Instance = HeaderChanges<'request-headers'>;

export const requestHeadersConfigSchema = headerChangesSchema('request-headers');

export const plugin = definePlugin<Instance>()({
  name: 'request-headers',
  crd: { rank: 5, schema: requestHeadersConfigSchema, toInstance: headerChangesOf },
});
