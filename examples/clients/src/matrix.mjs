// The client matrix: every client of clients.mjs runs every case against
// the live server ci.sh started; prints a pass/fail table and exits 1 when
// a case fails. PERSISTED_ONLY=true says the server runs only the
// manifest's documents (manifest.mjs): Apollo Client and urql then send
// hashes, the others the manifest's texts, and free-form documents are
// refused.
//
// Environment: API_URL, SERVER (the binary, for `token create|revoke`),
// DATABASE_URL, JWT_SECRET (the server's, to sign an expired token), TOKEN
// (an Open API token of configurator 1, for the REST writes),
// PERSISTED_ONLY, CLIENTS (a comma-separated subset, to debug one).
import { clients } from './clients.mjs';
import { bad, createOrder, materials, orderEvents, unlisted, viewer } from './documents.mjs';
import {
  NotApplicable,
  check,
  env,
  expectRefused,
  expiredToken,
  feed,
  forgedToken,
  mintToken,
  orderInput,
  results,
  revalidations,
  revokedWhileSubscribed,
  runCase,
  textsSent,
} from './harness.mjs';

const restToken = process.env.TOKEN;
if (!restToken) {
  console.log('TOKEN is not set (ci.sh sets it)');
  process.exit(2);
}
const only = process.env.CLIENTS?.split(',').filter(Boolean);
const mode = env.persistedOnly ? 'PERSISTED_ONLY=true' : 'default (free-form documents)';
const orderTypes = { types: ['order.created'] };

/** refusedToken: what a refused token gets, on HTTP and on WebSocket. */
const refusedToken = { http: ['UNAUTHENTICATED'], websocket: ['close 4403'] };

/**
 * unlistedRefused: what a document outside the manifest gets under
 * PERSISTED_ONLY: its text is refused, and its hash alone is not found
 * (urql's persisted exchange then gives up: it resends the text only after
 * the message PersistedQueryNotFound).
 */
const unlistedRefused = ['PERSISTED_QUERY_ONLY', 'PERSISTED_QUERY_NOT_FOUND'];

/** sseRevoked: the codes that may end a Server-Sent Events stream whose token was revoked. */
const sseRevoked = ['UNAUTHENTICATED', 'FORBIDDEN', 'TOKEN_REVOKED'];

/**
 * withSession runs fn with a session of client for token, and closes it.
 */
async function withSession(client, token, options, fn) {
  const s = client.session(token, options);
  try {
    return await fn(s);
  } finally {
    s.close();
  }
}

/**
 * tokenRefused checks that a query with token is refused, and for a
 * client with subscriptions that a subscription with it ends refused
 * within 5 s too.
 */
async function tokenRefused(c, client, token, { websocket, http }) {
  const transport = client.name === 'graphql-ws' ? 'websocket' : client.name === 'graphql-sse' ? 'sse' : 'http';
  return withSession(client, token, {}, async (s) => {
    const notes = [];
    const want = transport === 'websocket' ? websocket : http;
    notes.push(`query: ${await expectRefused(c, () => s.query(viewer, {}), want, 'query')}`);
    if (client.subscriptions) {
      const { inbox, stop } = s.subscribe(orderEvents, orderTypes);
      try {
        const ended = await inbox.until(() => inbox.ended, 5_000);
        const codes = new Set([...c.codes, ...inbox.codes()]);
        check(ended, `subscription: not refused within 5 s (codes: ${[...codes].join(', ') || 'none'})`);
        const wanted = client.subscriptions === 'websocket' ? websocket : http;
        check(
          wanted.some((w) => codes.has(w)),
          `subscription: want ${wanted.join(' or ')}, got ${[...codes].join(', ') || 'no code'}`,
        );
        notes.push(`subscription: ${wanted.filter((w) => codes.has(w)).join(',')}`);
      } finally {
        stop();
      }
    }
    return notes.join('; ');
  });
}

