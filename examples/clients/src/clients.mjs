// The five clients, each configured as a front-end would configure it,
// behind one small interface the cases drive: session(token, {etag})
// returns {query, mutate, subscribe, close}; query and mutate resolve
// with the data or throw what the client threw; subscribe returns an
// Inbox and a stop function. token undefined sends none.
import { createHash } from 'node:crypto';

import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { Client as UrqlClient, cacheExchange, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { GraphQLClient } from 'graphql-request';
import { createClient as createSSEClient } from 'graphql-sse';
import { createClient as createWSClient } from 'graphql-ws';
import { onEnd, pipe, subscribe as wonkaSubscribe } from 'wonka';
import WebSocket from 'ws';

import { Inbox, env, graphqlURL, onCleanup, recordingFetch, websocketURL } from './harness.mjs';

const sha256 = (text) => createHash('sha256').update(text).digest('hex');
const bearer = (token) => (token ? { Authorization: `Bearer ${token}` } : {});
const operationName = (text) => /^\s*(?:query|mutation|subscription)\s+(\w+)/.exec(text)?.[1];

/**
 * graphqlWS is a graphql-transport-ws client as a browser makes one: the
 * token in connection_init's payload, no retries (a refused connection
 * is the outcome a case looks for).
 */
function graphqlWS(token) {
  return createWSClient({
    url: websocketURL,
    webSocketImpl: WebSocket,
    connectionParams: token ? bearer(token) : undefined,
    retryAttempts: 0,
    lazy: true,
  });
}

/**
 * once runs a single-result operation through a graphql-ws or
 * graphql-sse client: resolves with its data, rejects with its errors (a
 * result's errors, an error message, a close event, a network error).
 */
function once(client, text, variables) {
  return new Promise((resolve, reject) => {
    let result;
    client.subscribe(
      { query: text, variables, operationName: operationName(text) },
      {
        next: (r) => {
          result = r;
        },
        error: reject,
        complete: () => (result?.errors?.length ? reject(result.errors) : resolve(result?.data)),
      },
    );
  });
}

/** sinkInbox subscribes through a graphql-ws or graphql-sse client. */
function sinkInbox(client, text, variables) {
  const inbox = new Inbox();
  const dispose = client.subscribe({ query: text, variables, operationName: operationName(text) }, inbox);
  return { inbox, stop: onCleanup(dispose) };
}

/**
 * apollo: Apollo Client 4, HttpLink for queries and mutations (GET for
 * queries in the ETag case), GraphQLWsLink for subscriptions, and with
 * PERSISTED_ONLY the persisted-queries link in front of HttpLink (hashes,
 * GET for hashed queries in the ETag case).
 */
const apollo = {
  name: 'apollo',
  etag: true,
  subscriptions: 'websocket',
  persisted: true,
  session(token, { etag = false } = {}) {
    let http = new HttpLink({ uri: graphqlURL, headers: bearer(token), fetch: recordingFetch({ etag }), useGETForQueries: etag });
    if (env.persistedOnly) {
      http = new PersistedQueryLink({ sha256, useGETForHashedQueries: etag }).concat(http);
    }
    const ws = graphqlWS(token);
    const link = ApolloLink.split(
      ({ query }) => {
        const d = getMainDefinition(query);
        return d.kind === 'OperationDefinition' && d.operation === 'subscription';
      },
      new GraphQLWsLink(ws),
      http,
    );
    const client = new ApolloClient({ cache: new InMemoryCache(), link });
    return {
      async query(text, variables) {
        const r = await client.query({ query: gql(text), variables, fetchPolicy: 'network-only' });
        if (r.error) {
          throw r.error;
        }
        return r.data;
      },
      async mutate(text, variables) {
        const r = await client.mutate({ mutation: gql(text), variables });
        if (r.error) {
          throw r.error;
        }
        return r.data;
      },
      subscribe(text, variables) {
        const inbox = new Inbox();
        const s = client.subscribe({ query: gql(text), variables }).subscribe(inbox);
        return { inbox, stop: onCleanup(() => s.unsubscribe()) };
      },
      close: onCleanup(() => {
        client.stop();
        void ws.dispose();
      }),
    };
  },
};

/**
 * urql: @urql/core with its default exchanges (cacheExchange,
 * fetchExchange), its default Accept and GET for queries
 * ('within-url-limit'), subscriptions over fetch (Server-Sent Events,
 * fetchSubscriptions); with PERSISTED_ONLY the persisted exchange.
 */
const urql = {
  name: 'urql',
  etag: true,
  subscriptions: 'sse',
  persisted: true,
  session(token, { etag = false } = {}) {
    const client = new UrqlClient({
      url: graphqlURL,
      exchanges: env.persistedOnly ? [cacheExchange, persistedExchange(), fetchExchange] : [cacheExchange, fetchExchange],
      fetchSubscriptions: true,
      fetch: recordingFetch({ etag }),
      fetchOptions: { headers: bearer(token) },
    });
    return {
      async query(text, variables) {
        const r = await client.query(text, variables, { requestPolicy: 'network-only' }).toPromise();
        if (r.error) {
          throw r.error;
        }
        return r.data;
      },
      async mutate(text, variables) {
        const r = await client.mutation(text, variables).toPromise();
        if (r.error) {
          throw r.error;
        }
        return r.data;
      },
      subscribe(text, variables) {
        const inbox = new Inbox();
        // An error result is the subscription's end: urql keeps the
        // operation open (hasNext stays true, onEnd does not run) until
        // the application drops it.
        const { unsubscribe } = pipe(
          client.subscription(text, variables),
          onEnd(() => inbox.complete()),
          wonkaSubscribe((r) => (r.error ? inbox.error(r.error) : inbox.next(r))),
        );
        return { inbox, stop: onCleanup(unsubscribe) };
      },
      close() {},
    };
  },
};

/** graphqlRequest: graphql-request, POST (GET in the ETag case); no subscriptions. */
const graphqlRequest = {
  name: 'graphql-request',
  etag: true,
  subscriptions: undefined,
  plainPost: true,
  session(token, { etag = false } = {}) {
    const fetch = recordingFetch({ etag });
    const client = new GraphQLClient(graphqlURL, { headers: bearer(token), fetch, method: etag ? 'GET' : 'POST' });
    const post = new GraphQLClient(graphqlURL, { headers: bearer(token), fetch });
    return {
      query: (text, variables) => client.request(text, variables),
      mutate: (text, variables) => post.request(text, variables),
      subscribe() {
        throw new Error('graphql-request has no subscriptions');
      },
      close() {},
    };
  },
};

/** graphqlWs: graphql-ws, every operation over one WebSocket. */
const graphqlWs = {
  name: 'graphql-ws',
  etag: false,
  subscriptions: 'websocket',
  session(token) {
    const client = graphqlWS(token);
    return {
      query: (text, variables) => once(client, text, variables),
      mutate: (text, variables) => once(client, text, variables),
      subscribe: (text, variables) => sinkInbox(client, text, variables),
      close: onCleanup(() => void client.dispose()),
    };
  },
};

/** graphqlSse: graphql-sse, every operation a POST answered as an event stream (distinct connections mode). */
const graphqlSse = {
  name: 'graphql-sse',
  etag: false,
  subscriptions: 'sse',
  session(token) {
    const client = createSSEClient({ url: graphqlURL, headers: bearer(token), fetchFn: recordingFetch(), retryAttempts: 0 });
    return {
      query: (text, variables) => once(client, text, variables),
      mutate: (text, variables) => once(client, text, variables),
      subscribe: (text, variables) => sinkInbox(client, text, variables),
      close: onCleanup(() => client.dispose()),
    };
  },
};

/** clients are the clients of the matrix, in the table's order. */
export const clients = [apollo, urql, graphqlRequest, graphqlWs, graphqlSse];
