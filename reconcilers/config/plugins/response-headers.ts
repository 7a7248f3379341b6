// response-headers (nginx-assets/lua/portico/plugins/response_headers.lua): headers set, added or removed on the
// response sent to the client.
import { headerChangesOf, headerChangesSchema, type HeaderChanges } from './header-changes.ts';
import { definePlugin } from './plugin.ts';

export type Instance = HeaderChanges<'response-headers'>;

export const responseHeadersConfigSchema = headerChangesSchema('response-headers');

export const plugin = definePlugin<Instance>()({
  name: 'response-headers',
  crd: { rank: 6, schema: responseHeadersConfigSchema, toInstance: headerChangesOf },
});
