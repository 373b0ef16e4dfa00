// The second subgraph of the federation tests (examples/federation): the
// platform's reviews, written with @apollo/subgraph. It adds fields to two
// entities of the catalogue (Order.review, Material.rating) and references
// a third (Review.configurator), all by their key, id; it also defines the
// Relay value types the catalogue shares (PageInfo), as a Relay subgraph
// would. Its answers are computed from the ids, so that the cases know
// them without a database.
//
// Usage: node src/reviews.mjs PORT (prints "listening PORT" once ready),
// or import { typeDefs } for the composition check.
import http from 'node:http';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { graphql, parse } from 'graphql';

export const typeDefs = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@shareable"])

scalar Cursor

type PageInfo @shareable {
  hasNextPage: Boolean!
  hasPreviousPage: Boolean!
  startCursor: Cursor
  endCursor: Cursor
}

"An order of the catalogue, with its customer's review."
type Order @key(fields: "id") {
  id: ID!
  review: Review
}

"A material of the catalogue, with its average rating."
type Material @key(fields: "id") {
  id: ID!
  rating: Int!
}

"A configurator of the catalogue, referenced by its key only."
type Configurator @key(fields: "id", resolvable: false) {
  id: ID!
}

type Review {
  stars: Int!
  text: String!
  "null when the caller may not read the configurator (another owner's)."
  configurator: Configurator
}

type Query {
  "The reviews of the week, each about a configurator of the catalogue."
  topReviews(configuratorIDs: [ID!]!): [Review!]!
}
`;

/** review is the review of order id: its stars follow from the id. */
export function review(id) {
  return { stars: (Number(id) % 5) + 1, text: `review of order ${id}`, configurator: { id: '1' } };
}

/** rating is the rating of material id. */
export function rating(id) {
  return (Number(id) % 5) + 1;
}

const resolvers = {
  Order: { __resolveReference: ({ id }) => ({ id }), review: ({ id }) => review(id) },
  Material: { __resolveReference: ({ id }) => ({ id }), rating: ({ id }) => rating(id) },
  Query: {
    topReviews: (_, { configuratorIDs }) =>
      configuratorIDs.map((id, i) => ({ stars: 5 - (i % 5), text: `top review ${i}`, configurator: { id } })),
  },
};

export const schema = buildSubgraphSchema([{ typeDefs: parse(typeDefs), resolvers }]);

/** serve answers GraphQL POSTs on port (0: any) and resolves with the port. */
export function serve(port) {
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    let result;
    try {
      const { query, variables, operationName } = JSON.parse(body || '{}');
      result = await graphql({ schema, source: query, variableValues: variables, operationName });
    } catch (err) {
      result = { errors: [{ message: String(err.message ?? err) }] };
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(result));
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server.address().port)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = await serve(Number(process.argv[2] ?? 0));
  console.log(`listening ${port}`);
}
