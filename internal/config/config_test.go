package config

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/persisted"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/webhook"
)

func TestServeConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr bool
		want    Config
		demo    bool
		public  bool // PublicIntrospection()
	}{
		{name: "defaults", want: Config{WebhookMaxEndpoints: webhook.DefaultMaxEndpoints, Addr: ":8080", DatabaseURL: DefaultDatabaseURL, PublicURL: "http://localhost:8080", Demo: "auto", GraphQLIntrospection: "token",
			StorageURL: storage.DefaultURL, MaxUploadBytes: storage.DefaultMaxBytes, ViewerURL: "http://localhost:8080/share/",
			RequestTimeout: DefaultRequestTimeout, StatementTimeout: DefaultStatementTimeout, RateLimit: DefaultRateLimit}, demo: true},
		{name: "env", env: map[string]string{"ADDR": "127.0.0.1:9000", "DATABASE_URL": "postgres://db/x", "PUBLIC_URL": "https://api.example.com/", "DEMO": "false",
			"UPLOAD_DIR": "/var/lib/uploads", "MAX_UPLOAD_BYTES": "1000", "VIEWER_URL": "https://shop.example.com/c?share=",
			"REQUEST_TIMEOUT": "5s", "DB_STATEMENT_TIMEOUT": "0", "RATE_LIMIT_PER_MINUTE": "0", "GRAPHQL_INTROSPECTION": "public"}, public: true,
			want: Config{WebhookMaxEndpoints: webhook.DefaultMaxEndpoints, Addr: "127.0.0.1:9000", DatabaseURL: "postgres://db/x", PublicURL: "https://api.example.com", Demo: "false", GraphQLIntrospection: "public",
				StorageURL: "file:///var/lib/uploads", UploadDir: "/var/lib/uploads", MaxUploadBytes: 1000, ViewerURL: "https://shop.example.com/c?share=",
				RequestTimeout: 5 * time.Second}},
		{name: "flags win over env", env: map[string]string{"ADDR": ":1"}, args: []string{"--addr", ":2", "--database-url", "postgresql://db/y"},
			want: Config{WebhookMaxEndpoints: webhook.DefaultMaxEndpoints, Addr: ":2", DatabaseURL: "postgresql://db/y", PublicURL: "http://localhost:2", Demo: "auto", GraphQLIntrospection: "token",
				StorageURL: storage.DefaultURL, MaxUploadBytes: storage.DefaultMaxBytes, ViewerURL: "http://localhost:2/share/",
				RequestTimeout: DefaultRequestTimeout, StatementTimeout: DefaultStatementTimeout, RateLimit: DefaultRateLimit}},
		{name: "postgres never seeds on auto", args: []string{"--database-url", "postgres://db/z"},
			want: Config{WebhookMaxEndpoints: webhook.DefaultMaxEndpoints, Addr: ":8080", DatabaseURL: "postgres://db/z", PublicURL: "http://localhost:8080", Demo: "auto", GraphQLIntrospection: "token",
				StorageURL: storage.DefaultURL, MaxUploadBytes: storage.DefaultMaxBytes, ViewerURL: "http://localhost:8080/share/",
				RequestTimeout: DefaultRequestTimeout, StatementTimeout: DefaultStatementTimeout, RateLimit: DefaultRateLimit}},
		{name: "storage url", env: map[string]string{"STORAGE_URL": "s3://files?endpoint=http://127.0.0.1:9000"},
			want: Config{WebhookMaxEndpoints: webhook.DefaultMaxEndpoints, Addr: ":8080", DatabaseURL: DefaultDatabaseURL, PublicURL: "http://localhost:8080", Demo: "auto", GraphQLIntrospection: "token",
				StorageURL: "s3://files?endpoint=http://127.0.0.1:9000", MaxUploadBytes: storage.DefaultMaxBytes, ViewerURL: "http://localhost:8080/share/",
				RequestTimeout: DefaultRequestTimeout, StatementTimeout: DefaultStatementTimeout, RateLimit: DefaultRateLimit}, demo: true},
		{name: "storage url flag", args: []string{"--storage-url", "file:///srv/files"},
			want: Config{WebhookMaxEndpoints: webhook.DefaultMaxEndpoints, Addr: ":8080", DatabaseURL: DefaultDatabaseURL, PublicURL: "http://localhost:8080", Demo: "auto", GraphQLIntrospection: "token",
				StorageURL: "file:///srv/files", MaxUploadBytes: storage.DefaultMaxBytes, ViewerURL: "http://localhost:8080/share/",
				RequestTimeout: DefaultRequestTimeout, StatementTimeout: DefaultStatementTimeout, RateLimit: DefaultRateLimit}, demo: true},
		{name: "storage url and upload dir", env: map[string]string{"UPLOAD_DIR": "/a"}, args: []string{"--storage-url", "file:///b"}, wantErr: true},
		{name: "storage url of another scheme", args: []string{"--storage-url", "/srv/files"}, wantErr: true},
		{name: "rate limit flag", env: map[string]string{"RATE_LIMIT_PER_MINUTE": "5"}, args: []string{"--rate-limit-per-minute", "600"},
			want: Config{WebhookMaxEndpoints: webhook.DefaultMaxEndpoints, Addr: ":8080", DatabaseURL: DefaultDatabaseURL, PublicURL: "http://localhost:8080", Demo: "auto", GraphQLIntrospection: "token",
				StorageURL: storage.DefaultURL, MaxUploadBytes: storage.DefaultMaxBytes, ViewerURL: "http://localhost:8080/share/",
				RequestTimeout: DefaultRequestTimeout, StatementTimeout: DefaultStatementTimeout, RateLimit: 600}, demo: true},
		{name: "redis url", env: map[string]string{"REDIS_URL": "redis://cache.internal:6379/2"},
			want: Config{WebhookMaxEndpoints: webhook.DefaultMaxEndpoints, Addr: ":8080", DatabaseURL: DefaultDatabaseURL, PublicURL: "http://localhost:8080", Demo: "auto", GraphQLIntrospection: "token",
				StorageURL: storage.DefaultURL, MaxUploadBytes: storage.DefaultMaxBytes, ViewerURL: "http://localhost:8080/share/",
				RequestTimeout: DefaultRequestTimeout, StatementTimeout: DefaultStatementTimeout, RateLimit: DefaultRateLimit,
				RedisURL: "redis://cache.internal:6379/2"}, demo: true},
		{name: "redis url of another scheme", args: []string{"--redis-url", "http://cache.internal:6379"}, wantErr: true},
		{name: "redis url with an unknown parameter", env: map[string]string{"REDIS_URL": "redis://cache.internal?timeout=1s"}, wantErr: true},
		{name: "bad upload limit", env: map[string]string{"MAX_UPLOAD_BYTES": "ten"}, wantErr: true},
		{name: "negative rate limit", args: []string{"--rate-limit-per-minute", "-5"}, wantErr: true},
		{name: "bad rate limit", env: map[string]string{"RATE_LIMIT_PER_MINUTE": "lots"}, wantErr: true},
		{name: "relative viewer url", args: []string{"--viewer-url", "/share/"}, wantErr: true},
		{name: "bad database url", args: []string{"--database-url", "mysql://x"}, wantErr: true},
		{name: "bad addr", args: []string{"--addr", "8080"}, wantErr: true},
		{name: "relative public url", args: []string{"--public-url", "/api"}, wantErr: true},
		{name: "bad request timeout", env: map[string]string{"REQUEST_TIMEOUT": "30"}, wantErr: true},
		{name: "negative statement timeout", args: []string{"--db-statement-timeout", "-1s"}, wantErr: true},
		{name: "bad demo", args: []string{"--demo", "yes"}, wantErr: true},
		{name: "introspection flag", env: map[string]string{"GRAPHQL_INTROSPECTION": "token"}, args: []string{"--graphql-introspection", "public"},
			want: Config{WebhookMaxEndpoints: webhook.DefaultMaxEndpoints, Addr: ":8080", DatabaseURL: DefaultDatabaseURL, PublicURL: "http://localhost:8080", Demo: "auto", GraphQLIntrospection: "public",
				StorageURL: storage.DefaultURL, MaxUploadBytes: storage.DefaultMaxBytes, ViewerURL: "http://localhost:8080/share/",
				RequestTimeout: DefaultRequestTimeout, StatementTimeout: DefaultStatementTimeout, RateLimit: DefaultRateLimit}, demo: true, public: true},
		{name: "bad introspection", env: map[string]string{"GRAPHQL_INTROSPECTION": "open"}, wantErr: true},
		{name: "stream caps", env: map[string]string{"SUBSCRIPTIONS_PER_CONNECTION": "5"}, args: []string{"--streams-per-token", "3"},
			want: Config{WebhookMaxEndpoints: webhook.DefaultMaxEndpoints, Addr: ":8080", DatabaseURL: DefaultDatabaseURL, PublicURL: "http://localhost:8080", Demo: "auto", GraphQLIntrospection: "token",
				StorageURL: storage.DefaultURL, MaxUploadBytes: storage.DefaultMaxBytes, ViewerURL: "http://localhost:8080/share/",
				RequestTimeout: DefaultRequestTimeout, StatementTimeout: DefaultStatementTimeout, RateLimit: DefaultRateLimit,
				SubscriptionsPerConnection: 5, StreamsPerToken: 3}, demo: true},
		{name: "bad stream cap", env: map[string]string{"STREAMS_PER_TOKEN": "many"}, wantErr: true},
		{name: "negative stream cap", args: []string{"--subscriptions-per-connection", "-1"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			c.ServeFlags(fs, func(k string) string { return tc.env[k] })
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := c.Validate()
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Validate() = nil; want an error for %+v", c)
				}
				return
			}
			// The stream caps are the defaults unless a case sets them.
			if tc.want.SubscriptionsPerConnection == 0 {
				tc.want.SubscriptionsPerConnection = DefaultSubscriptionsPerConnection
			}
			if tc.want.StreamsPerToken == 0 {
				tc.want.StreamsPerToken = DefaultStreamsPerToken
			}
			// So is the retention (TestRetentionSettings).
			tc.want.serving = true
			if tc.want.Retention() == (webhook.Retention{}) {
				tc.want.EventRetention, tc.want.DeliveryRetention, tc.want.RetentionEvery, tc.want.JobRetention =
					webhook.DefaultRetention.Events, webhook.DefaultRetention.Deliveries, webhook.DefaultRetention.Every, webhook.DefaultRetention.Jobs
			}
			if tc.want.IdempotencyTTL == 0 {
				tc.want.IdempotencyTTL = idempotency.TTL
			}
			if err != nil || c != tc.want {
				t.Fatalf("config = %+v, %v; want %+v", c, err, tc.want)
			}
			if c.PublicIntrospection() != tc.public {
				t.Errorf("PublicIntrospection() = %v; want %v", c.PublicIntrospection(), tc.public)
			}
			if c.SeedDemo() != tc.demo {
				t.Errorf("SeedDemo() = %v; want %v", c.SeedDemo(), tc.demo)
			}
		})
	}
}

