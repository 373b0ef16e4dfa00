// Hive Gateway's configuration for the federation cases (ci.sh): the
// supergraph compose.mjs wrote, and the headers this service needs from
// each caller (docs/federation.md, "What a gateway must forward").
import { defineConfig } from '@graphql-hive/gateway';

export const gatewayConfig = defineConfig({
  supergraph: process.env.SUPERGRAPH,
  host: '127.0.0.1',
  port: Number(process.env.GATEWAY_PORT),
  // The caller's token and request id reach every subgraph.
  propagateHeaders: {
    fromClientToSubgraphs({ request }) {
      return {
        authorization: request.headers.get('authorization'),
        'x-request-id': request.headers.get('x-request-id'),
      };
    },
  },
  // @defer and @stream for clients, planned over subgraphs that answer
  // one JSON body each.
  deferStream: true,
  // Subgraph errors reach the client with their codes.
  maskedErrors: false,
});
