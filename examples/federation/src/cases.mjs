// The client matrix's gateway cases (examples/federation/ci.sh): Apollo
// Client 4 against Hive Gateway over this service and the reviews
// subgraph. Prints a pass/fail table and exits 1 when a case fails.
//
// Environment: GATEWAY_URL (the gateway's /graphql), API_URL (this
// service, for the direct answers the cases compare with), TOKEN1 and
// TOKEN2 (Open API tokens of configurator 1, owner 1, and configurator 3,
// owner 2, of the demo data).
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { createClient as wsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { rating, review } from './reviews.mjs';

const { GATEWAY_URL, API_URL, TOKEN1, TOKEN2 } = process.env;
if (!GATEWAY_URL || !API_URL || !TOKEN1 || !TOKEN2) {
  console.log('GATEWAY_URL, API_URL, TOKEN1 and TOKEN2 must be set (ci.sh sets them)');
  process.exit(2);
}

/** client is Apollo Client 4 on the gateway (or on uri), as a front-end configures it. */
function client(token, headers = {}, uri = GATEWAY_URL) {
  return new ApolloClient({
    cache: new InMemoryCache(),
    link: new HttpLink({ uri, headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers } }),
    incrementalHandler: new Defer20220824Handler(),
    defaultOptions: { query: { fetchPolicy: 'no-cache', errorPolicy: 'all' } },
  });
}

/**
 * subscriber is Apollo Client 4 on the gateway's WebSocket
 * (graphql-transport-ws), with the token in connection_init as a browser
 * sends it; it returns the client and a function that closes it.
 */
