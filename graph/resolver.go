package graph

import "github.com/configurator/catalogue/ent"

// Resolver is the root of the graph. REST v1 calls the same methods
// (Query().OrdersPage(...)), so both transports share one path to the data.
type Resolver struct {
	client *ent.Client
}

// NewResolver returns the resolver root over client.
func NewResolver(client *ent.Client) *Resolver {
	return &Resolver{client: client}
}
