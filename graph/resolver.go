package graph

import (
	"context"
	"fmt"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/share"
	"github.com/configurator/catalogue/internal/storage"
)

// Resolver is the root of the graph. REST v1 calls the same methods
// (Query().OrdersPage(...), Mutation().CreateOrder(...)), so both
// transports share one path to the data.
type Resolver struct {
	client *ent.Client
	files  *storage.Files
	links  *share.Links
}

// Option configures a Resolver.
type Option func(*Resolver)

// WithFiles sets where uploads (order images, textures) are stored. Without
// it, a mutation that carries a file fails as an internal error.
func WithFiles(f *storage.Files) Option { return func(r *Resolver) { r.files = f } }

// WithShareBase sets the start of share links: the platform's configurator
// front-end, such as https://shop.example.com/configurator?share=. The
// snapshot key is appended to it as is.
func WithShareBase(base string) Option { return func(r *Resolver) { r.links = share.New(base) } }

// NewResolver returns the resolver root over client.
func NewResolver(client *ent.Client, opts ...Option) *Resolver {
	r := &Resolver{client: client, links: share.New("")}
	for _, o := range opts {
		o(r)
	}
	return r
}

// withTx runs fn in one transaction, committed when fn returns nil and
// rolled back otherwise; every mutation of either transport goes through
// it, so a failed write leaves nothing half-made. The viewer and privacy
// rules of ctx apply inside it.
func (r *Resolver) withTx(ctx context.Context, fn func(tx *ent.Client) error) error {
	tx, err := r.client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx.Client()); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return fmt.Errorf("%w (rollback: %v)", err, rerr)
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
