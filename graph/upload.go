package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/imaging"
	"github.com/configurator/catalogue/internal/storage"
)

// MaxPrintMaps bounds the print-map images of one order.
const MaxPrintMaps = 20

// uploads collects the files a mutation stored, so that a failed mutation
// can remove them again and the store keeps no orphans.
type uploads struct {
	r    *Resolver
	urls []string
}

// image checks and stores the upload of the input field named field and
// returns what was stored. Errors name the field: a file that is not a PNG,
// JPEG or WebP image is BAD_REQUEST, one over the size limit
// PAYLOAD_TOO_LARGE.
func (u *uploads) image(ctx context.Context, field string, up *graphql.Upload) (*storage.Saved, error) {
	if u.r.files == nil {
		return nil, errors.New("no file storage configured")
	}
	saved, err := u.r.files.SaveImage(ctx, up.File)
	if err != nil {
		return nil, uploadError(field, err)
	}
	u.urls = append(u.urls, saved.URL)
	return saved, nil
}

// bytes stores data made by the server, such as a thumbnail.
func (u *uploads) bytes(ctx context.Context, data []byte, f imaging.Format) (string, error) {
	saved, err := u.r.files.SaveBytes(ctx, data, f)
	if err != nil {
		return "", fmt.Errorf("store generated image: %w", err)
	}
	u.urls = append(u.urls, saved.URL)
	return saved.URL, nil
}

// discard removes what was stored, after the mutation failed.
func (u *uploads) discard(ctx context.Context) {
	if len(u.urls) > 0 {
		u.r.removeFiles(context.WithoutCancel(ctx), u.urls...)
	}
}

// removeFiles deletes stored files that are no longer referenced. A
// failure only leaves an orphan file behind, so it is logged, not
// returned. It runs after the write committed, so it ignores the
// request's cancellation: a client that hangs up then would otherwise
// leave the replaced files behind for good.
func (r *Resolver) removeFiles(ctx context.Context, urls ...string) {
	if r.files == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	var keep []string
	for _, u := range urls {
		if u != "" {
			keep = append(keep, u)
		}
	}
	if err := r.files.Delete(ctx, keep...); err != nil {
		slog.ErrorContext(ctx, "remove stored files", "err", err)
	}
}

// uploadError names the field of a refused upload; the storage and imaging
// errors' messages are client-safe and say what the limit or the accepted
// formats are.
func uploadError(field string, err error) error {
	switch {
	case errors.Is(err, storage.ErrTooLarge):
		return &apperr.Error{Kind: apperr.TooLarge, Field: field, Message: fmt.Sprintf("%s: %v", field, err)}
	case errors.Is(err, imaging.ErrUnsupported), errors.Is(err, imaging.ErrTooBig):
		return apperr.Field(field, "%s: %v", field, err)
	}
	return fmt.Errorf("store %s: %w", field, err)
}
