// The GraphQL documents of the example. `npm run codegen` reads them and
// generates their types and the persisted-documents manifest; graphql()
// then returns each as a typed document carrying its hash.
import { graphql } from './generated/graphql/index';

export const ViewerQuery = graphql(`
  query Viewer {
    viewer {
      tokenKind
      configurator {
        id
        name
      }
    }
  }
`);

export const OptionsQuery = graphql(`
  query ConfiguratorOptions($configuratorID: ID!) {
    configuratorOptions(
      where: { configuratorID: $configuratorID }
      orderBy: { field: POSITION, direction: ASC }
      first: 100
    ) {
      totalCount
      edges {
        node {
          id
          title
          type
          variations {
            id
            name
            position
            selected
          }
        }
      }
    }
  }
`);

export const CreateOrderMutation = graphql(`
  mutation CreateOrder($input: CreateOrderInput!) {
    createOrder(input: $input) {
      id
      price
      status
      createdAt
      configurator {
        id
      }
    }
  }
`);

export const OrderEventsSubscription = graphql(`
  subscription OrderEvents($types: [String!]) {
    events(types: $types) {
      id
      type
      timestamp
      order {
        id
        price
        status
      }
    }
  }
`);