// TestWebhookSettings: WEBHOOK_ALLOW_PRIVATE and WEBHOOK_RETRY_SCHEDULE
// are read, and a schedule that is not a list of positive durations is
// refused naming the flag.
func TestWebhookSettings(t *testing.T) {
	c, err := serveConfig(map[string]string{"WEBHOOK_ALLOW_PRIVATE": "true", "WEBHOOK_RETRY_SCHEDULE": "1s, 2m,3h"})
	if err != nil || !c.WebhookAllowPrivate {
		t.Fatalf("config %+v, %v", c, err)
	}
	if got := c.WebhookSchedule(); len(got) != 3 || got[0] != time.Second || got[1] != 2*time.Minute || got[2] != 3*time.Hour {
		t.Errorf("schedule %v; want [1s 2m 3h]", got)
	}
	if c, _ := serveConfig(nil); c.WebhookAllowPrivate || c.WebhookSchedule() != nil {
		t.Errorf("defaults %+v; want private addresses refused and the default schedule", c)
	}
	if c, _ := serveConfig(nil); c.WebhookMaxEndpoints != 16 {
		t.Errorf("default WebhookMaxEndpoints %d; want 16", c.WebhookMaxEndpoints)
	}
	if c, err := serveConfig(map[string]string{"WEBHOOK_MAX_ENDPOINTS": "4"}); err != nil || c.WebhookMaxEndpoints != 4 {
		t.Errorf("WEBHOOK_MAX_ENDPOINTS=4: %d, %v", c.WebhookMaxEndpoints, err)
	}
	if c, err := serveConfig(nil, "--webhook-max-endpoints", "40"); err != nil || c.WebhookMaxEndpoints != 40 {
		t.Errorf("--webhook-max-endpoints 40: %d, %v", c.WebhookMaxEndpoints, err)
	}
	for _, bad := range []string{"-2", "many"} {
		if _, err := serveConfig(map[string]string{"WEBHOOK_MAX_ENDPOINTS": bad}); err == nil || !strings.Contains(err.Error(), "WEBHOOK_MAX_ENDPOINTS") {
			t.Errorf("WEBHOOK_MAX_ENDPOINTS=%q: %v; want an error naming it", bad, err)
		}
	}
	for _, bad := range []string{"soon", "1s,,2s", "-1s", "0s"} {
		if _, err := serveConfig(map[string]string{"WEBHOOK_RETRY_SCHEDULE": bad}); err == nil || !strings.Contains(err.Error(), "--webhook-retry-schedule") {
			t.Errorf("WEBHOOK_RETRY_SCHEDULE=%q: %v; want an error naming the flag", bad, err)
		}
	}
}

