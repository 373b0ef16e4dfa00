// What every client of the matrix shares: the cases' bookkeeping, a fetch
// that records and checks every answer (and emulates a browser's HTTP
// cache for the ETag cases), tokens from the server's CLI and signed ones,
// the REST write that feeds the subscriptions, and the inbox of a
// subscription.
import { createHmac } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** env is the configuration of a run, from the environment ci.sh sets. */
export const env = {
  apiURL: need('API_URL'),
  server: need('SERVER'),
  databaseURL: need('DATABASE_URL'),
  jwtSecret: need('JWT_SECRET'),
  persistedOnly: process.env.PERSISTED_ONLY === 'true',
  configuratorID: '1',
};
export const graphqlURL = `${env.apiURL}/graphql`;
export const websocketURL = graphqlURL.replace(/^http/, 'ws');

function need(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set (ci.sh sets it)`);
    process.exit(2);
  }
  return value;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function check(ok, message) {
  if (!ok) {
    throw new Error(message);
  }
}

/**
 * NotApplicable is thrown by a case that the client has no way to do (a
 * WebSocket client has no HTTP caching); the table shows n/a.
 */
export class NotApplicable extends Error {}

// ---------------------------------------------------------------- cases

/**
 * current is the case running: what the recording fetch saw, the codes
 * the server answered, and the faults that fail it whatever the case
 * itself concludes (an unexpected Content-Type, an uncaught error, a
 * line printed on stderr).
 */
export let current = newCase('(start)', '(start)');

function newCase(client, name) {
  return { client, name, answers: [], codes: new Set(), messages: new Set(), faults: [], cleanups: [] };
}

/**
 * onCleanup registers fn (closing a client, ending a subscription) to run
 * when the current case ends, also when it times out; it returns fn made
 * safe to call twice.
 */
export function onCleanup(fn) {
  let done = false;
  const once = () => {
    if (!done) {
      done = true;
      fn();
    }
  };
  current.cleanups.push(once);
  return once;
}

/** results are the outcomes of every case, in order. */
export const results = [];

/**
 * runCase runs fn as case name of client, within ms. fn returns a short
 * note for the table's details, or throws. A quiet period after it
 * catches errors that the client raises late (on teardown, say).
 */
export async function runCase(client, name, fn, ms = 12_000) {
  current = newCase(client, name);
  const c = current;
  const started = Date.now();
  let status = 'pass';
  let note = '';
  let timer;
  try {
    note =
      (await Promise.race([
        fn(c),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no outcome within ${ms} ms`)), ms);
        }),
      ])) ?? '';
  } catch (err) {
    if (err instanceof NotApplicable) {
      status = 'n/a';
      note = err.message;
    } else {
      status = 'FAIL';
      note = describe(err).slice(0, 400);
    }
  } finally {
    clearTimeout(timer);
  }
  for (const cleanup of c.cleanups) {
    try {
      cleanup();
    } catch (err) {
      c.faults.push(`closing the client threw ${describe(err)}`);
    }
  }
  await sleep(150);
  if (c.faults.length > 0) {
    status = 'FAIL';
    note = [note, ...c.faults].filter(Boolean).join('; ');
  }
  results.push({ client, name, status, note, ms: Date.now() - started });
  current = newCase(client, '(between cases)');
}

/** describe is the message of err, with its cause. */
export function describe(err) {
  if (err instanceof Error) {
    const cause = err.cause !== undefined ? ` (cause: ${describe(err.cause)})` : '';
    return `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}${cause}`;
  }
  if (err && typeof err === 'object' && 'code' in err && 'reason' in err) {
    return `close ${err.code} ${err.reason}`;
  }
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}

/** fault fails the current case, or the run when no case runs. */
export function fault(message) {
  current.faults.push(message);
  if (current.name.startsWith('(')) {
    results.push({ client: current.client, name: current.name, status: 'FAIL', note: message, ms: 0 });
  }
}

// An uncaught error anywhere fails the case it happens in: a client that
// throws behind the application's back would end a Node process (or spam
// a browser's console) in a real front-end.
process.on('uncaughtException', (err) => fault(`uncaught exception: ${describe(err)}`));
process.on('unhandledRejection', (err) => fault(`unhandled rejection: ${describe(err)}`));
for (const level of ['error', 'warn']) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    fault(`printed on console.${level}: ${args.map((a) => (typeof a === 'string' ? a : describe(a))).join(' ').slice(0, 300)}`);
    original(...args);
  };
}

