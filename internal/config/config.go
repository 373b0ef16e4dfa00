// Package config reads the operator's settings from flags and environment
// variables; a flag wins over its variable, which wins over the default.
package config

import (
	"cmp"
	"flag"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/persisted"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/webhook"
)

// Defaults of the settings.
const (
	DefaultAddr        = ":8080"
	DefaultDatabaseURL = "sqlite://./data/configurator.db"
	// SharePath is where serve shows share links when no front-end is
	// configured (VIEWER_URL).
	SharePath = "/share/"
	// DefaultRequestTimeout is the deadline of one request: long enough
	// for the largest upload over a modest link and any sane query,
	// short enough that a client waiting on a sick database hears 503
	// in time to retry, and the same as the common 30 s of load
	// balancers and gateways in front of the service.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultStatementTimeout bounds one PostgreSQL statement, well
	// inside the request's deadline, so that a runaway statement is
	// cancelled by the server itself and its connection is free again.
	DefaultStatementTimeout = 10 * time.Second
)

// Config is the whole configuration of the binary.
type Config struct {
	// Addr is the listen address of serve (ADDR).
	Addr string
	// DatabaseURL is postgres://... or sqlite://PATH (DATABASE_URL).
	DatabaseURL string
	// PublicURL is the base of absolute URLs the service returns
	// (PUBLIC_URL); derived from Addr when empty.
	PublicURL string
	// JWTSecret overrides the signing key kept in the database (JWT_SECRET).
	JWTSecret string
	// StorageURL is where uploaded files are kept (STORAGE_URL):
	// file://PATH or s3://BUCKET?endpoint=URL&region=REGION. Validate
	// fills it from UploadDir, or the default, when it is not given.
	StorageURL string
	// UploadDir is the older way to name a directory (UPLOAD_DIR), kept
	// as an alias of STORAGE_URL=file://UPLOAD_DIR.
	UploadDir string
	// MaxUploadBytes limits one uploaded file (MAX_UPLOAD_BYTES).
	MaxUploadBytes int64
	// ViewerURL starts every share link; the snapshot key is appended to it
	// (VIEWER_URL). It is the platform's configurator front-end, for
	// example https://shop.example.com/configurator?share=; by default
	// the page serve shows at PublicURL + SharePath.
	ViewerURL string
	// Demo is auto, true or false (DEMO): whether serve loads the demo data
	// into an empty database. auto means only on SQLite, never on
	// PostgreSQL, so a production database is never seeded by accident.
	Demo string
	// GraphQLIntrospection is token or public (GRAPHQL_INTROSPECTION):
	// whether introspecting the GraphQL schema needs a valid token, as
	// every read does, or is open to anyone.
	GraphQLIntrospection string
	// PprofAddr, when set, serves net/http/pprof on its own listener
	// (PPROF_ADDR), never on the public one, so profiles can be taken
	// from a running service without exposing them to clients.
	PprofAddr string
	// RateLimit is each token's budget in cost units per minute, shared by
	// REST and GraphQL (RATE_LIMIT_PER_MINUTE); 0 turns rate limiting off.
	RateLimit int64
	// SubscriptionsPerConnection caps the operations one WebSocket may
	// have open at once (SUBSCRIPTIONS_PER_CONNECTION), and StreamsPerToken
	// the streams (WebSocket subscriptions and SSE requests) one token may
	// have open on one server (STREAMS_PER_TOKEN), so that a token cannot
	// make a server hold unbounded subscribers.
	SubscriptionsPerConnection int
	StreamsPerToken            int
	// ActiveRequests is how many requests are worked on at once
	// (ACTIVE_REQUESTS); the others wait their turn in arrival order,
	// which keeps a saturated server's slowest answers near its median
	// (edge.Admit). 0 is the default, twice the CPUs Go uses.
	ActiveRequests int
	// RedisURL, when set, keeps the rate-limit budgets and the APQ
	// documents in Redis (REDIS_URL), so that every replica charges the
	// same budget of a token and serves a document registered with
	// another; unset, each process keeps its own in memory.
	RedisURL string
	// RequestTimeout is the deadline of every request (REQUEST_TIMEOUT):
	// when it passes, database work stops and the request is answered
	// 503 with Retry-After. The server's read and write timeouts follow
	// from it. Zero means no deadline.
	RequestTimeout time.Duration
	// StatementTimeout is PostgreSQL's statement_timeout on the service's
	// connections (DB_STATEMENT_TIMEOUT); zero leaves the server's own.
	StatementTimeout time.Duration
	// MetricsAddr, when set, serves /metrics on its own listener
	// (METRICS_ADDR) instead of the public address, for deployments that
	// keep the service's internals off the public network.
	MetricsAddr string
	// WebhookAllowPrivate lets webhook endpoints use plain http and
	// loopback or private addresses (WEBHOOK_ALLOW_PRIVATE=true), for
	// local development and tests; by default both are refused (SSRF).
	WebhookAllowPrivate bool
	// WebhookRetry is the wait before each retry of a failed webhook
	// delivery (WEBHOOK_RETRY_SCHEDULE, such as 1s,2s,5s), checked by
	// Validate; WebhookSchedule reads it. Empty: webhook.DefaultSchedule.
	WebhookRetry string
	// WebhookMaxEndpoints is how many webhook endpoints one owner may keep
	// (WEBHOOK_MAX_ENDPOINTS), since each multiplies every event into
	// another outgoing POST; Validate fills in webhook.DefaultMaxEndpoints
	// for zero.
	WebhookMaxEndpoints int64
	// PersistedDocuments is the path of a manifest of trusted GraphQL
	// documents (PERSISTED_DOCUMENTS), in graphql-codegen's
	// persisted-documents format, which clients may name by their
	// SHA-256 instead of sending them; Validate loads it into Trusted, so
	// that a bad manifest stops the server at start.
	PersistedDocuments string
	// PersistedOnly accepts only the documents of the manifest, except
	// from dashboard tokens (PERSISTED_ONLY=true), as public GraphQL
	// endpoints keep arbitrary documents out; it needs
	// PersistedDocuments.
	PersistedOnly bool
	// EventRetention, DeliveryRetention and RetentionEvery say how long
	// events and ended webhook deliveries are kept and how often the
	// leader removes the older ones (EVENT_RETENTION,
	// WEBHOOK_DELIVERY_RETENTION, RETENTION_EVERY; webhook.Retention), so
	// that neither table grows without bound.
	EventRetention, DeliveryRetention, RetentionEvery time.Duration
	// JobRetention is how long the webhook queue keeps a finished job
	// (JOB_RETENTION; webhook.Retention.Jobs), so that River's table too
	// reaches a plateau under writes.
	JobRetention time.Duration
	// IdempotencyTTL is how long an order's Idempotency-Key is remembered
	// (IDEMPOTENCY_TTL; idempotency.TTL by default): a retry inside it
	// replays, the retention removes the key after it.
	IdempotencyTTL time.Duration
	// Trusted holds the documents of PersistedDocuments once Validate
	// has read and checked them; nil without a manifest.
	Trusted *persisted.Manifest

	// OIDCIssuer, when set, makes the service accept the access tokens of
	// this OpenID provider beside its own (OIDC_ISSUER); OIDCAudience is
	// the aud they must carry (OIDC_AUDIENCE), and the claim names say
	// where the owner and an Open API caller's configurator are
	// (OIDC_OWNER_CLAIM, OIDC_CONFIGURATOR_CLAIM).
	OIDCIssuer, OIDCAudience              string
	OIDCOwnerClaim, OIDCConfiguratorClaim string

	// serving says that the flags of serve were registered (ServeFlags):
	// the other commands have no retention to check.
	serving bool

	// badEnv says which variable has a value its flag cannot take, for
	// Validate to report.
	badEnv string

	// DemoToken is no setting: serve fills it with the token it minted for
	// the demo data (empty without), which the playground pre-fills on a
	// local run (playground.DemoToken).
	DemoToken string
}

