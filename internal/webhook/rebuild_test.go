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
// gone), and its other indexes keep the pages those jobs filled; the
// retention rebuilds each index larger than the table by more than the
// slack (both GIN indexes among them), and no other, counts each in
// retention_rebuilt_total, and brings each under the table's size; a job
// still there is still found through the args index; the next run
// rebuilds nothing but drops the invalid copy a cut-short rebuild left
// (its name ends in _ccnew, and every write would keep it up to date). On
// SQLite a run rebuilds nothing.
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
			heap := size("river_job")
			over, under := map[string]int64{}, map[string]int64{} // index: its file
			rows, err := db.Query(`SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index WHERE indrelid = 'river_job'::regclass`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var name string
				var bytes int64
				if err := rows.Scan(&name, &bytes); err != nil {
					t.Fatal(err)
				}
				if bytes > heap+webhook.RebuildSlack {
					over[name] = 0
				} else {
					under[name] = 0
				}
			}
			rows.Close()
			for _, m := range []map[string]int64{over, under} {
				for name := range m {
					m[name] = filenode(name)
				}
			}
			if _, ok := over["river_job_args_index"]; !ok {
				t.Fatalf("setup: the args index has not outgrown the table (%d bytes): outgrown %v", heap, over)
			}
			if _, ok := over["river_job_metadata_index"]; !ok {
				t.Fatalf("setup: the metadata index has not outgrown the table (%d bytes): outgrown %v", heap, over)
			}
			if len(under) == 0 {
				t.Fatal("setup: every index has outgrown the table; none shows that a small one stays")
			}
			r, err := q.Retain(ctx, time.Now())
			if err != nil || r.Indexes != len(over) {
				t.Fatalf("Retain = %+v, %v; want the %d outgrown indexes rebuilt (%v)", r, err, len(over), over)
			}
			for name, file := range over {
				if filenode(name) == file || size(name) > size("river_job")+webhook.RebuildSlack {
					t.Errorf("%s: %d bytes after the run, file %d then %d; want it rebuilt under the table's size",
						name, size(name), file, filenode(name))
				}
			}
			for name, file := range under {
				if filenode(name) != file {
					t.Errorf("%s, not outgrown, was rebuilt", name)
				}
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
			for name := range over {
				if rebuilt[name] != 1 {
					t.Errorf("retention_rebuilt_total{index=%q} = %v, want 1", name, rebuilt[name])
				}
			}
			if len(rebuilt) != len(over) {
				t.Errorf("retention_rebuilt_total = %v, want one series for each of %v", rebuilt, over)
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
