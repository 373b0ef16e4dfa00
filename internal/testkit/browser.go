package testkit

import (
	"cmp"
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ChromiumPath is where Debian's chromium package installs the browser; it is
// used unless the CHROMIUM_PATH environment variable names another one.
const ChromiumPath = "/usr/bin/chromium"

// browserTimeout bounds a whole browser session, so that a page that never
// finishes rendering fails the test instead of hanging it.
const browserTimeout = 60 * time.Second

// Chromium returns the path of the Chromium executable, so that pages such
// as the GraphQL playground are checked in a real browser rather than only
// by their HTML; without one the test is skipped (Missing), and fails in CI.
func Chromium(t testing.TB) string {
	t.Helper()
	p := cmp.Or(os.Getenv("CHROMIUM_PATH"), ChromiumPath)
	if _, err := exec.LookPath(p); err != nil {
		Missing(t, "chromium", "apt-get install chromium")
	}
	return p
}

// Browser starts a headless Chromium with a fresh profile and returns a
// chromedp context for it, so each test gets an isolated browser. The browser
// is shut down when the test ends and the whole session is limited to about
// a minute. Background networking is disabled so that the browser makes no
// connections of its own and works on machines without internet access.
func Browser(t testing.TB) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	ctx, cancelTimeout := context.WithTimeout(context.Background(), browserTimeout)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	ctx, cancelBrowser := chromedp.NewContext(ctx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		// Close the browser gracefully, so that it has stopped writing to
		// the profile by the time the temporary directory is removed.
		if err := chromedp.Cancel(ctx); err != nil {
			t.Logf("close chromium: %v", err)
		}
		cancelBrowser()
		cancelAlloc()
		cancelTimeout()
	})
	// Start the browser now, so that a broken installation is reported here
	// rather than by whatever the test does first.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// The parts of the GraphiQL page the helpers below use. GraphiQL uses
// CodeMirror 5, whose instance hangs off its wrapper element; the tools
// pane shows the headers editor (the variables one is hidden), as
// playground.js asks.
const (
	queryEditor   = `.graphiql-query-editor .CodeMirror`
	headersEditor = `.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror`
	resultEditor  = `.graphiql-response .CodeMirror`
	executeButton = `button.graphiql-execute-button`
)

// Playground is what the GraphiQL playground shows when it has opened,
// before the user does anything.
type Playground struct {
	// Query is the text of the open tab's query editor.
	Query string
	// Headers is the text of the headers editor.
	Headers string
}

// OpenPlayground opens the GraphiQL playground at pageURL (which may end in
// #token=...) and returns what its editors hold once it is ready to run a
// query, so tests can check what a user finds there.
func OpenPlayground(t testing.TB, ctx context.Context, pageURL string) Playground {
	t.Helper()
	var p Playground
	err := chromedp.Run(ctx,
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(queryEditor, chromedp.ByQuery),
		chromedp.WaitVisible(resultEditor, chromedp.ByQuery),
		chromedp.WaitEnabled(executeButton, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector(`+jsString(queryEditor)+`).CodeMirror.getValue()`, &p.Query),
		chromedp.Evaluate(`document.querySelector(`+jsString(headersEditor)+`).CodeMirror.getValue()`, &p.Headers),
	)
	if err != nil {
		t.Fatalf("open playground %s: %v", pageURL, err)
	}
	return p
}

// RunPlayground runs the query of the playground open in ctx with its run
// button, as a user would, and returns the text of the result pane once it
// holds a GraphQL response.
func RunPlayground(t testing.TB, ctx context.Context) string {
	t.Helper()
	var result string
	err := chromedp.Run(ctx,
		// Clear the result pane so that only the answer to this run can
		// satisfy the wait below.
		chromedp.Evaluate(`document.querySelector(`+jsString(resultEditor)+`).CodeMirror.setValue('');`, nil),
		chromedp.Click(executeButton, chromedp.ByQuery),
		chromedp.Poll(`(() => {
			const text = document.querySelector(`+jsString(resultEditor)+`).CodeMirror.getValue();
			return /"(data|errors)"/.test(text) && text;
		})()`, &result, chromedp.WithPollingInterval(50*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("run the playground's query: %v", err)
	}
	return result
}

// RunPlaygroundQuery opens the GraphiQL playground at pageURL (which may end
// in #token=...), runs query through the UI exactly as a user would, and
// returns the text of the result pane once it holds a GraphQL response, so
// tests can check the playground end to end.
func RunPlaygroundQuery(t testing.TB, ctx context.Context, pageURL, query string) string {
	t.Helper()
	OpenPlayground(t, ctx, pageURL)
	err := chromedp.Run(ctx,
		chromedp.Evaluate(`document.querySelector(`+jsString(queryEditor)+`).CodeMirror.setValue(`+jsString(query)+`);`, nil),
		// GraphiQL takes in an edit (the operation to run among them) 100 ms
		// later, storing the query as it does; running before would send
		// the operation name of the query replaced.
		chromedp.Poll(`localStorage.getItem('graphiql:query') === `+jsString(query), nil, chromedp.WithPollingInterval(20*time.Millisecond)),
	)
	if err != nil {
		t.Fatalf("type %q into playground %s: %v", query, pageURL, err)
	}
	return RunPlayground(t, ctx)
}

// OpenExplorer opens the explorer plugin (@graphiql/plugin-explorer) of the
// playground open in ctx from its sidebar button and returns the fields it
// lists once it has drawn the schema (the root fields, and the fields of
// those the query selects), so tests can check that the plugin is there
// and works.
func OpenExplorer(t testing.TB, ctx context.Context) []string {
	t.Helper()
	const root = `.graphiql-plugin .graphiql-explorer-root`
	var fields []string
	err := chromedp.Run(ctx,
		chromedp.Click(`.graphiql-sidebar button[aria-label="Show GraphiQL Explorer"]`, chromedp.ByQuery),
		chromedp.WaitVisible(root+` [data-field-name]`, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(`+jsString(root+` .graphiql-explorer-node > [data-field-name]`)+`)).map(e => e.dataset.fieldName)`, &fields),
	)
	if err != nil {
		t.Fatalf("open the playground's explorer: %v", err)
	}
	return fields
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}

