// The GraphQL documents every client sends, as their text. The manifest
// of trusted documents (manifest.mjs) holds each of them as each client
// sends it; `unlisted` and `bad` are left out of it on purpose.

export const viewer = `query Viewer {
  viewer {
    ownerID
    tokenKind
    configurator {
      id
      name
    }
  }
}`;

export const materials = `query Materials($first: Int!) {
  materials(first: $first, orderBy: {field: NAME, direction: ASC}) {
    totalCount
    edges {
      node {
        id
        name
      }
    }
  }
}`;

export const createOrder = `mutation CreateOrder($input: CreateOrderInput!) {
  createOrder(input: $input) {
    id
    price
    status
    configurator {
      id
    }
  }
}`;

export const orderEvents = `subscription OrderEvents($types: [String!]) {
  events(types: $types) {
    id
    type
    order {
      id
      price
    }
  }
}`;

/** trusted are the documents of the manifest, by name. */
export const trusted = { viewer, materials, createOrder, orderEvents };

/** unlisted is a valid query that is not in the manifest. */
export const unlisted = `query Unlisted {
  viewer {
    ownerID
  }
}`;

/** bad does not validate: the field does not exist. */
export const bad = `query Bad {
  noSuchField
}`;