function subscriber(token) {
  const ws = wsClient({
    url: GATEWAY_URL.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  return { client: new ApolloClient({ cache: new InMemoryCache(), link: new GraphQLWsLink(ws) }), close: () => ws.dispose() };
}

/**
 * Inbox holds the orders a subscription received, and how it ended;
 * until waits for a condition on it (or its end) without a fixed sleep.
 */
class Inbox {
  orders = [];
  errors = [];
  ended = undefined;
  #waiters = [];

  next(r) {
    const o = r.data?.events?.order;
    if (o) this.orders.push(o);
    if (r.error || r.errors?.length) this.errors.push(r.error ?? r.errors);
    this.#wake();
  }

  end(how) {
    this.ended ??= how;
    this.#wake();
  }

  #wake() {
    for (const w of this.#waiters.splice(0)) w();
  }

  has(id) {
    return this.orders.some((o) => o.id === id);
  }

  /** until resolves whether ok() held within ms (false when the subscription ended first). */
  async until(ok, ms) {
    const deadline = Date.now() + ms;
    while (!ok()) {
      if (this.ended || Date.now() >= deadline) return false;
      await new Promise((resolve) => {
        const t = setTimeout(resolve, deadline - Date.now());
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return true;
  }
}

/** createOrder creates an order of the token's configurator through the gateway and returns its id. */
async function createOrder(token, configuratorID) {
  const r = await client(token).mutate({
    mutation: gql`mutation CreateOrder($input: CreateOrderInput!) { createOrder(input: $input) { id } }`,
    variables: { input: { configuratorID, price: 42.5, customerDetails: { name: 'Ada' }, configuratorSummary: { Size: 'Grand' } } },
  });
  check(!r.error, `createOrder: ${r.error?.message}`);
  return r.data.createOrder.id;
}

/**
 * feed creates orders with token until inbox receives one (the service
 * does not acknowledge a subscription, so the first write may come before
 * the gateway's stream to it is open) and returns its id.
 */
async function feed(inbox, token, configuratorID, what) {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const id = await createOrder(token, configuratorID);
    if (await inbox.until(() => inbox.has(id), 3000)) return id;
    check(!inbox.ended, `${what}: the subscription ended: ${JSON.stringify(inbox.ended)}`);
  }
  throw new Error(`${what}: none of 5 orders reached the subscription (errors ${JSON.stringify(inbox.errors)})`);
}

/** direct posts a query to this service itself. */
async function direct(token, query) {
  const res = await fetch(`${API_URL}/graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ query }),
  });
  return res.json();
}

function check(cond, message) {
  if (!cond) throw new Error(message);
}

const errorsOf = (r) => r.error?.errors ?? r.errors ?? [];

const cases = {
  async 'fields of both subgraphs in one operation'() {
    const r = await client(TOKEN1).query({
      query: gql`query Both { ordersPage(perPage: 3) { data { id price review { stars } } }
        materialsPage(perPage: 2) { data { id name rating } } }`,
    });
    check(!r.error, `errors: ${r.error?.message}`);
    const orders = r.data.ordersPage.data;
    check(orders.length === 3, `${orders.length} orders`);
    for (const o of orders) check(o.review?.stars === review(o.id).stars, `order ${o.id}: review ${JSON.stringify(o.review)}`);
    for (const m of r.data.materialsPage.data) check(m.rating === rating(m.id), `material ${m.id}: rating ${m.rating}`);
  },

  async 'the Authorization header reaches this service: each owner its own orders'() {
    for (const token of [TOKEN1, TOKEN2]) {
      const q = '{ ordersPage(perPage: 1) { pagination { total } } viewer { ownerID } }';
      const want = (await direct(token, q)).data;
      const r = await client(token).query({ query: gql(q) });
      check(!r.error, `errors: ${r.error?.message}`);
      // Apollo Client adds __typename to every selection.
      const got = JSON.stringify(r.data, (k, v) => (k === '__typename' ? undefined : v));
      check(got === JSON.stringify(want), `through the gateway ${got}, directly ${JSON.stringify(want)}`);
    }
  },

  async 'tenancy holds through the gateway: another owner\'s configurator is null with NOT_FOUND'() {
    const q = gql`query Top($ids: [ID!]!) { topReviews(configuratorIDs: $ids) { stars configurator { id name } } }`;
    for (const [token, mine, theirs] of [[TOKEN1, 0, 1], [TOKEN2, 1, 0]]) {
      const r = await client(token).query({ query: q, variables: { ids: ['1', '3'] } });
      const reviews = r.data?.topReviews ?? [];
      check(reviews[mine]?.configurator?.name, `own configurator: ${JSON.stringify(reviews[mine])}`);
      check(reviews[theirs] && reviews[theirs].configurator === null, `other owner's configurator: ${JSON.stringify(reviews[theirs])}`);
      const codes = errorsOf(r).map((e) => e.extensions?.code);
      check(codes.includes('NOT_FOUND'), `error codes ${JSON.stringify(codes)}; want NOT_FOUND`);
    }
  },

  async 'error codes and requestId survive the gateway'() {
    const id = 'fed-case-0123456789';
    const r = await client(TOKEN1, { 'X-Request-Id': id }).query({ query: gql`{ order(id: "999999") { id } }` });
    const e = errorsOf(r)[0];
    check(e?.extensions?.code === 'NOT_FOUND', `error ${JSON.stringify(e)}; want NOT_FOUND`);
    check(e?.extensions?.requestId === id, `requestId ${e?.extensions?.requestId}; want ${id}`);
  },

  async 'a request without a token is refused by this service, UNAUTHENTICATED'() {
    const r = await client(undefined).query({ query: gql`{ ordersPage(perPage: 1) { pagination { total } } }` });
    const codes = errorsOf(r).map((e) => e.extensions?.code);
    check(codes.includes('UNAUTHENTICATED'), `codes ${JSON.stringify(codes)}; want UNAUTHENTICATED`);
  },

  async 'a subscription through the gateway: each owner receives its own writes, with fields of both subgraphs'() {
    const q = gql`subscription OrderEvents { events(types: ["order.created"]) { type order { id price review { stars } } } }`;
    const subs = [];
    try {
      const [a, b] = [TOKEN1, TOKEN2].map((token) => {
        const s = subscriber(token);
        subs.push(s);
        const inbox = new Inbox();
        s.client.subscribe({ query: q }).subscribe({ next: (r) => inbox.next(r), error: (e) => inbox.end({ error: String(e) }), complete: () => inbox.end({ complete: true }) });
        return inbox;
      });
      // Each write after the other has been received: had the other
      // owner's event reached a subscriber, it would have come before
      // that subscriber's own later one (events are delivered in order).
      const x = await feed(a, TOKEN1, '1', 'owner 1');
      const y = await feed(b, TOKEN2, '3', 'owner 2');
      const z = await feed(a, TOKEN1, '1', 'owner 1 again');
      check(!a.has(y), `owner 1 received owner 2's order ${y}: ${JSON.stringify(a.orders)}`);
      check(!b.has(x) && !b.has(z), `owner 2 received owner 1's order: ${JSON.stringify(b.orders)}`);
      for (const inbox of [a, b]) {
        check(inbox.errors.length === 0, `errors on the subscription: ${JSON.stringify(inbox.errors)}`);
        for (const o of inbox.orders) check(o.review?.stars === review(o.id).stars, `order ${o.id}: review ${JSON.stringify(o.review)} (the reviews subgraph)`);
      }
    } finally {
      for (const s of subs) s.close();
    }
  },

  async '@defer sent to this service directly: one complete result, the deferred orders in it'() {
    const q = gql`query Deferred { viewer { configurator { id name
      ... @defer(label: "orders") { orders(first: 3) { totalCount edges { node { id } } } } } } }`;
    const seen = [];
    await new Promise((resolve, reject) => {
      client(TOKEN1, {}, `${API_URL}/graphql`).watchQuery({ query: q, fetchPolicy: 'no-cache' }).subscribe({
        next: (r) => {
          seen.push(r);
          if (r.dataState === 'complete' || r.error) resolve();
        },
        error: reject,
      });
      setTimeout(() => reject(new Error(`no complete result: ${JSON.stringify(seen)}`)), 20000);
    });
    const results = seen.filter((r) => r.data?.viewer);
    check(results.length === 1 && !results[0].error, `results ${JSON.stringify(seen)}; want one, complete`);
    const orders = results[0].data.viewer.configurator.orders;
    check(orders?.totalCount > 0 && orders.edges.length === Math.min(3, orders.totalCount), `orders ${JSON.stringify(orders)}`);
  },

  async '@defer: the configurator first, its orders page deferred'() {
    const q = gql`query Deferred { viewer { configurator { id name
      ... @defer(label: "orders") { orders(first: 3) { totalCount edges { node { id review { stars } } } } } } } }`;
    const seen = await new Promise((resolve, reject) => {
      const results = [];
      client(TOKEN1).watchQuery({ query: q, fetchPolicy: 'no-cache' }).subscribe({
        next: (r) => {
          results.push(r);
          if (r.dataState === 'complete') resolve(results);
        },
        error: reject,
      });
      setTimeout(() => reject(new Error(`no complete result: ${JSON.stringify(results)}`)), 20000);
    });
    const first = seen.find((r) => r.data?.viewer?.configurator);
    const last = seen.at(-1);
    check(first && first.data.viewer.configurator.orders === undefined, `first result ${JSON.stringify(first?.data)}; want the configurator without its orders`);
    const orders = last.data.viewer.configurator.orders;
    check(orders?.edges?.length > 0, `last result ${JSON.stringify(last.data)}`);
    for (const { node } of orders.edges) check(node.review?.stars === review(node.id).stars, `order ${node.id}: ${JSON.stringify(node.review)}`);
  },
};

let failed = 0;
const rows = [];
// ONLY (a regular expression), when set, runs the cases whose names match.
const only = process.env.ONLY ? new RegExp(process.env.ONLY) : undefined;
for (const [name, run] of Object.entries(cases)) {
  if (only && !only.test(name)) continue;
  try {
    await run();
    rows.push(['pass', name, '']);
  } catch (err) {
    failed++;
    rows.push(['FAIL', name, String(err?.message ?? err).slice(0, 300)]);
  }
}
console.log('\nApollo Client 4 through Hive Gateway:');
for (const [status, name, why] of rows) console.log(`  ${status}  ${name}${why ? `\n        ${why}` : ''}`);
process.exit(failed ? 1 : 0);
