package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"sync"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/apitoken"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/buildinfo"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/demo"
	"github.com/configurator/catalogue/internal/logbuf"
	"github.com/configurator/catalogue/internal/pglisten"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/telemetry"
)

// The server's timeouts beside the request deadline (docs/limits.md,
// "Timeouts, outages and shutdown").
const (
	// readHeaderTimeout bounds the request line and headers, so that a
	// client trickling headers (slowloris) cannot hold a connection.
	readHeaderTimeout = 5 * time.Second
	// idleTimeout closes a keep-alive connection that sends nothing.
	idleTimeout = 2 * time.Minute
	// maxHeaderBytes bounds the request line and headers together; a
	// bearer token and the usual headers take a few kilobytes.
	maxHeaderBytes = 64 << 10
	// writeSlack is how much longer than the request deadline a response
	// may take: the 503 of a request that ran out of time still reaches
	// the client, and the write timeout cuts off only a handler that
	// ignores its deadline.
	writeSlack = 5 * time.Second
)

// serverTimeouts returns the read and write timeouts of the server and
// the shutdown grace for the request deadline d: the body must arrive
// within the deadline, the answer is written within writeSlack after it,
// and SIGTERM waits as long as the write timeout, so that every request
// that started before it finishes. d <= 0 (no deadline) leaves reads and
// writes unbounded and grants the default deadline's grace.
func serverTimeouts(d time.Duration) (read, write, grace time.Duration) {
	if d <= 0 {
		return 0, 0, config.DefaultRequestTimeout + writeSlack
	}
	return d, d + writeSlack, d + writeSlack
}

// serve runs the HTTP service until ctx ends, then drains it. Each part it
// starts registers how to stop on stops, which serve runs in reverse order
// when it returns, so a part stops after every part that needs it.
func serve(ctx context.Context, args []string, env config.Env, stdout, stderr io.Writer) error {
	cfg, fs := flags("serve", env, (*config.Config).ServeFlags)
	if err := parse(fs, args); err != nil {
		return err
	}
	var stops stack
	defer stops.run()
	log := startLog(stderr, &stops)
	tuneRuntime(env, cfg.PprofAddr != "")
	if err := startTracing(ctx, env, log, &stops); err != nil {
		return err
	}
	c, tokens, err := startTokens(ctx, cfg, log, &stops)
	if err != nil {
		return err
	}
	if cfg.SeedDemo() {
		if cfg.DemoToken, err = demoSetup(ctx, c, tokens, log); err != nil {
			return err
		}
	}
	ln, files, loc, err := listen(ctx, cfg, env)
	if err != nil {
		return err
	}
	handler, err := startHandler(ctx, c, tokens, cfg, files, log, &stops)
	if err != nil {
		return err
	}
	announce(stdout, log, ln, loc, cfg)
	if err := startSidecars(cfg, handler.metrics.Handler(), log, &stops); err != nil {
		return err
	}
	return serveUntil(ctx, handler, ln, cfg, log)
}

// stack holds how to stop what serve started, in the order started.
type stack []func()

func (s *stack) push(stop func()) { *s = append(*s, stop) }

// run stops the parts, the last started first.
func (s *stack) run() {
	for i := len(*s) - 1; i >= 0; i-- {
		(*s)[i]()
	}
}

// startLog makes the default logger. Request lines are written in batches
// at most 100 ms apart (and at shutdown); every other line at once
// (internal/logbuf). Every value is clipped (logbuf.ClipAttr).
func startLog(stderr io.Writer, stops *stack) *slog.Logger {
	logOut := logbuf.New(stderr, 100*time.Millisecond)
	stops.push(func() { logOut.Close() })
	clip := &slog.HandlerOptions{ReplaceAttr: logbuf.ClipAttr}
	log := slog.New(telemetry.LogHandler(logbuf.Split(
		slog.NewTextHandler(logOut, clip), slog.NewTextHandler(logOut.Direct(), clip),
		func(r slog.Record) bool { return r.Message == requestLine })))
	slog.SetDefault(log)
	return log
}

// startTracing starts tracing before the database opens, whose driver it
// wraps; it stops last, sending the spans still buffered.
func startTracing(ctx context.Context, env config.Env, log *slog.Logger, stops *stack) error {
	stopTracing, err := telemetry.Setup(ctx, env, buildinfo.Read().Version, log)
	if err != nil {
		return usagef("%v", err)
	}
	stops.push(func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := stopTracing(fctx); err != nil {
			log.Warn("could not send the last spans", "err", err)
		}
	})
	return nil
}

