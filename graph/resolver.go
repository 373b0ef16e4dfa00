package graph

import (
	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/share"
	"github.com/configurator/catalogue/internal/storage"
)

// Resolver is the root of the graph. REST v1 calls the same methods
// (Query().OrdersPage(...), Mutation().CreateOrder(...)) through a root
// that states what it presents (Presenting), so both transports share one
// path to the data. Reads build their ent queries
// here and in internal/query; writes are operations of internal/app.
type Resolver struct {
	client *ent.Client
	app    *app.App
	links  *share.Links
	files  *storage.Files
	events app.Events
	hub    *events.Hub
	// presents, when set, is what every read of this root presents
	// (Presenting); without it each read presents its GraphQL selection.
	presents *Read
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

// WithEvents sets who hears of the writes: the webhook queue, the
// subscribers' notifier, the shape of payloads (app.Events).
func WithEvents(e app.Events) Option { return func(r *Resolver) { r.events = e } }

// WithHub sets the hub subscriptions read from. Without it, a
// subscription is refused as unavailable.
func WithHub(h *events.Hub) Option { return func(r *Resolver) { r.hub = h } }

// NewResolver returns the resolver root over client.
func NewResolver(client *ent.Client, opts ...Option) *Resolver {
	r := &Resolver{client: client, links: share.New("")}
	for _, o := range opts {
		o(r)
	}
	r.app = app.New(client, r.files, r.links)
	r.app.SetEvents(r.events)
	return r
}
