// Package upload stores the files of one write (an order's snapshot and
// print maps, a texture's image, its thumbnails and bump map) and removes
// them again when the write fails, so that the file store keeps no
// orphans whichever transport the write came through.
package upload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/imaging"
	"github.com/configurator/catalogue/internal/storage"
)

// ThumbnailSides are the longer sides, in pixels, of a texture's two
// thumbnails (texture_thumbnail_50 and texture_thumbnail_100).
var ThumbnailSides = [2]int{50, 100}

// Batch is the files one write stored. Its zero value is not usable; New
// makes one.
type Batch struct {
	files   *storage.Files
	urls    []string
	digests []string
}

// New starts a batch over files.
func New(files *storage.Files) *Batch { return &Batch{files: files} }

// Image checks and stores the upload of the input field (a domain path,
// such as configurator_print_map[2]) and returns what was stored. A file
// that is not a PNG, JPEG or WebP image is Invalid, one over the size
// limit TooLarge, both naming field.
func (b *Batch) Image(ctx context.Context, field string, r io.Reader) (*storage.Saved, error) {
	if b.files == nil {
		return nil, errors.New("no file storage configured")
	}
	saved, err := b.files.SaveImage(ctx, r)
	if err != nil {
		return nil, refusal(field, err)
	}
	b.urls = append(b.urls, saved.URL)
	sum := sha256.Sum256(saved.Data)
	b.digests = append(b.digests, hex.EncodeToString(sum[:]))
	return saved, nil
}

// Digests are the SHA-256 digests of the uploads stored so far, in the
// order they were stored: what an idempotent write compares of its files.
func (b *Batch) Digests() []string { return b.digests }

// Texture is a texture image as stored: the file and its thumbnails.
type Texture struct {
	File, Thumbnail50, Thumbnail100 string
}

// Texture stores a texture image of the input field and the thumbnails the
// server makes of it.
func (b *Batch) Texture(ctx context.Context, field string, r io.Reader) (*Texture, error) {
	saved, err := b.Image(ctx, field, r)
	if err != nil {
		return nil, err
	}
	var thumbs [2]string
	for i, side := range ThumbnailSides {
		data, err := imaging.Thumbnail(saved.Data, side)
		if err != nil {
			// A file whose header is sound but whose pixels are not is
			// found only here: it is the client's bad file, not a fault.
			return nil, refusal(field, err)
		}
		s, err := b.files.SaveBytes(ctx, data, imaging.PNG)
		if err != nil {
			return nil, refusal(field, err)
		}
		b.urls = append(b.urls, s.URL)
		thumbs[i] = s.URL
	}
	return &Texture{File: saved.URL, Thumbnail50: thumbs[0], Thumbnail100: thumbs[1]}, nil
}

// Discard removes what the batch stored; call it when the write failed.
func (b *Batch) Discard(ctx context.Context) {
	Remove(ctx, b.files, b.urls...)
}

// Remove deletes stored files that no record references any more (those
// of a failed write, or the ones a write replaced). A failure only leaves
// an orphan file behind, so it is logged, not returned. It ignores the
// request's cancellation: it runs after the write's outcome is known, and
// a client that hangs up then would otherwise leave the files behind for
// good. Empty and foreign URLs are skipped.
func Remove(ctx context.Context, files *storage.Files, urls ...string) {
	if files == nil || len(urls) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if err := files.Delete(ctx, urls...); err != nil {
		slog.ErrorContext(ctx, "remove stored files", "err", err)
	}
}

// refusal names the field of a refused upload; the storage and imaging
// errors' messages are client-safe and say what the limit or the accepted
// formats are. A file store that cannot be reached is Unavailable: the
// client may retry, and the cause is logged, not shown.
func refusal(field string, err error) error {
	switch {
	case errors.Is(err, storage.ErrUnavailable):
		slog.Warn("file store unavailable", "field", field, "err", err)
		return apperr.E(apperr.Unavailable, "the file store is unavailable, try again shortly")
	case errors.Is(err, storage.ErrTooLarge):
		return apperr.E(apperr.TooLarge, "{}: %v", err).At(field)
	case errors.Is(err, imaging.ErrUnsupported), errors.Is(err, imaging.ErrTooBig):
		return apperr.Field(field, "{}: %v", err)
	}
	return err
}
