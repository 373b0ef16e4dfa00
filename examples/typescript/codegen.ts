import { createHash } from 'node:crypto';

import type { CodegenConfig } from '@graphql-codegen/cli';

import { apiURL, requireEnv, tokenHint } from './src/env';

// The schema is introspected from the running server, as a front-end
// project does: it is then the schema of the server the client talks to.
// Introspection is a free-form document, so under PERSISTED_ONLY=true it
// needs a dashboard token; CODEGEN_TOKEN falls back to TOKEN.
const token = process.env.CODEGEN_TOKEN?.trim() || requireEnv('TOKEN', tokenHint.codegen);

const config: CodegenConfig = {
  schema: [{ [`${apiURL}/graphql`]: { headers: { Authorization: `Bearer ${token}` } } }],
  documents: ['src/**/*.ts', '!src/generated/**'],
  generates: {
    'src/generated/graphql/': {
      preset: 'client',
      presetConfig: {
        // Each document carries the sha256 of its text, and the manifest
        // persisted-documents.json ({"<sha256>": "<document>"}) is what the
        // server preloads with PERSISTED_DOCUMENTS. The hash is plain hex,
        // as APQ's sha256Hash is ('sha256' would write "sha256:<hex>").
        // A client that meets a server without the manifest registers a
        // document by sending the manifest's text with its hash (APQ).
        persistedDocuments: {
          mode: 'embedHashInDocument',
          hashAlgorithm: (document: string) => createHash('sha256').update(document).digest('hex'),
        },
        fragmentMasking: false,
      },
      config: {
        // graphql() returns typed strings: no GraphQL parser at run time.
        documentMode: 'string',
        useTypeImports: true,
        enumsAsTypes: true,
        strictScalars: true,
        scalars: {
          Cursor: 'string',
          Date: 'string',
          Map: 'Record<string, unknown>',
          Time: 'string',
          // Uploads go in a multipart request, which src/graphql.ts does not send.
          Upload: 'Blob',
          // The federation subgraph's own scalars (docs/federation.md): the
          // schema serves them for gateways; this client never sends them.
          FieldSet: 'string',
          _Any: 'Record<string, unknown>',
          federation__Policy: 'string',
          federation__Scope: 'string',
        },
      },
    },
  },
};

export default config;
