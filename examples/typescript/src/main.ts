// Lists materials over REST, walks the home configurator's options and
// variations over GraphQL, subscribes to order.created, creates an order
// and waits for it to arrive on the subscription. Every step checks what
// it got; the process exits 1 on the first surprise.
import { randomUUID } from 'node:crypto';

import { apiURL, requireEnv, tokenHint } from './env';
import type { OrderEventsSubscription } from './generated/graphql/graphql';
import { HTTPClient, persisted, socketClient, subscribe, type Sink } from './graphql';
import { CreateOrderMutation, OptionsQuery, OrderEventsSubscription as OrderEvents, ViewerQuery } from './operations';
import { restClient } from './rest';

/** How long the order may take to arrive on the subscription. */
const arrivalTimeout = 5_000;

/**
 * settle is how long the subscription is given to start before the order
 * is made. Neither graphql-transport-ws nor GraphQL over SSE acknowledges
 * a subscription, and the server registers it just after it reads the
 * request; the server's own tests wait 100 ms.
 */
const settle = 300;

function check(ok: unknown, message: string): asserts ok {
  if (!ok) {
    throw new Error(message);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Event = OrderEventsSubscription['events'];

/**
 * Inbox keeps the order events of a subscription by order id, so that an
 * event that comes before the mutation's answer is not missed.
 */
class Inbox implements Sink<OrderEventsSubscription> {
  private readonly events = new Map<string, Event>();
  private failure: unknown;
  private wake = () => {};

  next({ events }: OrderEventsSubscription): void {
    if (events.order) {
      this.events.set(events.order.id, events);
      this.wake();
    }
  }

  error(err: unknown): void {
    this.failure ??= err;
    this.wake();
  }

  complete(): void {
    this.error(new Error('the server ended the subscription'));
  }

  /** check throws the subscription's failure, if it failed. */
  check(): void {
    if (this.failure !== undefined) {
      throw new Error(`subscription: ${this.failure instanceof Error ? this.failure.message : String(this.failure)}`);
    }
  }

  /** order returns the event of order id once it arrives, and throws after ms. */
  async order(id: string, ms: number): Promise<Event> {
    const deadline = Date.now() + ms;
    for (;;) {
      this.check();
      const event = this.events.get(id);
      if (event) {
        return event;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`order #${id} did not arrive on the subscription within ${ms} ms`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}

async function main(): Promise<void> {
  const token = requireEnv('TOKEN', tokenHint.openAPI);
  const rest = restClient(apiURL, token);
  const gql = new HTTPClient(`${apiURL}/graphql`, token);

  // REST: the first materials by name, with the total in X-Total-Count.
  const materials = await rest.GET('/materials', {
    params: { query: { per_page: 5, order_by: 'name', order: 'asc' } },
  });
  check(materials.data, `GET /materials: HTTP ${materials.response.status} ${JSON.stringify(materials.error)}`);
  const total = Number(materials.response.headers.get('X-Total-Count') ?? Number.NaN);
  check(materials.data.length > 0, 'GET /materials: no material');
  check(
    Number.isInteger(total) && total >= materials.data.length,
    `GET /materials: X-Total-Count ${total} with ${materials.data.length} listed`,
  );
  console.log(`REST: ${total} materials; the first ${materials.data.length} by name:`);
  for (const m of materials.data) {
    console.log(`  #${m.id} ${m.name}`);
  }

  // GraphQL: the token's home configurator, its options and variations.
  const { viewer } = await gql.execute(ViewerQuery, {});
  check(viewer.configurator, `viewer: a ${viewer.tokenKind} token without a home configurator; use an Open API token`);
  const configurator = viewer.configurator;
  const { configuratorOptions } = await gql.execute(OptionsQuery, { configuratorID: configurator.id });
  const options = (configuratorOptions.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  check(options.length > 0, `configurator ${configurator.id}: no option`);
  check(
    options.length === configuratorOptions.totalCount,
    `configurator ${configurator.id}: ${options.length} options of ${configuratorOptions.totalCount}`,
  );
  console.log(`GraphQL: configurator #${configurator.id} ${configurator.name}, ${options.length} options:`);
  const summary: Record<string, string> = {};
  for (const option of options) {
    const variations = option.variations ?? [];
    const chosen = variations.find((v) => v.selected) ?? variations[0];
    const names = variations.map((v) => (v === chosen ? `[${v.name}]` : v.name));
    console.log(`  ${option.title} (${option.type}): ${names.join(', ') || 'no variation'}`);
    if (chosen) {
      summary[option.title] = chosen.name;
    }
  }
  check(Object.keys(summary).length > 0, `configurator ${configurator.id}: no option has a variation`);

  // Subscribe to order.created, then make an order and wait for it.
  const ws = socketClient(`${apiURL}/graphql`, token);
  const inbox = new Inbox();
  const unsubscribe = subscribe(ws, OrderEvents, { types: ['order.created'] }, inbox);
  try {
    await sleep(settle);
    inbox.check();

    const price = 249.9;
    const { createOrder: order } = await gql.execute(
      CreateOrderMutation,
      {
        input: {
          configuratorID: configurator.id,
          price,
          customerDetails: { name: 'Ada Lovelace', email: 'ada@example.com' },
          configuratorSummary: summary,
        },
      },
      // Safe to retry: the same key gets the same order, never a second one.
      { 'Idempotency-Key': randomUUID() },
    );
    check(
      order.price === price && order.configurator.id === configurator.id,
      `createOrder answered ${JSON.stringify(order)}`,
    );
    console.log(`GraphQL: created order #${order.id} (${order.status}, ${order.price}) at ${order.createdAt}`);

    // REST reads the same order back.
    const back = await rest.GET('/orders/{id}', { params: { path: { id: Number(order.id) } } });
    check(back.data, `GET /orders/${order.id}: HTTP ${back.response.status} ${JSON.stringify(back.error)}`);
    check(back.data.price === price, `GET /orders/${order.id}: price ${back.data.price}; want ${price}`);

    const event = await inbox.order(order.id, arrivalTimeout);
    check(
      event.type === 'order.created' && event.order?.price === price,
      `order #${order.id} arrived as ${JSON.stringify(event)}`,
    );
    console.log(`subscription: ${event.type} of order #${order.id} arrived (event ${event.id} at ${event.timestamp})`);
  } finally {
    unsubscribe();
    await ws.dispose();
  }
  const { operations, registered } = persisted;
  console.log(`persisted documents: ${operations} operations sent by hash, ${registered} registered by the APQ retry`);
  // EXPECT_TRUSTED=1 (ci.sh sets it, the server having loaded the
  // manifest): every document was known by its hash, none was resent.
  if (process.env.EXPECT_TRUSTED === '1') {
    check(registered === 0, `${registered} documents were resent; the server should know every hash of the manifest`);
  }
}

main().catch((err: unknown) => {
  // fetch's own message ("fetch failed") names its cause separately.
  const cause = err instanceof Error && err.cause !== undefined ? `: ${String(err.cause)}` : '';
  console.error(err instanceof Error ? `${err.message}${cause}` : err);
  process.exit(1);
});
