package webhook

import (
	"context"
	"strings"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/database"
)

// ExplainUndispatched is the plan of the dispatch's read of the events
// to dispatch, in a transaction set up as a dispatch sets up its own
// (PostgreSQL only).
func ExplainUndispatched(ctx context.Context, c *ent.Client) (string, error) {
	t, err := database.Begin(ctx, c)
	if err != nil {
		return "", err
	}
	defer t.Rollback()
	if _, err := t.SQL.ExecContext(ctx, indexScanOnly); err != nil {
		return "", err
	}
	rows, err := t.SQL.QueryContext(ctx, "EXPLAIN "+undispatchedSQL(t.Dialect, selection{}))
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		plan = append(plan, line)
	}
	return strings.Join(plan, "\n"), rows.Err()
}

// Attempt makes one attempt of q to url, as a delivery would, and returns
// its status code and error.
func Attempt(ctx context.Context, q *Queue, url string) (int, error) {
	return q.send(ctx, url, NewSecret(), MessageID(1), []byte(`{}`))
}

// RebuildSlack is rebuildSlack, for the test of the rebuild's bound.
const RebuildSlack = rebuildSlack
