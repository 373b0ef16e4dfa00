package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/apitoken"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/buildinfo"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/demo"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/listen"
	"github.com/configurator/catalogue/internal/logbuf"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/telemetry"
)

// The server's timeouts beside the request deadline (README, "Limits and
// guarantees").
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

func serve(ctx context.Context, args []string, env config.Env, stdout, stderr io.Writer) error {
	var cfg config.Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.ServeFlags(fs, env)
	if err := parse(fs, args); err != nil {
		return err
	}
	// Request lines are written in batches at most 100 ms apart (and at
	// shutdown); every other line at once (internal/logbuf).
	logOut := logbuf.New(stderr, 100*time.Millisecond)
	defer logOut.Close()
	log := slog.New(telemetry.LogHandler(logbuf.Split(
		slog.NewTextHandler(logOut, nil), slog.NewTextHandler(logOut.Direct(), nil),
		func(r slog.Record) bool { return r.Message == requestLine })))
	slog.SetDefault(log)
	tuneGC(env)

	// Tracing starts before the database opens, whose driver it wraps,
	// and stops last, sending the spans still buffered.
	stopTracing, err := telemetry.Setup(ctx, env, buildinfo.Read().Version, log)
	if err != nil {
		return usagef("%v", err)
	}
	defer func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := stopTracing(fctx); err != nil {
			log.Warn("could not send the last spans", "err", err)
		}
	}()

	c, err := openDB(ctx, &cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	signer, err := auth.OpenSigner(ctx, c, cfg.JWTSecret)
	if err != nil {
		return err
	}
	tokens := auth.NewTokens(c, signer)
	lis, err := listen.New(cfg.DatabaseURL, log)
	if err != nil {
		return err
	}
	tokens.Listen(lis, log)
	if cfg.OIDCIssuer != "" {
		// The provider's keys are refreshed in the background until
		// serve returns.
		pctx, stopProvider := context.WithCancel(context.WithoutCancel(ctx))
		defer stopProvider()
		p, err := auth.NewProvider(pctx, auth.ProviderConfig{
			Issuer: cfg.OIDCIssuer, Audience: cfg.OIDCAudience,
			OwnerClaim: cfg.OIDCOwnerClaim, ConfiguratorClaim: cfg.OIDCConfiguratorClaim,
		}, log)
		if err != nil {
			return err
		}
		tokens.SetProvider(p)
		log.Info("accepting the tokens of an OpenID provider", "issuer", cfg.OIDCIssuer, "audience", cfg.OIDCAudience)
	}
	// The token service's background work (the last-use writes) outlives
	// the requests in flight at SIGTERM and stops, writing its last notes,
	// before the database closes.
	tctx, stopTokens := context.WithCancel(context.WithoutCancel(ctx))
	tokensDone := make(chan error, 1)
	go func() { tokensDone <- tokens.Run(tctx, log) }()
	defer func() {
		stopTokens()
		if err := <-tokensDone; err != nil {
			log.Warn("could not write token usage at shutdown", "err", err)
		}
	}()

	// Expired Idempotency-Keys are deleted every hour, until the token
	// service's background work stops.
	sweepDone := make(chan struct{})
	go func() {
		defer close(sweepDone)
		idempotency.Sweeper(tctx, c, idempotency.SweepEvery, log)
	}()
	defer func() { stopTokens(); <-sweepDone }()

	var demoToken string
	if cfg.SeedDemo() {
		if demoToken, err = demoSetup(ctx, c, tokens, log); err != nil {
			return err
		}
		cfg.DemoToken = demoToken
	}

	loc, err := storage.ParseURL(cfg.StorageURL)
	if err != nil {
		return usagef("--storage-url: %v", err)
	}
	store, err := loc.Open(ctx, env)
	if err != nil {
		return fmt.Errorf("file storage: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	_, chosen, _ := net.SplitHostPort(ln.Addr().String())
	cfg.PublicURL, cfg.ViewerURL = onPort(cfg.PublicURL, chosen), onPort(cfg.ViewerURL, chosen)
	files := &storage.Files{Store: store, BaseURL: cfg.PublicURL + "/files/", MaxBytes: cfg.MaxUploadBytes}
	readTimeout, writeTimeout, shutdownGrace := serverTimeouts(cfg.RequestTimeout)
	handler := newRouter(c, tokens, &cfg, files, log)
	if handler.redis != nil {
		defer handler.redis.Close()
	}
	if handler.apq != nil {
		defer handler.apq.Close()
	}
	stopEvents, err := handler.events.start(ctx, lis, log)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	defer stopEvents()
	// Every part that listens is added: listen until serve returns.
	defer lis.Start(context.WithoutCancel(ctx))()
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	build := buildinfo.Read()
	log.Info("listening", "addr", ln.Addr().String(), "database", database.Redact(cfg.DatabaseURL), "public_url", cfg.PublicURL, "storage", loc,
		"rate_limits", limiterName(&cfg), "trusted_documents", cfg.Trusted.Len(), "trusted_only", cfg.PersistedOnly,
		"version", build.Version, "revision", build.Revision)
	fmt.Fprintf(stdout, "GraphQL playground: %s/playground\n", cfg.PublicURL)
	if demoToken != "" {
		fmt.Fprintf(stdout, "Demo token (Open API), paste it into the playground's headers as\n  {\"Authorization\": \"Bearer %s\"}\nor open %s/playground#token=%s\n", demoToken, cfg.PublicURL, demoToken)
	}

	if cfg.PprofAddr != "" {
		stopPprof, err := servePprof(cfg.PprofAddr, log)
		if err != nil {
			return err
		}
		defer stopPprof()
	}
	if cfg.MetricsAddr != "" {
		stopMetrics, err := serveMetrics(cfg.MetricsAddr, handler.metrics.Handler(), log)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Stop accepting, let in-flight requests finish, then exit 0.
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
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

// servePprof serves the runtime profiles on their own listener, so that
// they are reachable only where the operator binds them (loopback, an
// admin network) and never through the public address.
func servePprof(addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on pprof address %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	log.Info("pprof listening", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}

// serveMetrics serves /metrics alone on its own listener (METRICS_ADDR),
// for deployments that keep it off the public address.
func serveMetrics(addr string, metrics http.Handler, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on metrics address %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	log.Info("metrics listening", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
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
