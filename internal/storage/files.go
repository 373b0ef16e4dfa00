package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/imaging"
	"github.com/configurator/catalogue/internal/problem"
)

// DefaultMaxBytes is the size limit of one file when Files.MaxBytes is zero,
// and MAX_UPLOAD_BYTES's default: large enough for a print map or a
// high-resolution texture, small enough that an upload held in memory
// costs little.
const DefaultMaxBytes int64 = 10 << 20

// ErrTooLarge is wrapped by SaveImage's error for a file over the size
// limit, so callers can answer it as HTTP 413. The error's message is safe
// to show a client and names the limit.
var ErrTooLarge = errors.New("the file is too large")

// Files stores images and builds the absolute URLs clients get back. It is
// the one path both transports take to save an upload, so the checks on
// what may be stored live in one place.
type Files struct {
	// Store keeps the bytes.
	Store Store
	// BaseURL is the absolute URL files are served under, e.g.
	// "http://localhost:8080/files/". A missing trailing slash is added.
	BaseURL string
	// MaxBytes limits one file (DefaultMaxBytes when zero).
	MaxBytes int64
}

// Saved describes a stored file, as the caller records and returns it.
type Saved struct {
	// Name is the generated name the file is stored under.
	Name string
	// URL is the absolute URL the file is served at.
	URL string
	// Format is the image format found in the content.
	Format imaging.Format
	// Size is the file's length in bytes.
	Size int64
	// Data is the stored content, for callers that derive more files
	// from it (texture thumbnails) without reading it back.
	Data []byte
}

func (f *Files) maxBytes() int64 {
	if f.MaxBytes > 0 {
		return f.MaxBytes
	}
	return DefaultMaxBytes
}

func (f *Files) base() string {
	return strings.TrimRight(f.BaseURL, "/") + "/"
}

// SaveImage reads an upload from r, at most MaxBytes+1 bytes and never
// more (so a client cannot make the service read an endless body), refuses
// a larger file with an error wrapping ErrTooLarge, checks the content with
// imaging.Check (errors wrap imaging.ErrUnsupported or imaging.ErrTooBig and
// are safe to show a client), and stores it under a new name whose
// extension comes from the detected format.
func (f *Files) SaveImage(ctx context.Context, r io.Reader) (*Saved, error) {
	limit := f.maxBytes()
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read upload: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: the limit is %s", ErrTooLarge, byteSize(limit))
	}
	format, err := imaging.Check(data)
	if err != nil {
		return nil, err
	}
	return f.save(ctx, data, format)
}

// SaveBytes stores data the service produced or already checked (for
// example a generated thumbnail) as a file of the given format. The content
// is neither checked nor limited in size; format must be one of the
// imaging formats.
func (f *Files) SaveBytes(ctx context.Context, data []byte, format imaging.Format) (*Saved, error) {
	if format.Ext() == "" {
		return nil, fmt.Errorf("save file of format %q: %w", format, imaging.ErrUnsupported)
	}
	return f.save(ctx, data, format)
}

func (f *Files) save(ctx context.Context, data []byte, format imaging.Format) (*Saved, error) {
	name := NewName(format.Ext())
	if err := f.Store.Put(ctx, name, data); err != nil {
		return nil, err
	}
	return &Saved{Name: name, URL: f.URL(name), Format: format, Size: int64(len(data)), Data: data}, nil
}

// URL returns the absolute URL a stored file is served at.
func (f *Files) URL(name string) string {
	return f.base() + name
}

// NameOf returns the stored name behind a URL this Files built, so a failed
// write can delete what it stored and a replaced texture can remove its old
// files. It answers false for any other URL (another host, another path, a
// name the stores would refuse), which callers leave alone.
func (f *Files) NameOf(url string) (string, bool) {
	name, ok := strings.CutPrefix(url, f.base())
	if !ok || !ValidName(name) {
		return "", false
	}
	return name, true
}

// Delete deletes the files behind URLs this Files built, ignoring empty and
// foreign URLs and files already gone, so callers can pass whatever URLs a
// record held. It tries every URL and returns the failures joined.
func (f *Files) Delete(ctx context.Context, urls ...string) error {
	var errs []error
	for _, u := range urls {
		name, ok := f.NameOf(u)
		if !ok {
			continue
		}
		if err := f.Store.Delete(ctx, name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Handler serves stored files at GET and HEAD /{name}; mount it with
// http.StripPrefix at the path of BaseURL (e.g. /files/).
//
// A file is served with the Content-Type of its extension, which SaveImage
// chose from the sniffed content (an extension that is not an image format
// is served as application/octet-stream, never guessed), with
// X-Content-Type-Options: nosniff so browsers do not second-guess it, and
// with Cache-Control: public, max-age=31536000, immutable and a strong ETag
// because a name is never reused for other bytes. Range and conditional
// requests are answered as http.ServeContent does.
//
// An invalid or unknown name is 404, any other method 405, and a store
// that cannot be reached 503 (with Retry-After), all with an
// application/problem+json body.
func (f *Files) Handler() http.Handler {
	return http.HandlerFunc(f.serve)
}

// unavailableWait is the Retry-After of a store that cannot be reached:
// a bucket that is down is seldom back within a second.
const unavailableWait = 5 * time.Second

func (f *Files) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		problem.WriteStatus(w, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "files are read with GET or HEAD")
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	if !ValidName(name) {
		problem.Write(w, r, apperr.E(apperr.NotFound, "no such file"))
		return
	}
	rc, err := f.Store.Open(r.Context(), name)
	if errors.Is(err, ErrNotFound) {
		problem.Write(w, r, apperr.E(apperr.NotFound, "no such file"))
		return
	}
	if errors.Is(err, ErrUnavailable) {
		slog.WarnContext(r.Context(), "serve file", "name", name, "err", err)
		problem.Write(w, r, apperr.E(apperr.Unavailable, "the file store is unavailable, try again shortly").After(unavailableWait))
		return
	}
	if err != nil {
		slog.ErrorContext(r.Context(), "serve file", "name", name, "err", err)
		problem.WriteStatus(w, r, http.StatusInternalServerError, apperr.Internal, "the file could not be read")
		return
	}
	defer rc.Close()
	content, ok := rc.(io.ReadSeeker)
	if !ok {
		// A store whose files do not seek (a bucket stream) is read whole:
		// files are small, and this gives every response a Content-Length.
		data, err := io.ReadAll(rc)
		if err != nil {
			slog.ErrorContext(r.Context(), "serve file", "name", name, "err", err)
			problem.WriteStatus(w, r, http.StatusInternalServerError, apperr.Internal, "the file could not be read")
			return
		}
		content = bytes.NewReader(data)
	}
	h := w.Header()
	h.Set("Content-Type", contentType(name))
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+name+`"`)
	http.ServeContent(w, r, name, time.Time{}, content)
}

// contentType returns the media type for a stored name from its extension.
func contentType(name string) string {
	ext := path.Ext(name)
	for _, f := range []imaging.Format{imaging.PNG, imaging.JPEG, imaging.WebP} {
		if ext == f.Ext() {
			return f.ContentType()
		}
	}
	return "application/octet-stream"
}

// byteSize renders a limit for people: whole MiB or KiB when exact,
// otherwise bytes.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
