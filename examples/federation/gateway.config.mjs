// Hive Gateway's configuration for the federation cases (ci.sh): the
// supergraph compose.mjs wrote, and the headers this service needs from
// each caller (docs/federation.md, "What a gateway must forward").
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { defineConfig } from '@graphql-hive/gateway';

/**
 * recordDocuments keeps every document the gateway sends to the subgraph
 * at url, as it goes on the wire, in file as a PERSISTED_DOCUMENTS
 * manifest ({"<sha256>": "<document>"}): how an operator collects the
 * gateway's documents for a subgraph run with PERSISTED_ONLY=true
 * (docs/federation.md, "What a gateway must forward").
 */
function recordDocuments(file, url) {
  const manifest = {};
  return {
    onFetch({ url: to, options }) {
      if (!String(to).startsWith(url) || typeof options.body !== 'string') return;
      const { query } = JSON.parse(options.body);
      const hash = query && createHash('sha256').update(query).digest('hex');
      if (hash && !manifest[hash]) {
        manifest[hash] = query;
        writeFileSync(file, JSON.stringify(manifest, null, 2));
      }
    },
  };
}

export const gatewayConfig = defineConfig({
  supergraph: process.env.SUPERGRAPH,
  host: '127.0.0.1',
  port: Number(process.env.GATEWAY_PORT),
  // The caller's token and request id reach every subgraph: from the
  // request's headers, or for a client on a WebSocket from its
  // connection_init payload (connectionParams), which the gateway merges
  // into the context's headers.
  propagateHeaders: {
    fromClientToSubgraphs({ request, context }) {
      const header = (name) =>
        request.headers.get(name) ??
        Object.entries(context?.headers ?? {}).find(([k]) => k.toLowerCase() === name)?.[1] ??
        null;
      return {
        authorization: header('authorization'),
        'x-request-id': header('x-request-id'),
      };
    },
  },
  // Subscriptions to this service go over Server-Sent Events (the
  // gateway's default transport for a subgraph over HTTP) as POST: the
  // service streams to a POST with Accept: text/event-stream and answers
  // 406 to a GET that asks for a stream (docs/federation.md,
  // "Subscriptions").
  transportEntries: {
    catalogue: {
      options: {
        subscriptions: { kind: 'http', options: { method: 'POST' } },
      },
    },
  },
  // @defer and @stream for clients, planned over subgraphs that answer
  // one JSON body each.
  deferStream: true,
  // Subgraph errors reach the client with their codes.
  maskedErrors: false,
  // RECORD_DOCUMENTS=FILE (ci.sh): the documents sent to this service,
  // at API_URL, recorded as a manifest.
  plugins: () => (process.env.RECORD_DOCUMENTS ? [recordDocuments(process.env.RECORD_DOCUMENTS, process.env.API_URL)] : []),
});
