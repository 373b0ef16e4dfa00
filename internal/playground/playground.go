// Package playground serves the pages for exploring the APIs in a browser:
// GraphiQL for the GraphQL API (Handler) and Swagger UI for the OpenAPI
// document of REST v1 (Docs).
//
// Everything the pages need (React, ReactDOM, GraphiQL and its explorer
// plugin, Swagger UI and small start-up scripts) is embedded in the binary,
// so they work on machines without internet access and never leak queries
// or tokens to a CDN.
package playground

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed assets/*.js assets/*.css
var assets embed.FS

// WelcomeQuery is the query of the tab GraphiQL opens on (and of every new
// tab): it reads the caller's first configurator with its options and their
// variations, and the latest page of orders, so that the first run shows
// what the graph holds rather than GraphiQL's generic welcome text. It is
// checked against the demo data, on SQLite and PostgreSQL, by cmd/server's
// TestServe, in a browser.
//
//go:embed welcome.graphql
var WelcomeQuery string

// contentSecurityPolicy keeps the pages from loading anything but their own
// assets and from talking to anything but their own origin. Styles need
// 'unsafe-inline' because GraphiQL's dialogs inject a <style> element
// (react-remove-scroll) and Swagger UI sets style attributes; scripts need
// neither 'unsafe-inline' nor 'unsafe-eval'. Swagger UI's "Try it out" calls
// the same origin, which connect-src 'self' allows.
const contentSecurityPolicy = "default-src 'self'; " +
	"script-src 'self'; " +
	"style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; " +
	"font-src 'self' data:; " +
	"connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"

// pages are the two pages, which share their head: "graphiql" (Handler)
// and "docs" (Docs).
var pages = template.Must(template.New("").Parse(`{{define "head"}}<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<link rel="icon" href="data:,">
{{end}}{{define "graphiql"}}{{template "head" .}}<link rel="stylesheet" href="{{.Assets}}graphiql.min.css">
<link rel="stylesheet" href="{{.Assets}}graphiql-plugin-explorer.css">
<link rel="stylesheet" href="{{.Assets}}playground.css">
</head>
<body>
<div id="graphiql" data-endpoint="{{.Endpoint}}" data-default-query="{{.Query}}"{{with .DemoToken}} data-demo-token="{{.}}"{{end}}>Loading…</div>
<script src="{{.Assets}}react.production.min.js"></script>
<script src="{{.Assets}}react-dom.production.min.js"></script>
<script src="{{.Assets}}graphiql.min.js"></script>
<script src="{{.Assets}}graphiql-plugin-explorer.umd.js"></script>
<script src="{{.Assets}}playground.js"></script>
</body>
</html>
{{end}}{{define "docs"}}{{template "head" .}}<link rel="stylesheet" href="{{.Assets}}swagger-ui.css">
<link rel="stylesheet" href="{{.Assets}}docs.css">
</head>
<body>
<div id="swagger-ui" data-spec="{{.Endpoint}}">Loading…</div>
<script src="{{.Assets}}swagger-ui-bundle.js"></script>
<script src="{{.Assets}}docs.js"></script>
</body>
</html>
{{end}}`))

// Handler returns a handler serving a GraphiQL page titled title that sends
// queries to endpoint, so developers can try the API from a browser.
//
// The page is served at the path the handler is mounted on, with or without
// a trailing slash, and its assets under that path's "assets/" directory,
// for example /playground, /playground/ and /playground/assets/graphiql.min.js.
// Opening the page with a fragment such as #token=XYZ pre-fills the headers
// editor with an "Authorization: Bearer XYZ" header; a fragment is never sent
// to the server, so the token does not end up in access logs. The page opens
// on WelcomeQuery and has GraphiQL's explorer plugin.
func Handler(title, endpoint string, opts ...Option) http.Handler {
	h := &handler{page: pages.Lookup("graphiql"), title: title, endpoint: endpoint, query: WelcomeQuery}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Option changes the GraphiQL page of Handler.
type Option func(*handler)

// DemoToken pre-fills the headers editor with "Authorization: Bearer
// token" (unless the browser already keeps another Authorization, or the
// page is opened with #token=), so that the demo runs with one click. Give
// it only the token serve minted for the demo data: the token is written
// into the page, which anyone who can load it reads. The page therefore
// carries it only when it is requested under a loopback host name
// (localhost, 127.0.0.0/8, ::1): a local run. A page requested under any
// other name (a public or LAN address, a DNS-rebinding name that resolves
// to 127.0.0.1) gets no token, and the page that carries it is not shared
// with other origins (no CORS headers) nor stored by caches.
func DemoToken(token string) Option {
	return func(h *handler) { h.demoToken = token }
}

// Docs returns a handler serving a Swagger UI page titled title that shows
// the OpenAPI document at specURL (same origin), so integrators can read
// the REST reference and try its operations from a browser. It is served
// like Handler's page, assets included; #token=XYZ authorizes the
// operations tried from the page with that bearer token.
func Docs(title, specURL string) http.Handler {
	return &handler{page: pages.Lookup("docs"), title: title, endpoint: specURL}
}

// handler serves one page: page is its template, endpoint the URL it
// talks to (the GraphQL endpoint, or the OpenAPI document); query and
// demoToken are GraphiQL's (see Handler and DemoToken).
type handler struct {
	page                              *template.Template
	title, endpoint, query, demoToken string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	if i := strings.Index(r.URL.Path, "/assets/"); i >= 0 {
		serveAsset(w, r, r.URL.Path[i+len("/assets/"):])
		return
	}
	h.servePage(w, r)
}

func (h *handler) servePage(w http.ResponseWriter, r *http.Request) {
	var demoToken string
	if h.demoToken != "" && loopbackHost(r.Host) {
		demoToken = h.demoToken
	}
	var buf bytes.Buffer
	err := h.page.Execute(&buf, struct{ Title, Endpoint, Assets, Query, DemoToken string }{
		Title:     h.title,
		Endpoint:  h.endpoint,
		Assets:    assetBase(r.URL.Path),
		Query:     h.query,
		DemoToken: demoToken,
	})
	if err != nil {
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Security-Policy", contentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cache-Control", "no-cache")
	if demoToken != "" {
		// Another origin's script must not read the token (edge.CORS
		// allows every origin), nor a cache keep it.
		hdr.Del("Access-Control-Allow-Origin")
		hdr.Del("Access-Control-Expose-Headers")
		hdr.Set("Cache-Control", "no-store")
	}
	_, _ = w.Write(buf.Bytes())
}

// loopbackHost reports whether the Host header host (with or without a
// port) names this machine's loopback interface: localhost or a loopback
// IP address.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// assetBase returns the URL of the assets directory relative to the page at
// urlPath, so that the page cannot be made to load them from another host
// whatever path it is requested with.
func assetBase(urlPath string) string {
	if strings.HasSuffix(urlPath, "/") {
		return "./assets/"
	}
	return "./" + path.Base(urlPath) + "/assets/"
}

// startTime is the modification time reported for the embedded assets, which
// have none of their own, so that conditional requests work.
var startTime = time.Now()

// contentTypes is spelled out rather than taken from package mime, whose
// answers depend on the host's mime.types files.
var contentTypes = map[string]string{
	".css": "text/css; charset=utf-8",
	".js":  "text/javascript; charset=utf-8",
}

func serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	ctype, ok := contentTypes[path.Ext(name)]
	data, err := fs.ReadFile(assets, "assets/"+name)
	if !ok || err != nil || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", ctype)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "public, max-age=86400")
	http.ServeContent(w, r, name, startTime, bytes.NewReader(data))
}