// TestPersistedDocuments: PERSISTED_DOCUMENTS is loaded and checked by
// Validate, so that a missing file, a file that is not a manifest or a key
// that is not its document's SHA-256 stops the server at start with a
// message naming the flag; PERSISTED_ONLY needs a manifest and is a
// boolean, never read as false in silence.
func TestPersistedDocuments(t *testing.T) {
	dir := t.TempDir()
	const doc = "{ viewer { ownerID } }"
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.json", `{"`+persisted.Hash(doc)+`": "`+doc+`"}`)

	c, err := serveConfig(nil)
	if err != nil || c.PersistedDocuments != "" || c.PersistedOnly || c.Trusted != nil {
		t.Fatalf("defaults: %+v, %v; want no manifest, free-form documents accepted", c, err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		only bool
	}{
		{"env", map[string]string{"PERSISTED_DOCUMENTS": good, "PERSISTED_ONLY": "true"}, nil, true},
		{"env, not only", map[string]string{"PERSISTED_DOCUMENTS": good, "PERSISTED_ONLY": "false"}, nil, false},
		{"env, 1", map[string]string{"PERSISTED_DOCUMENTS": good, "PERSISTED_ONLY": "1"}, nil, true},
		{"flags", map[string]string{"PERSISTED_DOCUMENTS": "/nowhere.json"}, []string{"--persisted-documents", good, "--persisted-only"}, true},
		{"flag wins over env", map[string]string{"PERSISTED_DOCUMENTS": good, "PERSISTED_ONLY": "true"}, []string{"--persisted-only=false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := serveConfig(tc.env, tc.args...)
			if err != nil || c.PersistedDocuments != good || c.PersistedOnly != tc.only {
				t.Fatalf("config %+v, %v; want the manifest %s, only %v", c, err, good, tc.only)
			}
			if got, ok := c.Trusted.Lookup(persisted.Hash(doc)); !ok || got != doc || c.Trusted.Len() != 1 {
				t.Errorf("Trusted holds %d documents, %q for the manifest's hash; want its one document", c.Trusted.Len(), got)
			}
		})
	}

	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"only without a manifest", map[string]string{"PERSISTED_ONLY": "true"}, "--persisted-only (PERSISTED_ONLY) needs --persisted-documents"},
		{"only, not a boolean", map[string]string{"PERSISTED_DOCUMENTS": good, "PERSISTED_ONLY": "yes"}, `PERSISTED_ONLY must be true or false, not "yes"`},
		{"missing file", map[string]string{"PERSISTED_DOCUMENTS": filepath.Join(dir, "missing.json")},
			"--persisted-documents " + filepath.Join(dir, "missing.json") + ": no such file or directory"},
		{"bad JSON", map[string]string{"PERSISTED_DOCUMENTS": write("bad.json", `{"a": `)}, "not a JSON object of SHA-256 hashes to documents"},
		{"bad hash", map[string]string{"PERSISTED_DOCUMENTS": write("sha.json", `{"`+persisted.Hash(doc+" ")+`": "`+doc+`"}`)},
			"is not the SHA-256 of its document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c, err := serveConfig(tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v for %+v; want an error saying %q", err, c, tc.want)
			}
		})
	}
}

