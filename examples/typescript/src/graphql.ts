// GraphQL over HTTP and over graphql-transport-ws, sending every document
// as a persisted document: its sha256 hash alone first, and the document
// with its hash only when the server answers PERSISTED_QUERY_NOT_FOUND
// (Automatic Persisted Queries). A server that preloaded the manifest
// (PERSISTED_DOCUMENTS) answers the hash alone and never sees a document.
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

import type { TypedDocumentString } from './generated/graphql/graphql';
import documents from './generated/graphql/persisted-documents.json' with { type: 'json' };

/** GraphQLError is an answer with errors, or no data. */
export class GraphQLError extends Error {
  constructor(
    readonly operation: string,
    readonly errors: readonly { message: string; extensions?: Record<string, unknown> }[],
  ) {
    const messages = errors.map((e) => `${e.message} (${String(e.extensions?.code ?? 'no code')})`);
    super(`${operation}: ${messages.join('; ')}`);
    this.name = 'GraphQLError';
  }

  /** code is the extensions.code of the first error. */
  get code(): unknown {
    return this.errors[0]?.extensions?.code;
  }
}

/**
 * persisted counts the operations sent, and those whose document the
 * server did not know by its hash and had to be sent (0 once the server
 * preloads the manifest).
 */
export const persisted = { operations: 0, registered: 0 };

const notFound = 'PERSISTED_QUERY_NOT_FOUND';

type Document<TResult, TVariables> = TypedDocumentString<TResult, TVariables>;

interface Payload {
  operationName: string;
  query?: string;
  variables: unknown;
  extensions: { persistedQuery: { version: 1; sha256Hash: string } };
}

// The manifest codegen wrote: the exact text of each document by its hash.
const manifest: Readonly<Record<string, string>> = documents;

/** payload is the request for document: its hash, and its text when withQuery. */
function payload<TResult, TVariables>(
  document: Document<TResult, TVariables>,
  variables: TVariables,
  withQuery: boolean,
): Payload {
  const hash: unknown = document.__meta__?.hash;
  const text = typeof hash === 'string' ? manifest[hash] : undefined;
  if (typeof hash !== 'string' || text === undefined) {
    throw new Error('a document is missing from the persisted-documents manifest: run `npm run codegen`');
  }
  const name = /^(?:query|mutation|subscription) (\w+)/.exec(text)?.[1];
  if (!name) {
    throw new Error(`the document ${hash} has no operation name`);
  }
  return {
    operationName: name,
    ...(withQuery ? { query: text } : {}),
    variables,
    extensions: { persistedQuery: { version: 1, sha256Hash: hash } },
  };
}

/** HTTPClient runs queries and mutations with POST /graphql. */
export class HTTPClient {
  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  /**
   * execute runs document and returns its data; it throws GraphQLError
   * when the answer has errors. headers are added to the request (an
   * Idempotency-Key, for instance): the retry with the document is the
   * same request to the server, so it gets the same key.
   */
  async execute<TResult, TVariables>(
    document: Document<TResult, TVariables>,
    variables: TVariables,
    headers: Record<string, string> = {},
  ): Promise<TResult> {
    persisted.operations++;
    try {
      return await this.post(document, variables, false, headers);
    } catch (err) {
      if (!(err instanceof GraphQLError && err.code === notFound)) {
        throw err;
      }
    }
    const data = await this.post(document, variables, true, headers);
    persisted.registered++;
    return data;
  }

  private async post<TResult, TVariables>(
    document: Document<TResult, TVariables>,
    variables: TVariables,
    withQuery: boolean,
    headers: Record<string, string>,
  ): Promise<TResult> {
    const body = payload(document, variables, withQuery);
    const res = await fetch(this.url, {
      method: 'POST',
      headers: {
        ...headers,
        Accept: 'application/graphql-response+json, application/json;q=0.9',
        Authorization: `Bearer ${this.token}`,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify(body),
    });
    const type = res.headers.get('Content-Type') ?? '';
    if (!/^application\/(graphql-response\+)?json\b/.test(type)) {
      throw new Error(`${body.operationName}: HTTP ${res.status} ${type}: ${await res.text()}`);
    }
    const result = (await res.json()) as { data?: TResult | null; errors?: GraphQLError['errors'] };
    if (result.errors?.length) {
      throw new GraphQLError(body.operationName, result.errors);
    }
    if (result.data == null) {
      throw new GraphQLError(body.operationName, [{ message: `HTTP ${res.status} without data` }]);
    }
    return result.data;
  }
}

/**
 * socketClient connects to the graphql-transport-ws endpoint; the token
 * travels in connection_init, as a browser (which cannot set headers on a
 * WebSocket) sends it.
 */
export function socketClient(url: string, token: string): Client {
  return createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
}

/** Sink receives a subscription's data until it ends. */
export interface Sink<T> {
  next(data: T): void;
  error(err: unknown): void;
  complete(): void;
}

/**
 * subscribe starts document over client and hands its data to sink; it
 * returns the function that ends the subscription. A hash the server does
 * not know is sent again with its document.
 */
export function subscribe<TResult, TVariables>(
  client: Client,
  document: Document<TResult, TVariables>,
  variables: TVariables,
  sink: Sink<TResult>,
): () => void {
  persisted.operations++;
  let dispose = start(false);
  function start(withQuery: boolean): () => void {
    const body = payload(document, variables, withQuery);
    // Set when the server did not know the hash: this attempt's end is
    // the start of the next one, with the document.
    let retried = false;
    const retry = (errors: GraphQLError['errors'] | undefined): boolean => {
      if (withQuery || errors?.[0]?.extensions?.code !== notFound) {
        return false;
      }
      retried = true;
      persisted.registered++;
      dispose = start(true);
      return true;
    };
    // graphql-transport-ws requires a query string: an empty one with the
    // hash asks the server for the persisted document. The server answers
    // an unknown hash with a next message carrying the error, then
    // complete; a protocol-level error message would carry it too.
    return client.subscribe<TResult>(
      { ...body, query: body.query ?? '', variables: body.variables as Record<string, unknown> },
      {
        next(result) {
          if (retried) {
            return;
          }
          if (result.errors?.length) {
            if (!retry(result.errors)) {
              sink.error(new GraphQLError(body.operationName, result.errors));
            }
          } else if (result.data != null) {
            sink.next(result.data);
          }
        },
        error(err) {
          const errors = Array.isArray(err) ? (err as GraphQLError['errors']) : undefined;
          if (!retried && !retry(errors)) {
            sink.error(errors ? new GraphQLError(body.operationName, errors) : err);
          }
        },
        complete() {
          if (!retried) {
            sink.complete();
          }
        },
      },
    );
  }
  return () => dispose();
}
