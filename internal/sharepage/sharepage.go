// Package sharepage is the page a share link opens when no configurator
// front-end is configured (VIEWER_URL): it shows the configurator's name
// and its options with the link's choices applied, so that a link works
// out of the box. It reads through the same resolver as GraphQL's
// sharedConfigurator and REST's /shared/{key}; it is plain server-side
// HTML with no script, so the page needs nothing but a browser.
package sharepage

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/share"
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
// rest of the path is the key.
func Handler(open Opener) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
		sc, err := open(r.Context(), r.URL.Path)
		status := http.StatusOK
		data := struct {
			C       *share.Configurator
			Message string
		}{C: sc}
		if err != nil {
			ae := problem.Classify(err)
			status, data.Message = http.StatusNotFound, "This link does not open a configurator. It may have been withdrawn; ask for a new one."
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