// serveConfig is serve's configuration of env and args, validated.
func serveConfig(env map[string]string, args ...string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.ServeFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// TestOIDCSettings: an issuer must be https (or loopback http) and comes
// with an audience; an audience alone is refused.
func TestOIDCSettings(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string // part of the error; "" for none
	}{
		{map[string]string{"OIDC_ISSUER": "https://id.example.com/realms/shop", "OIDC_AUDIENCE": "https://api.example.com"}, ""},
		{map[string]string{"OIDC_ISSUER": "http://127.0.0.1:9000", "OIDC_AUDIENCE": "x"}, ""},
		{map[string]string{"OIDC_ISSUER": "http://id.example.com", "OIDC_AUDIENCE": "x"}, "must be https"},
		{map[string]string{"OIDC_ISSUER": "https://id.example.com"}, "needs --oidc-audience"},
		{map[string]string{"OIDC_AUDIENCE": "x"}, "needs --oidc-issuer"},
	} {
		var c Config
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		c.ServeFlags(fs, func(k string) string { return tc.env[k] })
		if err := fs.Parse(nil); err != nil {
			t.Fatal(err)
		}
		err := c.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: %v; want %q", tc.env, err, tc.want)
		}
	}
}

// TestBadVariableNamed: a variable whose value its flag cannot take stops
// the server with an error naming the variable and what it wants.
func TestBadVariableNamed(t *testing.T) {
	for name, tc := range map[string]struct{ value, want string }{
		"MAX_UPLOAD_BYTES":      {"ten", `MAX_UPLOAD_BYTES must be a whole number, not "ten"`},
		"REQUEST_TIMEOUT":       {"30", `REQUEST_TIMEOUT must be a duration such as 30s, 0 or more, not "30"`},
		"WEBHOOK_ALLOW_PRIVATE": {"yes", `WEBHOOK_ALLOW_PRIVATE must be true or false, not "yes"`},
	} {
		if _, err := serveConfig(map[string]string{name: tc.value}); err == nil || err.Error() != tc.want {
			t.Errorf("%s=%s: %v; want %q", name, tc.value, err, tc.want)
		}
	}
}