// ------------------------------------------------------------ recording fetch

const json = /^application\/(graphql-response\+)?json\b/;
const eventStream = /^text\/event-stream\b/;

/** kinds maps the operation names of documents.mjs to their kind. */
const kinds = {
  Viewer: 'query',
  Materials: 'query',
  Unlisted: 'query',
  Bad: 'query',
  CreateOrder: 'mutation',
  OrderEvents: 'subscription',
};

/** requestOf reads what a client's request asks for. */
function requestOf(input, init) {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const method = (init.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET')).toUpperCase();
  const headers = new Headers(init.headers ?? (typeof input === 'object' && 'headers' in input ? input.headers : undefined));
  let name;
  let query;
  let hash;
  if (method === 'GET') {
    const params = new URL(url).searchParams;
    name = params.get('operationName') ?? undefined;
    query = params.get('query') ?? undefined;
    try {
      hash = JSON.parse(params.get('extensions') ?? '{}')?.persistedQuery?.sha256Hash;
    } catch {}
  } else if (typeof init.body === 'string') {
    try {
      const body = JSON.parse(init.body);
      name = body.operationName ?? undefined;
      query = body.query ?? undefined;
      hash = body.extensions?.persistedQuery?.sha256Hash;
    } catch {}
  }
  name ??= /^\s*(?:query|mutation|subscription)\s+(\w+)/.exec(query ?? '')?.[1];
  return { url, method, headers, name, kind: kinds[name], query, hash };
}

/**
 * recordingFetch returns the fetch a client is given. It records every
 * answer in the current case, keeps the codes of error bodies, and
 * faults an answer whose Content-Type is not what the request asked for:
 * an event stream for a subscription, or for a request that accepts
 * nothing else; JSON for everything else, and for every error status. Every
 * error in a JSON body must carry extensions.code and requestId. With
 * etag, it behaves as a browser's HTTP cache does for an answer with
 * `Cache-Control: no-cache` and an ETag: it keeps the answer, revalidates
 * it with If-None-Match, and hands a 304's kept answer to the client as
 * the 200 it was.
 */
export function recordingFetch({ etag = false } = {}) {
  const kept = new Map();
  return async (input, init = {}) => {
    const req = requestOf(input, init);
    const c = current;
    const headers = new Headers(req.headers);
    const cached = etag && req.method === 'GET' ? kept.get(req.url) : undefined;
    if (cached) {
      headers.set('If-None-Match', cached.etag);
    }
    const res = await fetch(req.url, { ...init, method: req.method, headers });
    const type = res.headers.get('Content-Type') ?? '';
    const answer = {
      method: req.method,
      name: req.name ?? '?',
      byHash: req.hash !== undefined && req.query === undefined,
      accept: headers.get('Accept') ?? '',
      status: res.status,
      type,
      revalidated: cached !== undefined && res.status === 304,
    };
    c.answers.push(answer);
    const where = `${req.method} ${req.name ?? '?'} (Accept: ${answer.accept || 'none'})`;
    if (res.status === 304) {
      if (!cached) {
        c.faults.push(`${where}: 304 without If-None-Match`);
        return res;
      }
      return new Response(cached.body, { status: 200, headers: cached.headers });
    }
    const acceptsJSON = /application\/(graphql-response\+)?json/.test(answer.accept);
    const wantsStream = res.ok && (req.kind === 'subscription' || !acceptsJSON);
    if (wantsStream ? !eventStream.test(type) : !json.test(type)) {
      c.faults.push(`${where}: HTTP ${res.status} ${type || 'without Content-Type'}, want ${wantsStream ? 'text/event-stream' : 'JSON'}`);
    }
    if (json.test(type)) {
      const text = await res.clone().text();
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        c.faults.push(`${where}: HTTP ${res.status} ${type} body is not JSON: ${text.slice(0, 120)}`);
      }
      for (const e of body?.errors ?? []) {
        const code = e?.extensions?.code;
        c.messages.add(String(e?.message));
        if (code) {
          c.codes.add(code);
        }
        if (!code || !e?.extensions?.requestId) {
          c.faults.push(`${where}: HTTP ${res.status} error without extensions.code or requestId: ${JSON.stringify(e).slice(0, 160)}`);
        }
      }
      const tag = res.headers.get('ETag');
      if (etag && req.method === 'GET' && res.status === 200 && tag) {
        kept.set(req.url, { etag: tag, body: text, headers: new Headers(res.headers) });
      }
    }
    return res;
  };
}

