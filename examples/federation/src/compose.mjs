// The composition check (examples/federation/ci.sh): composes this
// service's subgraph SDL with the reviews subgraph (reviews.mjs) with
// @apollo/composition, the library rover and the gateways compose with,
// and fails on any composition error. Both SDLs of this service are
// checked: the one the running server answers (_service { sdl }, with
// TOKEN) and the checked-in one (graph/subgraph.graphql, which go generate
// writes from schema.graphql and graph/ent.graphql), which must also be the
// same text. Then it proves
// that the check can fail: with the @key of an entity the reviews
// subgraph uses (Order, Material, Configurator), or its id field, removed
// from the checked-in schema, composition must fail. Last, a second
// Relay-style subgraph (src/accounts.graphql) with its own Node, PageInfo
// and node(id:) composes with both (docs/federation.md, "Node and node in
// a supergraph").
//
// Usage: node src/compose.mjs SUPERGRAPH_FILE (API_URL, TOKEN,
// REVIEWS_URL in the environment). Exits 1 on a failed check.
import { readFileSync, writeFileSync } from 'node:fs';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { typeDefs as reviewsSDL } from './reviews.mjs';

const root = new URL('../../../', import.meta.url);
const [out] = process.argv.slice(2);
const { API_URL, TOKEN, REVIEWS_URL } = process.env;
if (!out || !API_URL || !TOKEN || !REVIEWS_URL) {
  console.log('usage: API_URL=... TOKEN=... REVIEWS_URL=... node src/compose.mjs SUPERGRAPH_FILE');
  process.exit(2);
}

/** compose composes the catalogue's sdl with the reviews subgraph. */
function compose(sdl) {
  return composeServices([
    { name: 'catalogue', url: `${API_URL}/graphql`, typeDefs: parse(sdl) },
    { name: 'reviews', url: REVIEWS_URL, typeDefs: parse(reviewsSDL) },
  ]);
}

const res = await fetch(`${API_URL}/graphql`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
  body: JSON.stringify({ query: '{ _service { sdl } }' }),
});
const served = (await res.json())?.data?._service?.sdl;
const checkedIn = readFileSync(new URL('graph/subgraph.graphql', root), 'utf8');

let failed = false;
const fail = (msg) => {
  console.log(`FAIL ${msg}`);
  failed = true;
};
if (!served) fail(`_service { sdl } answered nothing (HTTP ${res.status})`);
else if (served !== checkedIn) fail('the served SDL is not the checked-in schema (go generate ./...?)');

let supergraph;
for (const [name, sdl] of [['served', served ?? ''], ['checked-in', checkedIn]]) {
  const result = compose(sdl);
  if (result.errors?.length) {
    fail(`the ${name} SDL does not compose with the reviews subgraph:`);
    for (const e of result.errors) console.log(`  ${e.extensions?.code ?? ''} ${e.message}`);
    continue;
  }
  console.log(`ok   the ${name} SDL composes with the reviews subgraph`);
  supergraph = result.supergraphSdl;
}

// The check must catch a removed key: each mutation must fail to compose.
for (const type of ['Order', 'Material', 'Configurator']) {
  const head = `type ${type} implements Node @key(fields: "id") {`;
  if (!checkedIn.includes(head)) {
    fail(`the checked-in schema has no "${head}"`);
    continue;
  }
  const noKey = checkedIn.replace(head, `type ${type} implements Node {`);
  const at = checkedIn.indexOf(head) + head.length;
  const noID = checkedIn.slice(0, at) + checkedIn.slice(at).replace(/\n  id: ID!\n/, '\n');
  for (const [what, sdl] of [['@key', noKey], ['id field', noID]]) {
    const result = compose(sdl);
    if (!result.errors?.length) fail(`${type} without its ${what} still composes: the check would not catch it`);
    else console.log(`ok   ${type} without its ${what} fails to compose: ${result.errors[0].message.split('\n')[0].slice(0, 140)}`);
  }
}

// A second Relay-style subgraph (src/accounts.graphql) also defines Node,
// PageInfo and a node(id:) root field: the three compose. It stops
// composing when its Node becomes an entity interface (@key) or its
// PageInfo loses @shareable, which shows why each is written as it is.
const accountsSDL = readFileSync(new URL('accounts.graphql', import.meta.url), 'utf8');
const withAccounts = (accounts) =>
  composeServices([
    { name: 'catalogue', url: `${API_URL}/graphql`, typeDefs: parse(checkedIn) },
    { name: 'reviews', url: REVIEWS_URL, typeDefs: parse(reviewsSDL) },
    { name: 'accounts', url: 'http://accounts.invalid/graphql', typeDefs: parse(accounts) },
  ]);
const relay = withAccounts(accountsSDL);
if (relay.errors?.length) {
  fail('the checked-in SDL does not compose with a second Relay subgraph (src/accounts.graphql):');
  for (const e of relay.errors) console.log(`  ${e.extensions?.code ?? ''} ${e.message}`);
} else {
  console.log('ok   the checked-in SDL composes with a second Relay subgraph defining Node, PageInfo and node(id:)');
}
for (const [what, from, to] of [
  ['its Node an entity interface (@key)', 'interface Node {', 'interface Node @key(fields: "id") {'],
  ['its PageInfo not @shareable', 'type PageInfo @shareable {', 'type PageInfo {'],
]) {
  if (!accountsSDL.includes(from)) {
    fail(`src/accounts.graphql has no "${from}"`);
    continue;
  }
  const result = withAccounts(accountsSDL.replace(from, to));
  if (!result.errors?.length) fail(`the Relay subgraph with ${what} still composes`);
  else console.log(`ok   the Relay subgraph with ${what} fails to compose: ${result.errors[0].extensions?.code} ${result.errors[0].message.split('\n')[0].slice(0, 120)}`);
}

if (failed) process.exit(1);
writeFileSync(out, supergraph);
console.log(`supergraph written to ${out}`);
