// Package sharepage is the page a share link opens when no configurator
// front-end is configured (VIEWER_URL): it shows the configurator's name
// and what the shopper chose, option by option (the chosen variation
// marked, materials as colour swatches with their texture's thumbnail), so
// that a link works out of the box, on a phone too. It reads through the
// same resolver as GraphQL's sharedConfigurator and REST's /shared/{key};
// it is plain server-side HTML with no script, so the page needs nothing
// but a browser.
package sharepage

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/share"
	"github.com/configurator/catalogue/internal/storage"
)

//go:embed page.html
var files embed.FS

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"int":  func(p *int) string { return strconv.Itoa(*p) },
	"str":  func(p *string) string { return *p },
	"bool": func(p *bool) bool { return *p },
	"join": func(xs []string) string { return strings.Join(xs, ", ") },
}).ParseFS(files, "page.html"))

// Opener reads the configurator behind a share key: the resolver of
// GraphQL's sharedConfigurator, which REST's /shared/{key} calls too.
type Opener func(ctx context.Context, key string) (*share.Configurator, error)

// Handler serves GET {prefix}{key}; mount it with http.StripPrefix so the
// rest of the path is the key. open reads the link; the materials its
// variations name are read from c (share.Materials), and their texture
// thumbnails are shown when they are files of the service's storage
// (files, nil for none).
//
// The page's Content-Security-Policy allows nothing but its inline style
// and, for the thumbnails, images under files' public base URL, so a
// thumbnail URL pointing anywhere else (the demo's example CDN, say) is
// not shown rather than shown broken: a link's page never makes the
// shopper's browser fetch from a host the service does not serve.
func Handler(open Opener, c *ent.Client, files *storage.Files) http.Handler {
	csp := "default-src 'none'; style-src 'unsafe-inline'"
	if src := imageSource(files); src != "" {
		csp += "; img-src " + src
	} else {
		files = nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
		sc, err := open(r.Context(), r.URL.Path)
		var materials map[int]*share.Material
		if err == nil {
			materials, err = share.Materials(r.Context(), c, sc)
		}
		status := http.StatusOK
		data := &view{C: sc, materials: materials, files: files}
		if err != nil {
			ae := problem.Classify(err)
			data.C, status, data.Message = nil, http.StatusNotFound, "This link does not open a configurator. It may have been withdrawn; ask for a new one."
			if ae.Kind != apperr.NotFound {
				slog.ErrorContext(r.Context(), "share page", "err", err)
				status, data.Message = http.StatusInternalServerError, "Something went wrong; please try again later."
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		if err := page.Execute(w, data); err != nil {
			slog.ErrorContext(r.Context(), "render share page", "err", err)
		}
	})
}

// imageSource returns the CSP source expression of files' public base URL
// (scheme, host and path, so that the page may load files of the storage
// and nothing else of that host), or "" when there is no storage or its URL
// cannot be written into the header as is.
func imageSource(files *storage.Files) string {
	if files == nil {
		return ""
	}
	u, err := url.Parse(strings.TrimRight(files.BaseURL, "/") + "/")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	src := u.Scheme + "://" + u.Host + u.EscapedPath()
	if strings.ContainsAny(src, " \t;,'\"") {
		return ""
	}
	return src
}

// view is what page.html renders: the configurator (nil on the error
// page) or the message, and what the page shows of the materials.
type view struct {
	C         *share.Configurator
	Message   string
	materials map[int]*share.Material
	files     *storage.Files
}

// Material returns the material a variation names, or nil.
func (v *view) Material(id *int) *share.Material {
	if id == nil {
		return nil
	}
	return v.materials[*id]
}

// Thumbnail returns the URL of m's thumbnail when it is a file of the
// service's storage (which the CSP lets the page load), else "".
func (v *view) Thumbnail(m *share.Material) string {
	if v.files == nil || m.Thumbnail == "" {
		return ""
	}
	if _, ok := v.files.NameOf(m.Thumbnail); !ok {
		return ""
	}
	return m.Thumbnail
}