/** revalidations counts the 304s of case c. */
export const revalidations = (c) => c.answers.filter((a) => a.revalidated).length;

/** textsSent counts case c's requests that sent a document's text instead of its hash alone. */
export const textsSent = (c) => c.answers.filter((a) => !a.byHash).length;

// ---------------------------------------------------------------- codes

/**
 * codesOf collects the codes an error carries, whatever the client made
 * of it: GraphQL errors' extensions.code (in errors, graphQLErrors, an
 * array), a WebSocket close code (a close event, or Apollo's "Socket
 * closed with event 4403"), an HTTP status (graphql-sse's NetworkError).
 */
export function codesOf(err, into = new Set()) {
  if (err === null || err === undefined) {
    return into;
  }
  if (Array.isArray(err)) {
    for (const e of err) {
      codesOf(e, into);
    }
    return into;
  }
  if (typeof err !== 'object') {
    return into;
  }
  if (typeof err.extensions?.code === 'string') {
    into.add(err.extensions.code);
  }
  if (typeof err.code === 'number') {
    into.add(`close ${err.code}`);
  }
  const closed = /Socket closed with event (\d+)/.exec(err.message ?? '');
  if (closed) {
    into.add(`close ${closed[1]}`);
  }
  for (const key of ['errors', 'graphQLErrors', 'networkError', 'cause', 'response']) {
    if (key in err && err[key] !== err) {
      codesOf(err[key], into);
    }
  }
  return into;
}

/**
 * expectRefused checks that a call failed with one of the codes wanted,
 * as the client reports it or as the server answered it, and returns the
 * codes seen.
 */
export async function expectRefused(c, call, wanted, what) {
  let err;
  let data;
  try {
    data = await call();
  } catch (e) {
    err = e;
  }
  check(err !== undefined, `${what}: the client reported no error, got ${JSON.stringify(data)?.slice(0, 160)}`);
  const seen = codesOf(err, new Set(c.codes));
  check(
    wanted.some((w) => seen.has(w)),
    `${what}: want ${wanted.join(' or ')}, got ${[...seen].join(', ') || 'no code'} (${describe(err).slice(0, 200)})`,
  );
  return [...seen].filter((s) => wanted.includes(s)).join(',');
}

// ---------------------------------------------------------------- tokens

/** mintToken creates an Open API token of configurator 1 with the server's CLI. */
export async function mintToken() {
  const { stdout, stderr } = await run(env.server, [
    'token',
    'create',
    '--configurator',
    env.configuratorID,
    '--database-url',
    env.databaseURL,
  ]);
  const id = /token (\d+)/.exec(stderr)?.[1];
  check(id, `token create: no record id in ${stderr}`);
  return { token: stdout.trim(), id };
}

/** revokeToken revokes token record id with the server's CLI. */
export async function revokeToken(id) {
  await run(env.server, ['token', 'revoke', id, '--database-url', env.databaseURL]);
}

const base64url = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** signToken signs claims as the server does (HS256), with secret. */
export function signToken(claims, secret = env.jwtSecret) {
  const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url(claims)}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

/**
 * expiredToken is a well-signed token of record id whose expiry passed an
 * hour ago (the CLI mints tokens without expiry; JWT_SECRET is the
 * server's key).
 */
export function expiredToken(id) {
  const now = Math.floor(Date.now() / 1000);
  return signToken({ kind: 'open_api', iss: 'configurator-catalogue', sub: id, iat: now - 7200, exp: now - 3600 });
}

/** forgedToken is a token of record id signed with another key. */
export function forgedToken(id) {
  return signToken({ kind: 'open_api', iss: 'configurator-catalogue', sub: id, iat: Math.floor(Date.now() / 1000) }, 'x'.repeat(40));
}

// ---------------------------------------------------------------- REST and orders

/** orderInput is a createOrder input of configurator 1. */
export function orderInput(price) {
  return {
    configuratorID: env.configuratorID,
    price,
    customerDetails: { name: 'Ada Lovelace', email: 'ada@example.com' },
    configuratorSummary: { Size: 'Grand' },
  };
}

