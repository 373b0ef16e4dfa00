// Package config reads the operator's settings from flags and environment
// variables; a flag wins over its variable, which wins over the default.
package config

import (
	"flag"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Defaults of the settings.
const (
	DefaultAddr        = ":8080"
	DefaultDatabaseURL = "sqlite://./data/configurator.db"
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
	// Demo is auto, true or false (DEMO): whether serve loads the demo data
	// into an empty database. auto means only on SQLite, never on
	// PostgreSQL, so a production database is never seeded by accident.
	Demo string
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
	fs.StringVar(&c.Demo, "demo", or(env("DEMO"), "auto"),
		"load demo data into an empty database: auto (SQLite only), true or false (env DEMO)")
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
	if c.Addr != "" {
		if _, _, err := net.SplitHostPort(c.Addr); err != nil {
			return fmt.Errorf("--addr %q: %v", c.Addr, err)
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
	return nil
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
