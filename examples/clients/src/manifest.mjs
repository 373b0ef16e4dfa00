// Writes the manifest of trusted documents for PERSISTED_DOCUMENTS, as a
// build step of a front-end would: {"<sha256>": "<document>"} with every
// document of documents.mjs in the very text each client sends (and
// hashes), since a client's own printing and its added __typename fields
// change the text: the source text (graphql-ws, graphql-sse), urql's
// (formatDocument, stringifyDocument), Apollo Client's (its document
// transforms, then print) and graphql-request's (which minifies a
// document it sends with GET), the last two captured from a client.
//
// Usage: node src/manifest.mjs FILE
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';

import { ApolloClient, ApolloLink, InMemoryCache, gql as apolloGql } from '@apollo/client';
import { print } from '@apollo/client/utilities';
import { GraphQLClient } from 'graphql-request';
import { formatDocument, gql as urqlGql, stringifyDocument } from '@urql/core';
import { Observable } from 'rxjs';

import { trusted } from './documents.mjs';

/** apolloTexts returns the text Apollo Client sends for each document. */
async function apolloTexts(texts) {
  const sent = [];
  const client = new ApolloClient({
    cache: new InMemoryCache(),
    link: new ApolloLink((operation) => {
      sent.push(print(operation.query));
      return new Observable((o) => {
        o.next({ data: null });
        o.complete();
      });
    }),
  });
  for (const text of texts) {
    const query = apolloGql(text);
    const kind = query.definitions[0].operation;
    if (kind === 'query') {
      await client.query({ query, fetchPolicy: 'no-cache', errorPolicy: 'all' }).catch(() => {});
    } else if (kind === 'mutation') {
      await client.mutate({ mutation: query, errorPolicy: 'all' }).catch(() => {});
    } else {
      await new Promise((resolve) => {
        const s = client.subscribe({ query }).subscribe({ next: resolve, error: resolve, complete: resolve });
        setTimeout(() => {
          s.unsubscribe();
          resolve();
        }, 100);
      });
    }
  }
  client.stop();
  return sent;
}

/** requestTexts returns the texts graphql-request sends with POST and with GET. */
async function requestTexts(texts) {
  const sent = [];
  const fetch = async (url, init) => {
    sent.push(init.method === 'GET' ? new URL(url).searchParams.get('query') : JSON.parse(init.body).query);
    return new Response('{"data":{}}', { headers: { 'Content-Type': 'application/json' } });
  };
  for (const method of ['POST', 'GET']) {
    const client = new GraphQLClient('http://localhost/graphql', { method, fetch });
    for (const text of texts) {
      await client.request(text).catch(() => {});
    }
  }
  return sent;
}

/** urqlTexts returns the texts urql sends, with and without its __typename fields. */
function urqlTexts(texts) {
  return texts.flatMap((text) => {
    const doc = urqlGql(text);
    return [stringifyDocument(doc), stringifyDocument(formatDocument(doc))];
  });
}

const file = process.argv[2];
if (!file) {
  console.error('usage: node src/manifest.mjs FILE');
  process.exit(2);
}
const sources = Object.values(trusted);
const texts = new Set([...sources, ...urqlTexts(sources), ...(await apolloTexts(sources)), ...(await requestTexts(sources))]);
const manifest = {};
for (const text of texts) {
  manifest[createHash('sha256').update(text).digest('hex')] = text;
}
writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`${file}: ${Object.keys(manifest).length} documents (${sources.length} operations, as each client sends them)`);
