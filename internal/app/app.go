// Package app holds the service's write workflows as named operations:
// create an order (with its files and Idempotency-Key), create, update
// and delete a texture (with its image and thumbnails), the material
// writes and the creation of a share link. Each takes one command struct
// and owns its transaction, so that every write of either transport has
// one place where what it changes is decided and committed; the
// resolvers only read their input, call an operation and load the
// result. It knows nothing of GraphQL or HTTP.
package app

import (
	"context"
	"fmt"
	"io"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/share"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/upload"
)

// App runs the write workflows over one database and file store.
type App struct {
	client *ent.Client
	files  *storage.Files
	links  *share.Links
	events Events
}

// New returns the operations over client, storing uploads in files (nil:
// a write that carries a file fails as an internal error) and making
// share links with links.
func New(client *ent.Client, files *storage.Files, links *share.Links) *App {
	return &App{client: client, files: files, links: links}
}

// withTx runs fn in one transaction, committed when fn returns nil and
// rolled back otherwise, so a failed write leaves nothing half-made, and
// what it records (emit) is stored with it or not at all. The viewer and
// privacy rules of ctx apply inside it.
func (a *App) withTx(ctx context.Context, fn func(tx *database.Tx) error) error {
	tx, err := database.Begin(ctx, a.client)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
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

// batch starts the batch of one write's uploads; done removes them again
// when the write failed (*err set), so the store keeps no orphans.
func (a *App) batch(ctx context.Context, err *error) (b *upload.Batch, done func()) {
	b = upload.New(a.files)
	return b, func() {
		if *err != nil {
			b.Discard(ctx)
		}
	}
}

// image stores the optional upload r of field and returns its URL (nil
// when there is none).
func image(ctx context.Context, b *upload.Batch, field string, r io.Reader) (*string, error) {
	if r == nil {
		return nil, nil
	}
	s, err := b.Image(ctx, field, r)
	if err != nil {
		return nil, err
	}
	return &s.URL, nil
}