// WebhookSchedule is the retry schedule WebhookRetry names (nil: the
// default); Validate has checked it.
func (c *Config) WebhookSchedule() []time.Duration {
	sched, _ := webhook.ParseSchedule(c.WebhookRetry) // nil for "", the only value it refuses after Validate
	return sched
}

// Env looks up an environment variable; os.Getenv in production.
type Env func(string) string

// DatabaseFlags registers --database-url on fs and presets every flag of
// fs from the environment.
func (c *Config) DatabaseFlags(fs *flag.FlagSet, env Env) {
	fs.StringVar(&c.DatabaseURL, "database-url", DefaultDatabaseURL, "database: postgres://... or sqlite://PATH (env DATABASE_URL)")
	c.JWTSecret = env("JWT_SECRET")
	c.fromEnv(fs, env)
}

// ServeFlags registers the flags of serve on fs, database flags included,
// preset from the environment.
func (c *Config) ServeFlags(fs *flag.FlagSet, env Env) {
	c.serveFlags(fs)
	c.DatabaseFlags(fs, env)
}

func (c *Config) serveFlags(fs *flag.FlagSet) {
	c.serving = true
	fs.StringVar(&c.Addr, "addr", DefaultAddr, "listen address (env ADDR)")
	fs.StringVar(&c.PublicURL, "public-url", "",
		"base of absolute URLs, e.g. https://api.example.com (env PUBLIC_URL; default http://localhost:PORT)")
	fs.StringVar(&c.StorageURL, "storage-url", "",
		"where uploaded images are kept: file://PATH or s3://BUCKET?endpoint=URL&region=REGION (env STORAGE_URL; default "+storage.DefaultURL+")")
	fs.StringVar(&c.UploadDir, "upload-dir", "", "alias of --storage-url file://DIR (env UPLOAD_DIR)")
	fs.Int64Var(&c.MaxUploadBytes, "max-upload-bytes", storage.DefaultMaxBytes, "largest accepted image file in bytes (env MAX_UPLOAD_BYTES)")
	fs.StringVar(&c.ViewerURL, "viewer-url", "",
		"start of share links, the key is appended (env VIEWER_URL; default PUBLIC_URL"+SharePath+")")
	fs.StringVar(&c.Demo, "demo", "auto", "load demo data into an empty database: auto (SQLite only), true or false (env DEMO)")
	fs.StringVar(&c.GraphQLIntrospection, "graphql-introspection", "token",
		"who may introspect the GraphQL schema: token (a valid token is needed) or public (env GRAPHQL_INTROSPECTION)")
	fs.StringVar(&c.PprofAddr, "pprof-addr", "", "serve net/http/pprof on this address, e.g. 127.0.0.1:6060 (env PPROF_ADDR; default off)")
	fs.Int64Var(&c.RateLimit, "rate-limit-per-minute", DefaultRateLimit,
		"each token's budget in cost units a minute, REST and GraphQL together; 0 turns it off (env RATE_LIMIT_PER_MINUTE)")
	fs.IntVar(&c.SubscriptionsPerConnection, "subscriptions-per-connection", DefaultSubscriptionsPerConnection,
		"operations one WebSocket may have open at once (env SUBSCRIPTIONS_PER_CONNECTION)")
	fs.IntVar(&c.StreamsPerToken, "streams-per-token", DefaultStreamsPerToken,
		"subscriptions (WebSocket and SSE) one token may have open on this server at once (env STREAMS_PER_TOKEN)")
	fs.IntVar(&c.ActiveRequests, "active-requests", 0,
		"requests worked on at once, the others wait in arrival order (env ACTIVE_REQUESTS; default twice the CPUs)")
	fs.StringVar(&c.RedisURL, "redis-url", "",
		"keep the rate-limit budgets and persisted queries (APQ) in this Redis, shared by every replica: redis://[:PASSWORD@]HOST:PORT[/DB] (env REDIS_URL; default: in memory)")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", DefaultRequestTimeout, "deadline of one request, answered 503 when it passes (env REQUEST_TIMEOUT)")
	fs.DurationVar(&c.StatementTimeout, "db-statement-timeout", DefaultStatementTimeout,
		"PostgreSQL statement_timeout of the service's connections, 0 leaves the server's (env DB_STATEMENT_TIMEOUT)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "", "serve /metrics on this address only, e.g. :9090 (env METRICS_ADDR; default: on the public address)")
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", false,
		"let webhook endpoints be plain http and loopback or private addresses, for development (env WEBHOOK_ALLOW_PRIVATE=true)")
	fs.StringVar(&c.WebhookRetry, "webhook-retry-schedule", "",
		"waits before the retries of a failed webhook delivery (env WEBHOOK_RETRY_SCHEDULE; default 5s,5m,30m,2h,5h,10h,10h)")
	fs.Int64Var(&c.WebhookMaxEndpoints, "webhook-max-endpoints", webhook.DefaultMaxEndpoints,
		"how many webhook endpoints one owner may keep (env WEBHOOK_MAX_ENDPOINTS)")
	fs.DurationVar(&c.EventRetention, "event-retention", webhook.DefaultRetention.Events,
		"how long an event is kept once no webhook delivery names it, e.g. 720h (env EVENT_RETENTION)")
	fs.DurationVar(&c.DeliveryRetention, "webhook-delivery-retention", webhook.DefaultRetention.Deliveries,
		"how long a webhook delivery that ended is kept, as far back as the deliveries API reaches, e.g. 720h (env WEBHOOK_DELIVERY_RETENTION)")
	fs.DurationVar(&c.RetentionEvery, "retention-every", webhook.DefaultRetention.Every,
		"how often the leader removes the events, deliveries and idempotency keys past their retention (env RETENTION_EVERY)")
	fs.DurationVar(&c.JobRetention, "job-retention", webhook.DefaultRetention.Jobs,
		"how long the webhook queue keeps a finished (completed or discarded) job, e.g. 1h (env JOB_RETENTION)")
	fs.DurationVar(&c.IdempotencyTTL, "idempotency-ttl", idempotency.TTL,
		"how long an order's Idempotency-Key is remembered: a retry inside it gets the first answer (env IDEMPOTENCY_TTL)")
	fs.StringVar(&c.PersistedDocuments, "persisted-documents", "",
		"manifest of trusted GraphQL documents, {\"<sha256>\": \"<document>\"} as graphql-codegen's client preset writes it (env PERSISTED_DOCUMENTS)")
	fs.BoolVar(&c.PersistedOnly, "persisted-only", false, "accept only the manifest's documents, except from dashboard tokens (env PERSISTED_ONLY=true)")
	fs.StringVar(&c.OIDCIssuer, "oidc-issuer", "",
		"accept the access tokens of this OpenID provider, e.g. https://id.example.com/realms/shop (env OIDC_ISSUER; default: own tokens only)")
	fs.StringVar(&c.OIDCAudience, "oidc-audience", "", "the aud the provider's tokens must carry (env OIDC_AUDIENCE; required with --oidc-issuer)")
	fs.StringVar(&c.OIDCOwnerClaim, "oidc-owner-claim", "", "claim of a provider token holding the owner id (env OIDC_OWNER_CLAIM; default owner_id)")
	fs.StringVar(&c.OIDCConfiguratorClaim, "oidc-configurator-claim", "",
		"claim of an Open API provider token holding its configurator id (env OIDC_CONFIGURATOR_CLAIM; default configurator_id)")
}