// startTokens opens the database and the token service with its signing
// key and, with OIDC_ISSUER, the provider's, and starts the background
// work on the database.
func startTokens(ctx context.Context, cfg *config.Config, log *slog.Logger, stops *stack) (*ent.Client, *auth.Tokens, error) {
	c, err := openDB(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	stops.push(func() { c.Close() })
	signer, err := auth.OpenSigner(ctx, c, cfg.JWTSecret)
	if err != nil {
		return nil, nil, err
	}
	tokens := auth.NewTokens(c, signer)
	if err := startProvider(ctx, cfg, tokens, log, stops); err != nil {
		return nil, nil, err
	}
	startBackground(ctx, c, tokens, log, stops)
	return c, tokens, nil
}

// startBackground runs the token service's background work (the last-use
// writes) and, on a PostgreSQL server without autovacuum, the reclaiming
// of the order counts' dead versions a few seconds after orders were
// written (database.CountsVacuumer). The expired Idempotency-Keys go with
// the retention (internal/webhook, Retain). They outlive the requests
// in flight at SIGTERM and stop, writing their last notes, before the
// database closes.
func startBackground(ctx context.Context, c *ent.Client, tokens *auth.Tokens, log *slog.Logger, stops *stack) {
	bctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	var tokensErr error
	wg.Go(func() { tokensErr = tokens.Run(bctx, log) })
	if vacuum := database.CountsVacuumer(ctx, c, log); vacuum != nil {
		wg.Go(func() { vacuum(bctx, database.VacuumCountsEvery) })
	}
	stops.push(func() {
		stop()
		wg.Wait()
		if tokensErr != nil {
			log.Warn("could not write token usage at shutdown", "err", tokensErr)
		}
	})
}

// startProvider makes tokens accept an OpenID provider's access tokens
// when OIDC_ISSUER is set; the provider's keys are refreshed in the
// background until serve returns.
func startProvider(ctx context.Context, cfg *config.Config, tokens *auth.Tokens, log *slog.Logger, stops *stack) error {
	if cfg.OIDCIssuer == "" {
		return nil
	}
	pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	stops.push(stop)
	p, err := auth.NewProvider(pctx, auth.ProviderConfig{
		Issuer: cfg.OIDCIssuer, Audience: cfg.OIDCAudience,
		OwnerClaim: cfg.OIDCOwnerClaim, ConfiguratorClaim: cfg.OIDCConfiguratorClaim,
	}, log)
	if err != nil {
		return err
	}
	tokens.SetProvider(p)
	log.Info("accepting the tokens of an OpenID provider", "issuer", cfg.OIDCIssuer, "audience", cfg.OIDCAudience)
	return nil
}

// listen opens the file storage and the public listener, and puts the
// port the kernel chose for an --addr of port 0 into the URLs the server
// gives.
func listen(ctx context.Context, cfg *config.Config, env config.Env) (net.Listener, *storage.Files, storage.Location, error) {
	loc, err := storage.ParseURL(cfg.StorageURL)
	if err != nil {
		return nil, nil, loc, usagef("--storage-url: %v", err)
	}
	store, err := loc.Open(ctx, env)
	if err != nil {
		return nil, nil, loc, fmt.Errorf("file storage: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, nil, loc, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	_, chosen, _ := net.SplitHostPort(ln.Addr().String())
	cfg.PublicURL, cfg.ViewerURL = onPort(cfg.PublicURL, chosen), onPort(cfg.ViewerURL, chosen)
	return ln, &storage.Files{Store: store, BaseURL: cfg.PublicURL + "/files/", MaxBytes: cfg.MaxUploadBytes}, loc, nil
}

// startHandler builds the HTTP surface and starts the events that carry
// writes to webhooks and subscriptions, and the PostgreSQL listener that
// carries events and token revocations across replicas; the Redis
// connections of the rate limiter and persisted queries close when serve
// stops.
func startHandler(ctx context.Context, c *ent.Client, tokens *auth.Tokens, cfg *config.Config, files *storage.Files, log *slog.Logger, stops *stack) (*app, error) {
	handler := newRouter(c, tokens, cfg, files, log)
	if handler.redis != nil {
		stops.push(func() { handler.redis.Close() })
	}
	if handler.apq != nil {
		stops.push(func() { handler.apq.Close() })
	}
	lis, err := pglisten.New(cfg.DatabaseURL, log)
	if err != nil {
		return nil, err
	}
	tokens.Listen(lis, log)
	// The listener sees the database go at once (its heartbeat, every
	// second); the pool's idle connections were likely cut with it.
	lis.Add(pglisten.Part{Lost: func() { database.NoteLost(c) }})
	stopEvents, err := handler.events.start(ctx, lis, log)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	stops.push(stopEvents)
	stops.push(lis.Start(context.WithoutCancel(ctx)))
	return handler, nil
}

// announce logs what serve listens on and prints the playground's
// address, with the demo token when there is one.
func announce(stdout io.Writer, log *slog.Logger, ln net.Listener, loc storage.Location, cfg *config.Config) {
	build := buildinfo.Read()
	log.Info("listening", "addr", ln.Addr().String(), "database", database.Redact(cfg.DatabaseURL), "public_url", cfg.PublicURL, "storage", loc,
		"rate_limits", limiterName(cfg), "trusted_documents", cfg.Trusted.Len(), "trusted_only", cfg.PersistedOnly,
		"version", build.Version, "revision", build.Revision)
	fmt.Fprintf(stdout, "GraphQL playground: %s/playground\n", cfg.PublicURL)
	if t := cfg.DemoToken; t != "" {
		fmt.Fprintf(stdout, "Demo token (Open API), paste it into the playground's headers as\n  {\"Authorization\": \"Bearer %s\"}\nor open %s/playground#token=%s\n", t, cfg.PublicURL, t)
	}
}

// startSidecars serves the runtime profiles (PPROF_ADDR) and /metrics
// (METRICS_ADDR) each on its own listener when its address is set, so
// that they are reachable only where the operator binds them (loopback,
// an admin network) and never through the public address.
func startSidecars(cfg *config.Config, metrics http.Handler, log *slog.Logger, stops *stack) error {
	profiles := http.NewServeMux()
	profiles.HandleFunc("/debug/pprof/", pprof.Index)
	profiles.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	profiles.HandleFunc("/debug/pprof/profile", pprof.Profile)
	profiles.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	profiles.HandleFunc("/debug/pprof/trace", pprof.Trace)
	alone := http.NewServeMux()
	alone.Handle("GET /metrics", metrics)
	for _, side := range []struct {
		name, addr string
		handler    http.Handler
	}{{"pprof", cfg.PprofAddr, profiles}, {"metrics", cfg.MetricsAddr, alone}} {
		if side.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", side.addr)
		if err != nil {
			return fmt.Errorf("listen on %s address %s: %w", side.name, side.addr, err)
		}
		srv := &http.Server{Handler: side.handler, ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		stops.push(func() { srv.Close() })
		log.Info(side.name+" listening", "addr", ln.Addr().String())
	}
	return nil
}

// serveUntil serves handler on ln, with the timeouts of the request
// deadline, until ctx ends; then it stops accepting, lets the requests in
// flight finish within the shutdown grace, and returns nil.
func serveUntil(ctx context.Context, handler http.Handler, ln net.Listener, cfg *config.Config, log *slog.Logger) error {
	read, write, grace := serverTimeouts(cfg.RequestTimeout)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: read, WriteTimeout: write,
		IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// demoSetup loads the demo data into an empty database and returns a
// token of the demo's first configurator for the playground. It reuses the demo's token
// record across restarts instead of creating one per start. A database
// that has data but not the demo's gets no token.
func demoSetup(ctx context.Context, c *ent.Client, tokens *auth.Tokens, log *slog.Logger) (string, error) {
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	owners, err := c.Owner.Query().Count(sys)
	if err != nil {
		return "", fmt.Errorf("count owners: %w", err)
	}
	if owners > 0 {
		if ok, err := demo.Seeded(ctx, c); err != nil || !ok {
			return "", err
		}
	}
	// Seed writes nothing when the demo data is there; it returns its ids.
	sum, err := demo.Seed(ctx, c)
	if err != nil {
		return "", fmt.Errorf("seed demo data: %w", err)
	}
	if sum.Created {
		log.Info("loaded the demo data", "owners", len(sum.Owners), "orders", sum.Orders, "materials", sum.Materials)
	}
	if len(sum.Owners) == 0 || len(sum.Owners[0].Configurators) == 0 {
		return "", nil
	}
	home := sum.Owners[0].Configurators[0]
	rec, err := c.APIToken.Query().
		Where(apitoken.KindEQ(apitoken.KindOpenAPI), apitoken.ConfiguratorID(home), apitoken.RevokedAtIsNil()).
		Order(apitoken.ByID()).First(sys)
	if ent.IsNotFound(err) {
		jwt, _, err := tokens.CreateOpenAPI(ctx, home)
		return jwt, err
	}
	if err != nil {
		return "", fmt.Errorf("find demo token: %w", err)
	}
	return tokens.Mint(rec)
}

// onPort puts port in place of port 0 in raw, a URL made from an --addr
// of port 0 (the kernel chooses the port when serve listens), so that
// the URLs the server gives name the port it listens on.
func onPort(raw, port string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Port() != "0" {
		return raw
	}
	u.Host = net.JoinHostPort(u.Hostname(), port)
	return u.String()
}
