// Package config reads the operator's settings from flags and environment
// variables; a flag wins over its variable, which wins over the default.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/persisted"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/webhook"
)

// Defaults of the settings.
const (
	DefaultAddr        = ":8080"
	DefaultDatabaseURL = "sqlite://./data/configurator.db"
	// DefaultStorageURL keeps uploads in a directory beside the default
	// SQLite database.
	DefaultStorageURL = "file://./data/uploads"
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

	// badBool names a boolean variable whose value is not one, for
	// Validate to report.
	badBool string

	// DemoToken is no setting: serve fills it with the token it minted for
	// the demo data (empty without), which the playground pre-fills on a
	// local run (playground.DemoToken).
	DemoToken string
}

// WebhookSchedule is the retry schedule WebhookRetry names (nil: the
// default); Validate has checked it.
func (c *Config) WebhookSchedule() []time.Duration {
	sched, _ := webhook.ParseSchedule(c.WebhookRetry)
	if c.WebhookRetry == "" {
		return nil
	}
	return sched
}

// Env looks up an environment variable; os.Getenv in production.
type Env func(string) string

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// DatabaseFlags registers --database-url on fs.
func (c *Config) DatabaseFlags(fs *flag.FlagSet, env Env) {
	fs.StringVar(&c.DatabaseURL, "database-url", or(env("DATABASE_URL"), DefaultDatabaseURL),
		"database: postgres://... or sqlite://PATH (env DATABASE_URL)")
	c.JWTSecret = env("JWT_SECRET")
}

// ServeFlags registers the flags of serve on fs, database flags included.
func (c *Config) ServeFlags(fs *flag.FlagSet, env Env) {
	c.DatabaseFlags(fs, env)
	fs.StringVar(&c.Addr, "addr", or(env("ADDR"), DefaultAddr), "listen address (env ADDR)")
	fs.StringVar(&c.PublicURL, "public-url", env("PUBLIC_URL"),
		"base of absolute URLs, e.g. https://api.example.com (env PUBLIC_URL; default http://localhost:PORT)")
	fs.StringVar(&c.StorageURL, "storage-url", env("STORAGE_URL"),
		"where uploaded images are kept: file://PATH or s3://BUCKET?endpoint=URL&region=REGION (env STORAGE_URL; default "+DefaultStorageURL+")")
	fs.StringVar(&c.UploadDir, "upload-dir", env("UPLOAD_DIR"),
		"alias of --storage-url file://DIR (env UPLOAD_DIR)")
	fs.Int64Var(&c.MaxUploadBytes, "max-upload-bytes", envInt(env, "MAX_UPLOAD_BYTES", DefaultMaxUploadBytes),
		"largest accepted image file in bytes (env MAX_UPLOAD_BYTES)")
	fs.StringVar(&c.ViewerURL, "viewer-url", env("VIEWER_URL"),
		"start of share links, the key is appended (env VIEWER_URL; default PUBLIC_URL"+SharePath+")")
	fs.StringVar(&c.Demo, "demo", or(env("DEMO"), "auto"),
		"load demo data into an empty database: auto (SQLite only), true or false (env DEMO)")
	fs.StringVar(&c.GraphQLIntrospection, "graphql-introspection", or(env("GRAPHQL_INTROSPECTION"), "token"),
		"who may introspect the GraphQL schema: token (a valid token is needed) or public (env GRAPHQL_INTROSPECTION)")
	fs.StringVar(&c.PprofAddr, "pprof-addr", env("PPROF_ADDR"),
		"serve net/http/pprof on this address, e.g. 127.0.0.1:6060 (env PPROF_ADDR; default off)")
	fs.Int64Var(&c.RateLimit, "rate-limit-per-minute", envInt(env, "RATE_LIMIT_PER_MINUTE", DefaultRateLimit),
		"each token's budget in cost units a minute, REST and GraphQL together; 0 turns it off (env RATE_LIMIT_PER_MINUTE)")
	fs.IntVar(&c.SubscriptionsPerConnection, "subscriptions-per-connection", int(envInt(env, "SUBSCRIPTIONS_PER_CONNECTION", DefaultSubscriptionsPerConnection)),
		"operations one WebSocket may have open at once (env SUBSCRIPTIONS_PER_CONNECTION)")
	fs.IntVar(&c.StreamsPerToken, "streams-per-token", int(envInt(env, "STREAMS_PER_TOKEN", DefaultStreamsPerToken)),
		"subscriptions (WebSocket and SSE) one token may have open on this server at once (env STREAMS_PER_TOKEN)")
	fs.StringVar(&c.RedisURL, "redis-url", env("REDIS_URL"),
		"keep the rate-limit budgets and persisted queries (APQ) in this Redis, shared by every replica: redis://[:PASSWORD@]HOST:PORT[/DB] (env REDIS_URL; default: in memory)")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", envDuration(env, "REQUEST_TIMEOUT", DefaultRequestTimeout),
		"deadline of one request, answered 503 when it passes (env REQUEST_TIMEOUT)")
	fs.DurationVar(&c.StatementTimeout, "db-statement-timeout", envDuration(env, "DB_STATEMENT_TIMEOUT", DefaultStatementTimeout),
		"PostgreSQL statement_timeout of the service's connections, 0 leaves the server's (env DB_STATEMENT_TIMEOUT)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", env("METRICS_ADDR"),
		"serve /metrics on this address only, e.g. :9090 (env METRICS_ADDR; default: on the public address)")
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", env("WEBHOOK_ALLOW_PRIVATE") == "true",
		"let webhook endpoints be plain http and loopback or private addresses, for development (env WEBHOOK_ALLOW_PRIVATE=true)")
	fs.StringVar(&c.WebhookRetry, "webhook-retry-schedule", env("WEBHOOK_RETRY_SCHEDULE"),
		"waits before the retries of a failed webhook delivery (env WEBHOOK_RETRY_SCHEDULE; default 5s,5m,30m,2h,5h,10h,10h)")
	fs.Int64Var(&c.WebhookMaxEndpoints, "webhook-max-endpoints", envInt(env, "WEBHOOK_MAX_ENDPOINTS", webhook.DefaultMaxEndpoints),
		"how many webhook endpoints one owner may keep (env WEBHOOK_MAX_ENDPOINTS)")
	fs.StringVar(&c.PersistedDocuments, "persisted-documents", env("PERSISTED_DOCUMENTS"),
		"manifest of trusted GraphQL documents, {\"<sha256>\": \"<document>\"} as graphql-codegen's client preset writes it (env PERSISTED_DOCUMENTS)")
	fs.BoolVar(&c.PersistedOnly, "persisted-only", c.envBool(env, "PERSISTED_ONLY"),
		"accept only the manifest's documents, except from dashboard tokens (env PERSISTED_ONLY=true)")
	fs.StringVar(&c.OIDCIssuer, "oidc-issuer", env("OIDC_ISSUER"),
		"accept the access tokens of this OpenID provider, e.g. https://id.example.com/realms/shop (env OIDC_ISSUER; default: own tokens only)")
	fs.StringVar(&c.OIDCAudience, "oidc-audience", env("OIDC_AUDIENCE"),
		"the aud the provider's tokens must carry (env OIDC_AUDIENCE; required with --oidc-issuer)")
	fs.StringVar(&c.OIDCOwnerClaim, "oidc-owner-claim", env("OIDC_OWNER_CLAIM"),
		"claim of a provider token holding the owner id (env OIDC_OWNER_CLAIM; default owner_id)")
	fs.StringVar(&c.OIDCConfiguratorClaim, "oidc-configurator-claim", env("OIDC_CONFIGURATOR_CLAIM"),
		"claim of an Open API provider token holding its configurator id (env OIDC_CONFIGURATOR_CLAIM; default configurator_id)")
}

