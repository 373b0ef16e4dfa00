package webhook_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/webhook"
)

// TestRetainRebuildsOutgrownJobIndexes: River's job table keeps, in its GIN
// index on args, an entry for every delivery id it has seen, after vacuum
// removed the jobs (a day of deliveries: 100,000 jobs with an id each,
// gone), and in its GIN index on metadata the emptied pages of a posting
// list that named them all; the retention rebuilds both GIN indexes, and
// no other (the primary key stays), counts them in
// retention_rebuilt_total, and brings each under the table's size; a job
// still there is still found through it; the next run rebuilds nothing
// but drops the invalid copy a cut-short rebuild left (its name ends in
// _ccnew, and every write would keep it up to date). On SQLite, whose River table has no GIN index, a run rebuilds nothing.
func TestRetainRebuildsOutgrownJobIndexes(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			c := dbtest.Open(t, b.URL(t))
			reg := prometheus.NewRegistry()
			q := queueWith(t, c, webhook.Config{Guard: &webhook.Guard{AllowPrivate: true}, Metrics: reg})
			ctx := context.Background()
			if b.Name == "sqlite" {
				if r, err := q.Retain(ctx, time.Now()); r.Indexes != 0 || err != nil {
					t.Fatalf("Retain on SQLite = %+v, %v; want no index rebuilt", r, err)
				}
				return
			}
			db := database.Pool(c)
			exec := func(query string) {
				t.Helper()
				if _, err := db.Exec(query); err != nil {
					t.Fatalf("%s: %v", query, err)
				}
			}
			const jobs = `INSERT INTO river_job (args, kind, max_attempts, state, finalized_at)
				SELECT jsonb_build_object('delivery_id', g), 'webhook_delivery', 1, 'completed', now() FROM generate_series(%d, %d) g`
			exec(fmt.Sprintf(jobs, 1, 100_000))
			exec(`DELETE FROM river_job WHERE (args->>'delivery_id')::int > 2`)
			exec(`VACUUM river_job`)
			filenode := func(index string) (n int64) {
				if err := db.QueryRow(`SELECT pg_relation_filenode($1::regclass)`, index).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			size := func(rel string) (n int64) {
				if err := db.QueryRow(`SELECT pg_relation_size($1::regclass)`, rel).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			args, pkey := filenode("river_job_args_index"), filenode("river_job_pkey")
			before, heap := size("river_job_args_index"), size("river_job")
			if before < heap+webhook.RebuildSlack {
				t.Fatalf("setup: args index %d bytes, table %d: not outgrown", before, heap)
			}
			r, err := q.Retain(ctx, time.Now())
			if err != nil || r.Indexes != 2 {
				t.Fatalf("Retain = %+v, %v; want 2 indexes rebuilt", r, err)
			}
			after := size("river_job_args_index")
			if filenode("river_job_args_index") == args || after >= before || after > size("river_job")+webhook.RebuildSlack {
				t.Errorf("args index %d bytes before, %d after (table %d), file %d then %d; want it rebuilt under the table's size",
					before, after, size("river_job"), args, filenode("river_job_args_index"))
			}
			if m := size("river_job_metadata_index"); m > size("river_job")+webhook.RebuildSlack {
				t.Errorf("metadata index %d bytes after the run; want it rebuilt under the table's size", m)
			}
			if filenode("river_job_pkey") != pkey {
				t.Error("the primary key, a B-tree, was rebuilt")
			}
			rebuilt := map[string]float64{}
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, mf := range mfs {
				for _, m := range mf.GetMetric() {
					if mf.GetName() == "retention_rebuilt_total" {
						rebuilt[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
					}
				}
			}
			if rebuilt["river_job_args_index"] != 1 || rebuilt["river_job_metadata_index"] != 1 || len(rebuilt) != 2 {
				t.Errorf("retention_rebuilt_total = %v, want 1 for each GIN index", rebuilt)
			}
			// A job left is found through the rebuilt index.
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			var found int
			if _, err := tx.Exec(`SET LOCAL enable_seqscan = off`); err != nil {
				t.Fatal(err)
			}
			if err := tx.QueryRow(`SELECT count(*) FROM river_job WHERE args @> '{"delivery_id": 1}'`).Scan(&found); err != nil || found != 1 {
				t.Errorf("the job left, through the index: %d, %v; want 1", found, err)
			}
			tx.Rollback()
			// What a REINDEX CONCURRENTLY cut short leaves: an invalid
			// index named _ccnew (a build that failed: two jobs share a kind).
			if _, err := db.Exec(`CREATE UNIQUE INDEX CONCURRENTLY river_job_args_index_ccnew ON river_job (kind)`); err == nil {
				t.Fatal("setup: the unique build that must fail succeeded")
			}
			invalid := func() (n int) {
				if err := db.QueryRow(`SELECT count(*) FROM pg_index WHERE indrelid = 'river_job'::regclass AND NOT indisvalid`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if invalid() != 1 {
				t.Fatal("setup: no invalid index left")
			}
			again := filenode("river_job_args_index")
			if r, err := q.Retain(ctx, time.Now()); r.Indexes != 0 || err != nil || filenode("river_job_args_index") != again {
				t.Errorf("the next run = %+v, %v; want no index rebuilt", r, err)
			}
			if n := invalid(); n != 0 {
				t.Errorf("%d invalid indexes on river_job after the next run; want the leftover dropped", n)
			}
		})
	}
}