// TestRetentionSettings: EVENT_RETENTION, WEBHOOK_DELIVERY_RETENTION,
// RETENTION_EVERY and IDEMPOTENCY_TTL are read (flags win), default to 30
// days, 30 days, an hour and a day, and a value that is not a positive
// duration stops the server with an error naming the setting.
func TestRetentionSettings(t *testing.T) {
	c, err := serveConfig(nil)
	if want := (webhook.Retention{Events: 720 * time.Hour, Deliveries: 720 * time.Hour, Every: time.Hour, Jobs: time.Hour}); err != nil || c.Retention() != want {
		t.Errorf("default retention %+v, %v; want %+v", c.Retention(), err, want)
	}
	c, err = serveConfig(map[string]string{"EVENT_RETENTION": "48h", "WEBHOOK_DELIVERY_RETENTION": "2160h", "RETENTION_EVERY": "5s",
		"JOB_RETENTION": "10m"}, "--retention-every", "10s")
	if want := (webhook.Retention{Events: 48 * time.Hour, Deliveries: 2160 * time.Hour, Every: 10 * time.Second, Jobs: 10 * time.Minute}); err != nil || c.Retention() != want {
		t.Errorf("retention %+v, %v; want %+v", c.Retention(), err, want)
	}
	if err != nil || c.IdempotencyTTL != 24*time.Hour {
		t.Errorf("default IdempotencyTTL %v, %v; want 24h", c.IdempotencyTTL, err)
	}
	c, err = serveConfig(map[string]string{"IDEMPOTENCY_TTL": "5s"})
	if err != nil || c.IdempotencyTTL != 5*time.Second {
		t.Errorf("IDEMPOTENCY_TTL=5s: %v, %v; want 5s", c.IdempotencyTTL, err)
	}
	for _, name := range []string{"EVENT_RETENTION", "WEBHOOK_DELIVERY_RETENTION", "RETENTION_EVERY", "IDEMPOTENCY_TTL", "JOB_RETENTION"} {
		flag := "--" + strings.ReplaceAll(strings.ToLower(name), "_", "-")
		for bad, want := range map[string]string{
			"30d": name + ` must be a duration such as 30s, 0 or more, not "30d"`,
			"0":   flag + " must be a duration such as 720h or 30s, more than 0, got 0s",
			"-1h": flag + " must be a duration such as 720h or 30s, more than 0, got -1h0m0s",
		} {
			if _, err := serveConfig(map[string]string{name: bad}); err == nil || err.Error() != want {
				t.Errorf("%s=%s: %v; want %q", name, bad, err, want)
			}
		}
	}
}