/** cases are the matrix's rows: name and what a client does. */
const cases = [
  [
    'queries',
    async (c, client) =>
      withSession(client, restToken, {}, async (s) => {
        const v = await s.query(viewer, {});
        check(
          v?.viewer?.tokenKind === 'open_api' && v.viewer.configurator?.id === env.configuratorID,
          `Viewer answered ${JSON.stringify(v)}`,
        );
        const m = await s.query(materials, { first: 3 });
        check(m?.materials?.edges?.length === 3 && m.materials.totalCount >= 3, `Materials answered ${JSON.stringify(m)}`);
        if (env.persistedOnly && client.persisted) {
          check(textsSent(c) === 0, `${textsSent(c)} requests sent a document's text: the manifest lacks this client's text`);
          return 'by hash';
        }
        return '';
      }),
  ],
  [
    'mutation',
    async (c, client) =>
      withSession(client, restToken, {}, async (s) => {
        const d = await s.mutate(createOrder, { input: orderInput(149.5) });
        check(d?.createOrder?.id && d.createOrder.price === 149.5, `createOrder answered ${JSON.stringify(d)}`);
        return `order #${d.createOrder.id}`;
      }),
  ],
  [
    'subscription + REST write',
    async (c, client) => {
      if (!client.subscriptions) {
        throw new NotApplicable('no subscriptions');
      }
      return withSession(client, restToken, {}, async (s) => {
        const { inbox, stop } = s.subscribe(orderEvents, orderTypes);
        try {
          const { id, attempt } = await feed(inbox, restToken, 'subscription');
          return `order #${id} arrived over ${client.subscriptions}${attempt > 1 ? ` (write ${attempt})` : ''}`;
        } finally {
          stop();
        }
      });
    },
  ],
  [
    'GET + ETag revalidation',
    async (c, client) => {
      if (!client.etag) {
        throw new NotApplicable('no HTTP GET');
      }
      return withSession(client, restToken, { etag: true }, async (s) => {
        const first = await s.query(materials, { first: 3 });
        const second = await s.query(materials, { first: 3 });
        const gets = c.answers.filter((a) => a.name === 'Materials');
        check(
          gets.length >= 2 && gets.every((a) => a.method === 'GET'),
          `want two GETs, sent ${gets.map((a) => a.method).join(', ')}`,
        );
        check(revalidations(c) >= 1, `no 304: answers ${gets.map((a) => a.status).join(', ')}`);
        check(JSON.stringify(first) === JSON.stringify(second), 'the revalidated answer differs from the first');
        return `${gets.map((a) => a.status).join(', ')}`;
      });
    },
  ],
  [
    'bad query',
    async (c, client) =>
      withSession(client, restToken, {}, (s) =>
        expectRefused(c, () => s.query(bad, {}), env.persistedOnly ? unlistedRefused : ['GRAPHQL_VALIDATION_FAILED'], 'Bad'),
      ),
  ],
  [
    'unlisted query',
    async (c, client) =>
      withSession(client, restToken, {}, async (s) => {
        if (env.persistedOnly) {
          return expectRefused(c, () => s.query(unlisted, {}), unlistedRefused, 'Unlisted');
        }
        const d = await s.query(unlisted, {});
        check(d?.viewer?.ownerID, `Unlisted answered ${JSON.stringify(d)}`);
        return 'runs (free-form)';
      }),
  ],
  [
    'no token',
    async (c, client) => tokenRefused(c, client, undefined, { http: ['UNAUTHENTICATED'], websocket: ['close 4403', 'UNAUTHENTICATED'] }),
  ],
  ['bad token', async (c, client) => tokenRefused(c, client, forgedToken('1'), refusedToken)],
  [
    'expired token',
    async (c, client) => {
      const { id } = await mintToken();
      const note = await tokenRefused(c, client, expiredToken(id), refusedToken);
      // Over HTTP the answer says why, so that a client fetches a new token.
      if (client.name !== 'graphql-ws') {
        check(c.messages.has('token expired'), `no "token expired" in ${[...c.messages].join('; ')}`);
      }
      return note;
    },
  ],
  [
    'token revoked while subscribed',
    async (c, client) => {
      if (!client.subscriptions) {
        throw new NotApplicable('no subscriptions');
      }
      const wanted = client.subscriptions === 'websocket' ? ['close 4403'] : sseRevoked;
      let session;
      try {
        return await revokedWhileSubscribed(
          restToken,
          async (token) => {
            session = client.session(token);
            return session.subscribe(orderEvents, orderTypes);
          },
          wanted,
        );
      } finally {
        session?.close();
      }
    },
  ],
  [
    'subscription over plain POST',
    async (c, client) => {
      if (!client.plainPost) {
        throw new NotApplicable('subscribes over a stream');
      }
      return withSession(client, restToken, {}, async (s) => {
        const started = Date.now();
        const codes = await expectRefused(c, () => s.mutate(orderEvents, orderTypes), ['SUBSCRIPTION_NEEDS_STREAM'], 'OrderEvents');
        const ms = Date.now() - started;
        check(ms < 1_000, `refused after ${ms} ms, want under 1 s`);
        return `${codes} in ${ms} ms`;
      });
    },
  ],
];

const started = Date.now();
for (const client of clients) {
  if (only && !only.includes(client.name)) {
    continue;
  }
  for (const [name, fn] of cases) {
    await runCase(client.name, name, (c) => fn(c, client));
  }
}

// The table: a row per case, a column per client.
const names = [...new Set(results.map((r) => r.client))];
const rows = [...new Set(results.map((r) => r.name))];
const cell = (client, row) => results.find((r) => r.client === client && r.name === row)?.status ?? '';
const width = Math.max(...rows.map((r) => r.length));
const widths = names.map((n) => Math.max(n.length, 4));
const line = (first, cells) => `${first.padEnd(width)} | ${cells.map((x, i) => x.padEnd(widths[i])).join(' | ')}`;
console.log(`\nclient matrix, ${mode}, ${env.apiURL}\n`);
console.log(line('case', names));
console.log(`${'-'.repeat(width)}-|-${widths.map((w) => '-'.repeat(w)).join('-|-')}`);
for (const row of rows) {
  console.log(line(row, names.map((n) => cell(n, row))));
}
const failed = results.filter((r) => r.status === 'FAIL');
const passed = results.filter((r) => r.status === 'pass');
console.log(`\n${passed.length} passed, ${failed.length} failed, ${results.length - passed.length - failed.length} n/a, in ${((Date.now() - started) / 1000).toFixed(1)} s (${mode})`);
for (const r of results) {
  if (r.note || r.status === 'FAIL') {
    console.log(`  ${r.status === 'FAIL' ? 'FAIL' : r.status.padEnd(4)} ${r.client} / ${r.name}: ${r.note}`);
  }
}
process.exit(failed.length > 0 ? 1 : 0);
