package webhook

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"entgo.io/ent/dialect"

	"github.com/configurator/catalogue/internal/database"
)

// River's job table on PostgreSQL is written and emptied all day: every
// dispatch and delivery inserts a job, updates it two or three times and
// the cleaner removes it. Its rows reach a plateau (JOB_RETENTION); its
// indexes do not. A GIN index keeps an entry for every key it has ever
// held (vacuum removes a gone job's pointers from an entry, never the
// entry), so each delivery's id, in a delivery job's args, stays in
// river_job_args_index: under the soak's writes it grew by 240 kB a
// minute (bench/RESULTS.md, 2026-12-02), about 70 bytes a delivery job;
// and River's B-trees, keyed by state and time, leave pages half empty
// (river_job_prioritized_fetching_index: 1.1 to 1.4 MB in the soak's
// first ten minutes with the rows flat). River's own reindexer rebuilds
// them at 00:00 UTC, but only on a replica whose River runs then, and
// River runs only while there is work (keep.go): a replica idle at
// midnight never rebuilds, however much it delivered that day. So the
// retention, on the leader every RETENTION_EVERY, rebuilds an index of
// River's table once it has outgrown the table itself (rebuildSlack): an
// index holds a part of each live row, so a fresh one is smaller than the
// table's heap, and one larger than it is mostly what gone jobs left.
// Measured at each run, not scheduled: nothing to remember across
// restarts or leaders.

// rebuildSlack is how far an index of river_job may exceed the table's
// heap before it is rebuilt: a small table's indexes (a few hundred jobs,
// tens of kilobytes) are not rebuilt at every run for a few pages more.
// A GIN index's pending list (inserts not yet merged into it, up to
// gin_pending_list_limit, 4 MB by default) can take it past the bound
// early; that rebuild merges the list too, and costs what rebuilding a
// small index costs (the soak: 4 rebuilds in 20 minutes).
const rebuildSlack = 1 << 20

// rebuildTimeout bounds one index's rebuild (River's reindexer's own
// bound); a rebuild cut short leaves an invalid copy, dropped at once.
const rebuildTimeout = time.Minute

// outgrown lists the valid indexes of River's job table larger than its
// heap by more than rebuildSlack, named as SQL (regclass's text: quoted
// and qualified as it needs), with their size.
const outgrown = `SELECT i.indexrelid::regclass::text, pg_relation_size(i.indexrelid)
FROM pg_index i
WHERE i.indrelid = to_regclass('river_job') AND i.indisvalid
  AND pg_relation_size(i.indexrelid) > pg_relation_size(i.indrelid) + $1
ORDER BY 1`

// leftovers lists the invalid copies a cut-short REINDEX CONCURRENTLY of
// river_job's indexes left (PostgreSQL names them _ccnew, _ccnew1, ...).
const leftovers = `SELECT i.indexrelid::regclass::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = to_regclass('river_job') AND NOT i.indisvalid AND c.relname ~ '_ccnew[0-9]*$'`

// rebuiltIndex is one index the retention rebuilt, with its size before and
// after.
type rebuiltIndex struct {
	Index         string
	Before, After int64
}

// rebuildJobIndexes rebuilds, on PostgreSQL, each index of River's job
// table that has outgrown the table (above), one at a time with
// REINDEX INDEX CONCURRENTLY, which writes and River's fetches do not wait
// on. It counts them (retention_rebuilt_total) and logs each.
func (q *Queue) rebuildJobIndexes(ctx context.Context) ([]rebuiltIndex, error) {
	if q.dialect != dialect.Postgres {
		return nil, nil // SQLite's B-trees rebalance as rows go; its freed pages serve any table
	}
	db := database.Pool(q.client)
	if err := dropLeftovers(ctx, db); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, outgrown, rebuildSlack)
	if err != nil {
		return nil, err
	}
	var todo []rebuiltIndex
	for rows.Next() {
		var r rebuiltIndex
		if err := rows.Scan(&r.Index, &r.Before); err != nil {
			rows.Close()
			return nil, err
		}
		todo = append(todo, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var done []rebuiltIndex
	for _, r := range todo {
		rctx, cancel := context.WithTimeout(ctx, rebuildTimeout)
		_, err := db.ExecContext(rctx, "REINDEX INDEX CONCURRENTLY "+r.Index)
		cancel()
		if err != nil {
			// The copy it was building stays behind, invalid, and every
			// write would keep it up to date: dropped now.
			if derr := dropLeftovers(context.WithoutCancel(ctx), db); derr != nil {
				q.log.Warn("could not drop what a cut-short index rebuild left; dropped at the next retention run", "err", derr)
			}
			return done, fmt.Errorf("rebuilding %s: %w", r.Index, err)
		}
		db.QueryRowContext(ctx, "SELECT pg_relation_size(to_regclass($1))", r.Index).Scan(&r.After)
		q.metrics.rebuilt.WithLabelValues(r.Index).Inc()
		q.log.Info("retention rebuilt an index of the job queue that had outgrown its table",
			"index", r.Index, "bytes_before", r.Before, "bytes_after", r.After)
		done = append(done, r)
	}
	return done, nil
}

// dropLeftovers drops the invalid copies of river_job's indexes a
// cut-short rebuild left (this replica's, or any other's).
func dropLeftovers(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, leftovers)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, n := range names {
		dctx, cancel := context.WithTimeout(ctx, rebuildTimeout)
		_, err := db.ExecContext(dctx, "DROP INDEX CONCURRENTLY IF EXISTS "+n)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}
