package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/testkit"
)

// downStore is a Store whose server goes down after it stored up files.
type downStore struct {
	*storage.Memory
	up int
}

func (d *downStore) Put(ctx context.Context, name string, data []byte) error {
	if d.Len() >= d.up {
		return fmt.Errorf("store %s: %w: connection refused", name, storage.ErrUnavailable)
	}
	return d.Memory.Put(ctx, name, data)
}

func TestUnavailableStore(t *testing.T) {
	img := testkit.PNG(4, 4, 0)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		up    int // files stored before the outage
		store func(*Batch) error
	}{
		{"image", 0, func(b *Batch) error {
			_, err := b.Image(ctx, "configurator_snapshot", bytes.NewReader(img))
			return err
		}},
		{"texture thumbnail", 1, func(b *Batch) error {
			_, err := b.Texture(ctx, "file", bytes.NewReader(img))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &downStore{Memory: storage.NewMemory(), up: tc.up}
			b := New(&storage.Files{Store: store, BaseURL: "http://files.test/files/"})
			err := tc.store(b)
			var ae *apperr.Error
			if !errors.As(err, &ae) || ae.Kind != apperr.Unavailable || ae.Field != "" {
				t.Fatalf("error = %#v; want an Unavailable apperr without a field", err)
			}
			if msg := ae.Error(); msg != "the file store is unavailable, try again shortly" {
				t.Errorf("message = %q; it must not show the cause", msg)
			}
			if store.Len() != tc.up {
				t.Fatalf("%d files stored before the outage, want %d", store.Len(), tc.up)
			}
			b.Discard(ctx)
			if store.Len() != 0 {
				t.Errorf("%d files left after Discard, want 0", store.Len())
			}
		})
	}
}
