// Command server runs the configurator catalogue and orders service and
// its operator tasks:
//
//	server [serve]          run the HTTP service (default)
//	server migrate          bring the database schema up to date
//	server seed --demo      load the demo dataset, print a JSON summary
//	server token create --configurator ID | --dashboard --owner ID
//	server token revoke ID
//	server version          print the build: module version, VCS revision
//
// Every command takes --database-url (DATABASE_URL).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/configurator/catalogue/internal/apperr"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// usageError is a mistake in the command line; it exits with exitUsage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// run is main without the process: tests call it with their own args,
// environment and output.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(ctx, args, getenv, stdout, stderr)
	case "migrate":
		err = migrateCmd(ctx, args, getenv, stderr)
	case "seed":
		err = seedCmd(ctx, args, getenv, stdout, stderr)
	case "token":
		err = tokenCmd(ctx, args, getenv, stdout, stderr)
	case "keys":
		err = keysCmd(ctx, args, getenv, stdout, stderr)
	case "version":
		err = versionCmd(args, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		err = usagef("unknown command %q", cmd)
	}
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "server: %v\n\n%s", err, usage)
		return exitUsage
	default:
		msg := err.Error()
		var ae *apperr.Error
		if errors.As(err, &ae) {
			msg = ae.Error()
		}
		fmt.Fprintf(stderr, "server: %s\n", msg)
		return exitError
	}
}

const usage = `Usage:
  server [serve] [--addr :8080] [--database-url URL] [--public-url URL] [--demo auto|true|false]
  server migrate [--database-url URL]
  server seed --demo [--database-url URL]
  server token create --configurator ID [--ttl 24h] [--database-url URL]
  server token create --dashboard --owner ID [--ttl 24h] [--database-url URL]
  server token list [--database-url URL]
  server token revoke ID [--database-url URL]
  server keys list|rotate [--database-url URL]
  server keys retire KID [--database-url URL]
  server version

Flags and arguments may come in any order. Every flag has an environment
variable, and flags win (the README's Configuration table has the defaults):
  ADDR                     listen address (--addr)
  DATABASE_URL             postgres://... or sqlite://PATH (--database-url)
  PUBLIC_URL               base of the absolute URLs returned (--public-url)
  JWT_SECRET               HS256 signing key; unset, a key set is kept in the database (server keys)
  OIDC_ISSUER              accept this OpenID provider's access tokens too (--oidc-issuer)
  OIDC_AUDIENCE            the aud the provider's tokens must carry (--oidc-audience)
  OIDC_OWNER_CLAIM         claim holding the owner id, default owner_id (--oidc-owner-claim)
  OIDC_CONFIGURATOR_CLAIM  claim holding an Open API caller's configurator, default configurator_id (--oidc-configurator-claim)
  STORAGE_URL              file://DIR or s3://BUCKET[/PREFIX]?endpoint=URL&region=R (--storage-url)
  UPLOAD_DIR               older alias of STORAGE_URL=file://DIR (--upload-dir)
  AWS_ACCESS_KEY_ID        credentials of an s3:// store
  AWS_SECRET_ACCESS_KEY
  MAX_UPLOAD_BYTES         largest accepted image (--max-upload-bytes)
  VIEWER_URL               start of share links (--viewer-url)
  DEMO                     auto|true|false: demo data on an empty database (--demo)
  GRAPHQL_INTROSPECTION    token|public: who may introspect (--graphql-introspection)
  REQUEST_TIMEOUT          deadline of every request (--request-timeout)
  DB_STATEMENT_TIMEOUT     PostgreSQL statement_timeout (--db-statement-timeout)
  RATE_LIMIT_PER_MINUTE    each token's budget in units; 0 is off (--rate-limit-per-minute)
  SUBSCRIPTIONS_PER_CONNECTION  operations one WebSocket may have open (--subscriptions-per-connection)
  STREAMS_PER_TOKEN        subscriptions one token may have open on a server (--streams-per-token)
  ACTIVE_REQUESTS          requests worked on at once, the rest queue in arrival order (--active-requests)
  REDIS_URL                keep the budgets and persisted queries in this Redis, shared by replicas (--redis-url)
  PERSISTED_DOCUMENTS      manifest of trusted GraphQL documents, {"<sha256>": "<document>"} (--persisted-documents)
  PERSISTED_ONLY           true: only the manifest's documents, except from dashboard tokens (--persisted-only)
  METRICS_ADDR             serve /metrics on this address only (--metrics-addr)
  WEBHOOK_ALLOW_PRIVATE    true: webhooks may use http and private addresses (--webhook-allow-private)
  WEBHOOK_RETRY_SCHEDULE   waits before webhook retries, e.g. 1s,2s,5s (--webhook-retry-schedule)
  WEBHOOK_MAX_ENDPOINTS    how many webhook endpoints one owner may keep, default 16 (--webhook-max-endpoints)
  WEBHOOK_DELIVERY_RETENTION  how long an ended webhook delivery is kept, default 720h (--webhook-delivery-retention)
  EVENT_RETENTION          how long an event no delivery names is kept, default 720h (--event-retention)
  IDEMPOTENCY_TTL          how long an order's Idempotency-Key is remembered, default 24h (--idempotency-ttl)
  RETENTION_EVERY          how often the leader removes what is past its retention, default 1h (--retention-every)
  JOB_RETENTION            how long the webhook queue keeps a finished job, default 1h (--job-retention)
  PPROF_ADDR               serve net/http/pprof on this address (--pprof-addr)
  OTEL_EXPORTER_OTLP_ENDPOINT  OTLP/HTTP collector: turns tracing on
  GOGC, GOMEMLIMIT         Go's garbage collector settings (serve tunes them when both are unset)
`