// envBool reads a boolean variable as the flag package reads a boolean
// flag (true, false, 1, 0, ...); a security setting such as
// PERSISTED_ONLY=yes must not be read as false in silence, so another
// value is noted for Validate to report.
func (c *Config) envBool(env Env, name string) bool {
	v := env(name)
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		c.badBool = fmt.Sprintf("%s must be true or false, not %q", name, v)
	}
	return b
}

// Validate checks the values and fills in the derived ones.
func (c *Config) Validate() error {
	if !strings.HasPrefix(c.DatabaseURL, "sqlite://") && !strings.HasPrefix(c.DatabaseURL, "postgres://") &&
		!strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		return fmt.Errorf("--database-url must start with postgres:// or sqlite://")
	}
	switch c.Demo {
	case "", "auto", "true", "false":
	default:
		return fmt.Errorf("--demo must be auto, true or false, not %q", c.Demo)
	}
	switch c.GraphQLIntrospection {
	case "", "token", "public":
	default:
		return fmt.Errorf("--graphql-introspection must be token or public, not %q", c.GraphQLIntrospection)
	}
	if c.Addr != "" {
		if _, _, err := net.SplitHostPort(c.Addr); err != nil {
			return fmt.Errorf("--addr %q: %v", c.Addr, err)
		}
	}
	if c.PprofAddr != "" {
		if _, _, err := net.SplitHostPort(c.PprofAddr); err != nil {
			return fmt.Errorf("--pprof-addr %q: %v", c.PprofAddr, err)
		}
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %q: %v", c.MetricsAddr, err)
		}
	}
	if c.PublicURL == "" && c.Addr != "" {
		host, port, _ := net.SplitHostPort(c.Addr)
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "localhost"
		}
		c.PublicURL = "http://" + net.JoinHostPort(host, port)
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--public-url %q must be an absolute http(s) URL", c.PublicURL)
		}
		c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	}
	if c.ViewerURL == "" && c.PublicURL != "" {
		c.ViewerURL = c.PublicURL + SharePath
	}
	if c.ViewerURL != "" {
		u, err := url.Parse(c.ViewerURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--viewer-url %q must be an absolute http(s) URL", c.ViewerURL)
		}
	}
	switch {
	case c.StorageURL != "" && c.UploadDir != "":
		return fmt.Errorf("--storage-url (STORAGE_URL) and --upload-dir (UPLOAD_DIR) name the same setting: give only --storage-url")
	case c.UploadDir != "":
		c.StorageURL = "file://" + c.UploadDir
	case c.StorageURL == "":
		c.StorageURL = DefaultStorageURL
	}
	if !strings.HasPrefix(c.StorageURL, "file://") && !strings.HasPrefix(c.StorageURL, "s3://") {
		return fmt.Errorf("--storage-url %q must start with file:// or s3://", c.StorageURL)
	}
	if c.OIDCIssuer != "" {
		if err := auth.CheckIssuer(c.OIDCIssuer); err != nil {
			return fmt.Errorf("--oidc-issuer: %v", err)
		}
		if c.OIDCAudience == "" {
			return fmt.Errorf("--oidc-issuer needs --oidc-audience (OIDC_AUDIENCE): the aud its tokens must carry for this service")
		}
	} else if c.OIDCAudience != "" {
		return fmt.Errorf("--oidc-audience needs --oidc-issuer (OIDC_ISSUER)")
	}
	if c.MaxUploadBytes < 0 {
		return fmt.Errorf("--max-upload-bytes must be positive, got %d", c.MaxUploadBytes)
	}
	if c.RateLimit < 0 {
		return fmt.Errorf("--rate-limit-per-minute must be 0 (off) or more, got %d", c.RateLimit)
	}
	if c.SubscriptionsPerConnection < 0 {
		return fmt.Errorf("--subscriptions-per-connection must be 1 or more (0: the default, %d), got %d", DefaultSubscriptionsPerConnection, c.SubscriptionsPerConnection)
	}
	if c.StreamsPerToken < 0 {
		return fmt.Errorf("--streams-per-token must be 1 or more (0: the default, %d), got %d", DefaultStreamsPerToken, c.StreamsPerToken)
	}
	if c.RedisURL != "" {
		if _, err := ratelimit.RedisOptions(c.RedisURL); err != nil {
			return fmt.Errorf("--redis-url: %v", err)
		}
	}
	if c.RequestTimeout < 0 {
		return fmt.Errorf("--request-timeout must be a duration such as 30s, 0 or more")
	}
	if c.StatementTimeout < 0 {
		return fmt.Errorf("--db-statement-timeout must be a duration such as 10s, 0 or more")
	}
	if c.MaxUploadBytes == 0 {
		c.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if c.WebhookRetry != "" {
		if _, err := webhook.ParseSchedule(c.WebhookRetry); err != nil {
			return fmt.Errorf("--webhook-retry-schedule: %v", err)
		}
	}
	switch {
	case c.WebhookMaxEndpoints < 0:
		return fmt.Errorf("--webhook-max-endpoints (WEBHOOK_MAX_ENDPOINTS) must be a whole number, 1 or more, got %d", c.WebhookMaxEndpoints)
	case c.WebhookMaxEndpoints == 0:
		c.WebhookMaxEndpoints = webhook.DefaultMaxEndpoints
	}
	if c.badBool != "" {
		return errors.New(c.badBool)
	}
	if c.PersistedOnly && c.PersistedDocuments == "" {
		return fmt.Errorf("--persisted-only (PERSISTED_ONLY) needs --persisted-documents (PERSISTED_DOCUMENTS), the manifest of the documents it accepts")
	}
	if c.PersistedDocuments != "" && c.Trusted == nil {
		m, err := persisted.LoadManifest(c.PersistedDocuments)
		if err != nil {
			return fmt.Errorf("--persisted-documents %s: %v", c.PersistedDocuments, err)
		}
		c.Trusted = m
	}
	return nil
}

// DefaultMaxUploadBytes is the default limit of one uploaded image: print
// maps are high-resolution images, 10 MiB is generous for them.
const DefaultMaxUploadBytes = 10 << 20

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

// envInt reads an integer variable; an unparsable value is kept as -1 so
// that Validate reports it.
func envInt(env Env, name string, def int64) int64 {
	v := env(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// PublicIntrospection reports whether anyone may introspect the GraphQL
// schema, without a token.
func (c *Config) PublicIntrospection() bool { return c.GraphQLIntrospection == "public" }

// envDuration reads a duration variable (such as 30s or 1m); an
// unparsable or negative value is kept as -1 so that Validate reports it.
func envDuration(env Env, name string, def time.Duration) time.Duration {
	v := env(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return -1
	}
	return d
}

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
