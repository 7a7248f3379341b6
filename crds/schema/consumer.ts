// Consumer (portico.dev/v1alpha1): an API client identified by key-auth or basic-auth credentials stored in
// Secrets, with plugins applied to its requests (e.g. its own rate limit).
import { z } from 'zod';
import { AGE, conditionColumn, type CrdDefinition } from './definition.ts';
import { objectName, secretRefSchema, setList, statusSchema } from './common.ts';

export const CREDENTIAL_TYPES = ['key-auth', 'basic-auth'] as const;

export const credentialSchema = z
  .strictObject({
    type: z
      .enum(CREDENTIAL_TYPES)
      .describe('key-auth: the Secret holds the API key in data.key. basic-auth: the Secret holds data.username and data.password.'),
    secretRef: secretRefSchema.describe('Secret in the same namespace holding the credential (type Opaque): data.key for key-auth; data.username and data.password for basic-auth.'),
  })
  .describe('A credential identifying this consumer to the key-auth or basic-auth plugin.');

export const consumerSpecSchema = z
  .strictObject({
    username: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9._@-]+$/, 'must be letters, digits and "._@-"')
      .describe('Name of the consumer, what rate-limit with by: consumer counts per. Letters, digits and "._@-", up to 128.'),
    credentials: z
      .array(credentialSchema)
      .min(1)
      .max(16)
      .optional()
      .describe('Credentials that identify this consumer; several of a type are allowed (e.g. during key rotation). Absent: the consumer cannot authenticate.'),
    plugins: setList(objectName(), 16)
      .optional()
      .describe('Names of Plugin objects in the same namespace applied to this consumer\'s requests once it is authenticated (e.g. its own rate-limit).'),
  })
  .describe('An API client: its name, its credentials, its plugins.');
export type ConsumerSpec = z.output<typeof consumerSpecSchema>;
export type ConsumerSpecInput = z.input<typeof consumerSpecSchema>;
export type Credential = z.output<typeof credentialSchema>;

/** The Consumer CRD (crds/consumers.yaml). */
export const consumerCrd: CrdDefinition = {
  kind: 'Consumer',
  plural: 'consumers',
  singular: 'consumer',
  shortNames: ['pconsumer'],
  description: 'Consumer is an API client known to the key-auth and basic-auth plugins, with its credentials (in Secrets) and its own plugins.',
  spec: consumerSpecSchema,
  status: statusSchema,
  printerColumns: [{ name: 'Username', type: 'string', jsonPath: '.spec.username', description: 'Consumer name' }, conditionColumn('Accepted'), AGE],
};