// DocsOperations opens the REST reference (Swagger UI) at pageURL, waits
// until it has rendered the operations of its OpenAPI document, and returns
// them as "METHOD /path summary", in page order, so tests can check the
// page against the document.
func DocsOperations(t testing.TB, ctx context.Context, pageURL string) []string {
	t.Helper()
	var ops []string
	err := chromedp.Run(ctx,
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(`.opblock .opblock-summary-path`, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('.opblock')).map(op =>
			op.querySelector('.opblock-summary-method').textContent + ' ' +
			op.querySelector('.opblock-summary-path').dataset.path + ' ' +
			(op.querySelector('.opblock-summary-description') || {textContent: ''}).textContent)`, &ops),
	)
	if err != nil {
		t.Fatalf("read the operations of %s: %v", pageURL, err)
	}
	return ops
}

// TryDocsOperation runs one operation without parameters from the REST
// reference already open in ctx, as a user would ("Try it out", then
// "Execute"), and returns the status and the response body the page shows.
// method and path name the operation as the document does (GET, /orders).
func TryDocsOperation(t testing.TB, ctx context.Context, method, path string) (status, body string) {
	t.Helper()
	op := `.opblock-` + strings.ToLower(method) + `:has(.opblock-summary-path[data-path=` + jsString(path) + `])`
	err := chromedp.Run(ctx,
		chromedp.Click(op+` .opblock-summary-control`, chromedp.ByQuery),
		chromedp.Click(op+` .try-out__btn`, chromedp.ByQuery),
		chromedp.Click(op+` .execute`, chromedp.ByQuery),
		chromedp.WaitVisible(op+` .live-responses-table .response .response-col_status`, chromedp.ByQuery),
		chromedp.Text(op+` .live-responses-table .response .response-col_status`, &status, chromedp.ByQuery),
		chromedp.Text(op+` .live-responses-table .response .response-col_description pre`, &body, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("try %s %s in the REST reference: %v", method, path, err)
	}
	return strings.TrimSpace(status), body
}

// Recorder keeps every request a page made and everything the browser
// complained about (errors logged, exceptions thrown, Content-Security-Policy
// violations), so a test can check that a page works offline and cleanly.
type Recorder struct {
	mu       sync.Mutex
	requests []string
	problems []string
}

// Record starts recording what happens in the browser of ctx.
func Record(ctx context.Context) *Recorder {
	r := &Recorder{}
	chromedp.ListenTarget(ctx, func(ev any) {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			r.requests = append(r.requests, ev.Request.URL)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.LevelError {
				r.problems = append(r.problems, ev.Entry.Text)
			}
		case *runtime.EventExceptionThrown:
			r.problems = append(r.problems, ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				for _, arg := range ev.Args {
					r.problems = append(r.problems, string(arg.Value)+arg.Description)
				}
			}
		}
	})
	return r
}

// CheckOffline fails t unless requests were recorded, all of them to
// loopback addresses (or data: and blob: URLs), and the browser reported no
// problem.
func (r *Recorder) CheckOffline(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.requests) == 0 {
		t.Fatal("no requests recorded")
	}
	for _, raw := range r.requests {
		u, err := url.Parse(raw)
		if err != nil {
			t.Errorf("request to unparsable URL %q: %v", raw, err)
			continue
		}
		if u.Scheme == "data" || u.Scheme == "blob" {
			continue
		}
		if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
			t.Errorf("page requested non-loopback URL %s", raw)
		}
	}
	for _, p := range r.problems {
		t.Errorf("browser reported: %s", p)
	}
}