// fromEnv presets every flag of fs from its variable, the flag's name in
// upper case with underscores (--max-upload-bytes: MAX_UPLOAD_BYTES), so
// that a flag given on the command line wins over its variable, which
// wins over the flag's default. A value that does not parse (such as
// PERSISTED_ONLY=yes, a security setting that must not be read as false
// in silence) is noted for Validate to report.
func (c *Config) fromEnv(fs *flag.FlagSet, env Env) {
	fs.VisitAll(func(f *flag.Flag) {
		name := strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := env(name); v != "" && f.Value.Set(v) != nil && c.badEnv == "" {
			want := "a whole number"
			switch f.Value.(flag.Getter).Get().(type) {
			case bool:
				want = "true or false"
			case time.Duration:
				want = "a duration such as 30s, 0 or more"
			}
			c.badEnv = fmt.Sprintf("%s must be %s, not %q", name, want, v)
		}
	})
}

// Validate checks the values, then fills in the ones that derive from
// others and loads the manifest of trusted documents, so that a bad
// setting stops the server at start.
func (c *Config) Validate() error {
	if err := c.check(); err != nil {
		return err
	}
	c.fillDefaults()
	return c.loadTrusted()
}

// check reports the first value that is not allowed, naming its flag.
func (c *Config) check() error {
	for _, err := range []error{
		errIf(c.badEnv != "", "%s", c.badEnv),
		errIf(!strings.HasPrefix(c.DatabaseURL, "sqlite://") && !strings.HasPrefix(c.DatabaseURL, "postgres://") &&
			!strings.HasPrefix(c.DatabaseURL, "postgresql://"), "--database-url must start with postgres:// or sqlite://"),
		errIf(!slices.Contains([]string{"", "auto", "true", "false"}, c.Demo), "--demo must be auto, true or false, not %q", c.Demo),
		errIf(!slices.Contains([]string{"", "token", "public"}, c.GraphQLIntrospection),
			"--graphql-introspection must be token or public, not %q", c.GraphQLIntrospection),
		hostPort("--addr", c.Addr), hostPort("--pprof-addr", c.PprofAddr), hostPort("--metrics-addr", c.MetricsAddr),
		absoluteURL("--public-url", c.PublicURL), absoluteURL("--viewer-url", c.ViewerURL),
		errIf(c.StorageURL != "" && c.UploadDir != "",
			"--storage-url (STORAGE_URL) and --upload-dir (UPLOAD_DIR) name the same setting: give only --storage-url"),
		errIf(c.StorageURL != "" && !strings.HasPrefix(c.StorageURL, "file://") && !strings.HasPrefix(c.StorageURL, "s3://"),
			"--storage-url %q must start with file:// or s3://", c.StorageURL),
		ifSet("--oidc-issuer", c.OIDCIssuer, auth.CheckIssuer),
		errIf(c.OIDCIssuer != "" && c.OIDCAudience == "",
			"--oidc-issuer needs --oidc-audience (OIDC_AUDIENCE): the aud its tokens must carry for this service"),
		errIf(c.OIDCIssuer == "" && c.OIDCAudience != "", "--oidc-audience needs --oidc-issuer (OIDC_ISSUER)"),
		errIf(c.MaxUploadBytes < 0, "--max-upload-bytes must be positive, got %d", c.MaxUploadBytes),
		errIf(c.RateLimit < 0, "--rate-limit-per-minute must be 0 (off) or more, got %d", c.RateLimit),
		errIf(c.SubscriptionsPerConnection < 0, "--subscriptions-per-connection must be 1 or more (0: the default, %d), got %d",
			DefaultSubscriptionsPerConnection, c.SubscriptionsPerConnection),
		errIf(c.StreamsPerToken < 0, "--streams-per-token must be 1 or more (0: the default, %d), got %d", DefaultStreamsPerToken, c.StreamsPerToken),
		errIf(c.ActiveRequests < 0, "--active-requests must be 1 or more (0: twice the CPUs), got %d", c.ActiveRequests),
		ifSet("--redis-url", c.RedisURL, func(v string) error { _, err := ratelimit.RedisOptions(v); return err }),
		errIf(c.RequestTimeout < 0, "--request-timeout must be a duration such as 30s, 0 or more"),
		errIf(c.StatementTimeout < 0, "--db-statement-timeout must be a duration such as 10s, 0 or more"),
		ifSet("--webhook-retry-schedule", c.WebhookRetry, func(v string) error { _, err := webhook.ParseSchedule(v); return err }),
		errIf(c.WebhookMaxEndpoints < 0, "--webhook-max-endpoints (WEBHOOK_MAX_ENDPOINTS) must be a whole number, 1 or more, got %d", c.WebhookMaxEndpoints),
		positive(c.serving, "--event-retention", c.EventRetention),
		positive(c.serving, "--webhook-delivery-retention", c.DeliveryRetention),
		positive(c.serving, "--retention-every", c.RetentionEvery),
		positive(c.serving, "--job-retention", c.JobRetention),
		positive(c.serving, "--idempotency-ttl", c.IdempotencyTTL),
		errIf(c.PersistedOnly && c.PersistedDocuments == "",
			"--persisted-only (PERSISTED_ONLY) needs --persisted-documents (PERSISTED_DOCUMENTS), the manifest of the documents it accepts"),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// fillDefaults fills in the values derived from others, and the defaults
// of the settings where 0 or empty means "the default". check has
// accepted the values, so the derived ones are valid too.
func (c *Config) fillDefaults() {
	if c.PublicURL == "" && c.Addr != "" {
		host, port, _ := net.SplitHostPort(c.Addr)
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "localhost"
		}
		c.PublicURL = "http://" + net.JoinHostPort(host, port)
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if c.ViewerURL == "" && c.PublicURL != "" {
		c.ViewerURL = c.PublicURL + SharePath
	}
	switch {
	case c.UploadDir != "":
		c.StorageURL = "file://" + c.UploadDir
	case c.StorageURL == "":
		c.StorageURL = storage.DefaultURL
	}
	c.MaxUploadBytes = cmp.Or(c.MaxUploadBytes, storage.DefaultMaxBytes)
	c.WebhookMaxEndpoints = cmp.Or(c.WebhookMaxEndpoints, webhook.DefaultMaxEndpoints)
}

// loadTrusted reads and checks the manifest of PersistedDocuments into
// Trusted, once.
func (c *Config) loadTrusted() error {
	if c.PersistedDocuments == "" || c.Trusted != nil {
		return nil
	}
	m, err := persisted.LoadManifest(c.PersistedDocuments)
	if err != nil {
		return fmt.Errorf("--persisted-documents %s: %v", c.PersistedDocuments, err)
	}
	c.Trusted = m
	return nil
}

// errIf is the error of format when bad holds.
func errIf(bad bool, format string, args ...any) error {
	if !bad {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// ifSet checks v, when it is set, with ok, naming flag in the error.
func ifSet(flag, v string, ok func(string) error) error {
	if v == "" {
		return nil
	}
	if err := ok(v); err != nil {
		return fmt.Errorf("%s: %v", flag, err)
	}
	return nil
}

// positive checks that the duration d of flag is more than 0, when the
// flag is one of the command's (registered).
func positive(registered bool, flag string, d time.Duration) error {
	return errIf(registered && d <= 0, "%s must be a duration such as 720h or 30s, more than 0, got %s", flag, d)
}

// Retention is the retention the settings name (webhook.Retention).
func (c *Config) Retention() webhook.Retention {
	return webhook.Retention{Events: c.EventRetention, Deliveries: c.DeliveryRetention, Every: c.RetentionEvery, Jobs: c.JobRetention}
}

// hostPort checks that v, when set, is a listen address such as :8080.
func hostPort(flag, v string) error {
	return ifSet(flag+" "+strconv.Quote(v), v, func(v string) error { _, _, err := net.SplitHostPort(v); return err })
}

// absoluteURL checks that v, when set, is an absolute http(s) URL.
func absoluteURL(flag, v string) error {
	u, err := url.Parse(v)
	return errIf(v != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == ""),
		"%s %q must be an absolute http(s) URL", flag, v)
}

// The default stream caps (see Config.SubscriptionsPerConnection): a
// front-end holds a handful of subscriptions on one socket, and a token a
// few sockets or SSE streams (browser tabs).
const (
	DefaultSubscriptionsPerConnection = 100
	DefaultStreamsPerToken            = 20
)

// DefaultRateLimit is each token's default budget: 1,200,000 units a
// minute, 20,000 a second. A unit is about one page of data (a REST read,
// a GraphQL operation of up to 1,000 complexity points; see
// internal/ratelimit), and one replica on one core serves about 10,000
// such reads a second, so one integrator using a replica fully is never
// throttled, while a token cannot take more than about two replicas' worth
// of a fleet, nor pay for expensive requests (per_page=-1, deep GraphQL
// selections) with the price of cheap ones.
const DefaultRateLimit = 1_200_000

// PublicIntrospection reports whether anyone may introspect the GraphQL
// schema, without a token.
func (c *Config) PublicIntrospection() bool { return c.GraphQLIntrospection == "public" }

// SeedDemo reports whether serve should load the demo data into an empty
// database.
func (c *Config) SeedDemo() bool {
	switch c.Demo {
	case "true":
		return true
	case "false":
		return false
	}
	return strings.HasPrefix(c.DatabaseURL, "sqlite://")
}