/** restOrder creates an order with POST /api/open-api/v1/orders and returns its id. */
export async function restOrder(token, price = 99.5) {
  const form = new FormData();
  form.set('price', String(price));
  form.set('configurator_id', env.configuratorID);
  form.set('customer_details', JSON.stringify({ name: 'Grace Hopper', email: 'grace@example.com' }));
  form.set('configurator_summary', JSON.stringify({ Size: 'Grand' }));
  const res = await fetch(`${env.apiURL}/api/open-api/v1/orders`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
    body: form,
  });
  const text = await res.text();
  check(res.status === 201, `POST /orders: HTTP ${res.status} ${text.slice(0, 200)}`);
  const body = JSON.parse(text);
  const id = body.id ?? body.data?.id;
  check(id !== undefined, `POST /orders: no id in ${text.slice(0, 200)}`);
  return String(id);
}

// ---------------------------------------------------------------- subscriptions

/**
 * Inbox is what a subscription received: the order ids of its events,
 * the errors it was sent, and how it ended (error or complete).
 */
export class Inbox {
  orders = new Set();
  errors = [];
  ended = undefined;
  endedAt = 0;
  #wake = () => {};

  /** next takes a result ({data, errors}) of the subscription. */
  next(result) {
    const id = result?.data?.events?.order?.id;
    if (id !== undefined) {
      this.orders.add(String(id));
    }
    if (result?.errors?.length || result?.error) {
      this.errors.push(result.errors ?? result.error);
    }
    this.#wake();
  }

  error(err) {
    this.end({ error: err });
  }

  complete() {
    this.end({ complete: true });
  }

  end(how) {
    if (!this.ended) {
      this.ended = how;
      this.endedAt = Date.now();
    }
    this.#wake();
  }

  /** codes are the codes of every error received and of the end. */
  codes() {
    const into = new Set();
    codesOf(this.errors, into);
    codesOf(this.ended?.error, into);
    return into;
  }

  /** until waits at most ms for ok() to hold and returns whether it did. */
  async until(ok, ms) {
    const deadline = Date.now() + ms;
    while (!ok()) {
      const left = deadline - Date.now();
      if (left <= 0) {
        return false;
      }
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return true;
  }

  /** live fails when the subscription ended or received an error. */
  live(what) {
    check(!this.ended, `${what}: the subscription ended (${describe(this.ended?.error ?? 'complete')})`);
    check(this.errors.length === 0, `${what}: the subscription received ${describe(this.errors)}`);
  }
}

/**
 * feed makes orders over REST (with token) until one of them arrives in
 * inbox: the server does not acknowledge a subscription, so the first
 * write may come before it is registered. Returns the order id.
 */
export async function feed(inbox, token, what) {
  await sleep(300);
  for (let attempt = 1; attempt <= 4; attempt++) {
    inbox.live(what);
    const id = await restOrder(token);
    if (await inbox.until(() => inbox.orders.has(id) || inbox.ended, 2_000)) {
      inbox.live(what);
      return { id, attempt };
    }
  }
  throw new Error(`${what}: none of 4 orders made over REST arrived on the subscription`);
}

/**
 * revokedWhileSubscribed checks that a stream ends, with one of the codes
 * wanted, within 5 s of its token's revocation: open subscribes with the
 * token and returns its inbox and a stop function.
 */
export async function revokedWhileSubscribed(restToken, open, wanted) {
  const { token, id } = await mintToken();
  const { inbox, stop } = await open(token);
  try {
    await feed(inbox, restToken, 'before the revocation');
    await revokeToken(id);
    const revoked = Date.now();
    const ended = await inbox.until(() => inbox.ended, 6_000);
    const codes = inbox.codes();
    check(ended, `the stream did not end within 6 s of the revocation (codes received: ${[...codes].join(', ') || 'none'})`);
    const ms = inbox.endedAt - revoked;
    check(ms <= 5_000, `the stream ended ${ms} ms after the revocation, want at most 5 s`);
    check(
      wanted.some((w) => codes.has(w)),
      `the stream ended after ${ms} ms with ${[...codes].join(', ') || 'no code'} (${describe(inbox.ended.error ?? 'complete')}), want ${wanted.join(' or ')}`,
    );
    return `ended after ${ms} ms with ${[...codes].join(', ')}`;
  } finally {
    stop();
  }
}
