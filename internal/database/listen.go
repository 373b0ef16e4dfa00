package database

import (
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// ListenConfig is the pgx configuration of a LISTEN connection for
// DATABASE_URL (the token revocations, internal/auth; the events,
// internal/events). Without an sslmode in the URL it requires TLS, where pgx
// would try TLS and fall back to plain text ("prefer", which the pool's
// connections use): the listener keeps the stricter default that the
// service's first PostgreSQL driver had. The URL's search_path (as tests set it) is sent
// as a run-time parameter, so the listener sees the same tables. Its
// application_name is the URL's (or "catalogue") followed by
// listenerName, so that operators can tell it in pg_stat_activity.
func ListenConfig(databaseURL, listenerName string) (*pgx.ConnConfig, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	q := u.Query()
	if !q.Has("sslmode") {
		q.Set("sslmode", "require")
		u.RawQuery = q.Encode()
	}
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("database url for the %s: %w", listenerName, err)
	}
	name := cfg.RuntimeParams["application_name"]
	if name == "" {
		name = "catalogue"
	}
	cfg.RuntimeParams["application_name"] = name + " " + listenerName
	return cfg, nil
}
