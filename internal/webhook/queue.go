package webhook

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/riverqueue/river"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/event"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/ent/webhookendpoint"
	"github.com/configurator/catalogue/internal/database"
)

// DefaultSchedule is the wait before each retry of a failed delivery:
// after the eighth attempt a delivery is FAILED.
var DefaultSchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// AttemptTimeout is how long a receiver has to answer: a 2xx within it is
// a success, anything else (or nothing) a failed attempt.
const AttemptTimeout = 10 * time.Second

// ParseSchedule reads WEBHOOK_RETRY_SCHEDULE: comma-separated durations
// ("1s,2s,5s"), each positive.
func ParseSchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%q is not a positive duration such as 5s or 2h", part)
		}
		out = append(out, d)
	}
	return out, nil
}

// Config configures the delivery queue.
type Config struct {
	// Guard is checked at every connection (nil: the strict default).
	Guard *Guard
	// Schedule is the wait before each retry (nil: DefaultSchedule).
	Schedule []time.Duration
	// PollInterval is how often an idle replica looks for due deliveries
	// (0: 50 ms). The queue polls rather than listens, on both databases,
	// so that it needs nothing beyond the service's own pool.
	PollInterval time.Duration
	// Workers is the number of deliveries one replica sends at once, as
	// first attempts of batches and as jobs each (0: 20).
	Workers int
	// OwnerShare is how many of them one owner's deliveries may take
	// (0: DefaultOwnerShare(Workers)).
	OwnerShare int
	// SettleEvery is how often the leader looks for deliveries whose job
	// River gave up on (0: a minute; settle.go).
	SettleEvery time.Duration
	// Log receives the queue's warnings (nil: slog.Default()).
	Log *slog.Logger
	// Metrics registers the queue's metrics (nil: none).
	Metrics prometheus.Registerer
	// HTTPClient sends the deliveries (nil: one that dials through Guard,
	// follows no redirect and ignores proxy settings).
	HTTPClient *http.Client
	// VacuumAfter is how many events a replica dispatches between two
	// vacuums of the events table on PostgreSQL (0: DefaultVacuumAfter).
	VacuumAfter int
	// DispatchFallback is how often the dispatch looks for new events
	// without being woken (0: DispatchFallback, 30 s). Tests set it to
	// an hour, so that whatever they wait for must wake the dispatch as
	// production does.
	DispatchFallback time.Duration
	// ListenURL, on PostgreSQL, is the database's URL: River then LISTENs
	// on a connection of its own for the jobs inserted and polls only
	// every ListenFallback (empty: it polls every PollInterval).
	ListenURL string
	// Retention is how long events and deliveries are kept and how often
	// the leader removes older ones (zero fields: DefaultRetention's).
	Retention Retention
}

// Queue delivers webhooks through River, a job queue in the service's own
// database, and River alone: the events writes record are turned into
// deliveries in batches (Dispatch), with a job per batch inserted in the
// transaction that makes the deliveries and marks the events dispatched.
// The batch job makes the first attempts and records their outcomes, the
// retries of the failed ones (a job each) and its own completion in one
// transaction (batchWorker); a job costs several statements, so a job
// per batch rather than per delivery keeps an active endpoint cheap.
// River locks each job to one replica while it runs, retries it on the
// schedule and rescues it if the replica dies; no job is deleted, and
// no delivery waits on a clock to be taken over.
type Queue struct {
	client   *ent.Client
	db       *sql.DB
	dialect  string
	river    *river.Client[*sql.Tx]
	schedule []time.Duration
	// fair shares the replica's sending among owners.
	fair *fair
	// stopping is closed by Stop: batches start no more attempts and hand
	// the rest on.
	stopping chan struct{}
	stopOnce sync.Once
	http     *http.Client
	log      *slog.Logger
	metrics  *queueMetrics
	// stopDispatch ends the dispatch loop Start began.
	stopDispatch func()
	// vacuumAfter is Config.VacuumAfter.
	vacuumAfter int
	// retention is Config.Retention, defaults filled in.
	retention Retention
	// listenPool holds River's LISTEN connection (Config.ListenURL).
	listenPool *pgxpool.Pool
	// depth is the number of pending deliveries at the last count
	// (countDepth), which the metric reports without a query per scrape.
	depth atomic.Int64
	// changed says that deliveries were made or ended since the last
	// count, so that an idle replica does not count.
	changed atomic.Bool
	// wake wakes the dispatch loop (Wake).
	wake chan struct{}
	// fallback is Config.DispatchFallback, the default filled in: also
	// how often the dispatch loop reviews whether River should run.
	fallback time.Duration
	// settleEvery is Config.SettleEvery, the default filled in.
	settleEvery time.Duration
	// working says that this replica's River client runs (keep.go);
	// want asks the dispatch loop to start it.
	working, want atomic.Bool
	// riverStarted is when River last started here, lastLive when a
	// review last found jobs to do (dispatch loop only).
	riverStarted, lastLive time.Time
}

// depthEvery is how often the dispatch loop counts pending deliveries.
const depthEvery = 5 * time.Second

// countDepth counts the pending deliveries, for webhook_queue_depth.
func (q *Queue) countDepth(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	n, err := q.client.WebhookDelivery.Query().Where(webhookdelivery.StatusEQ(webhookdelivery.StatusPENDING)).
		Count(privacy.DecisionContext(ctx, privacy.Allow))
	if err == nil {
		q.depth.Store(int64(n))
	}
}

// deliverArgs is the job of one delivery.
type deliverArgs struct {
	DeliveryID int `json:"delivery_id"`
	// Owner is the delivery's owner, so that a job whose owner has no
	// turn is put back without a query (0: unknown, read with the
	// delivery).
	Owner int `json:"owner,omitempty"`
	// Tried is how many attempts were made before this job (the first,
	// by a batch job), so that the schedule goes on from there.
	Tried int `json:"tried,omitempty"`
}

// Kind names the job in River's table.
func (deliverArgs) Kind() string { return "webhook_delivery" }

// NewQueue returns the queue over c, whose pool is db of dialect dialectName.
// It inserts jobs at once; it works them once Start is called.
func NewQueue(c *ent.Client, db *sql.DB, dialectName string, cfg Config) (*Queue, error) {
	workers := cmp.Or(cfg.Workers, defaultWorkers)
	q := &Queue{client: c, db: db, dialect: dialectName, schedule: cfg.Schedule, http: cfg.HTTPClient,
		vacuumAfter: cmp.Or(cfg.VacuumAfter, DefaultVacuumAfter),
		retention: Retention{Events: cmp.Or(cfg.Retention.Events, DefaultRetention.Events),
			Deliveries: cmp.Or(cfg.Retention.Deliveries, DefaultRetention.Deliveries),
			Every:      cmp.Or(cfg.Retention.Every, DefaultRetention.Every),
			Jobs:       cmp.Or(cfg.Retention.Jobs, DefaultRetention.Jobs)},
		log: cmp.Or(cfg.Log, slog.Default()), stopping: make(chan struct{}),
		wake: make(chan struct{}, 1), fallback: cmp.Or(cfg.DispatchFallback, DispatchFallback),
		settleEvery: cmp.Or(cfg.SettleEvery, time.Minute),
		fair:        newFair(workers, cmp.Or(cfg.OwnerShare, DefaultOwnerShare(workers)))}
	if len(q.schedule) == 0 {
		q.schedule = DefaultSchedule
	}
	if q.http == nil {
		q.http = newHTTPClient(cmp.Or(cfg.Guard, &Guard{}), workers)
	}
	q.metrics = newQueueMetrics(cfg.Metrics, q)
	ws := river.NewWorkers()
	river.AddWorker(ws, &worker{q: q})
	river.AddWorker(ws, &batchWorker{q: q})
	river.AddWorker(ws, &settleWorker{q: q})
	river.AddWorker(ws, &retainWorker{q: q})
	rc, err := q.newRiver(db, dialectName, cfg, ws, workers)
	if err != nil {
		return nil, fmt.Errorf("webhook queue: %w", err)
	}
	q.river = rc
	return q, nil
}

// ListenFallback is how often River looks for due jobs when it listens
// (Config.ListenURL): the inserts wake it, so this finds the jobs whose
// notification was missed or held back (River sends at most one per
// FetchCooldown: a job committed just after the fetch that the previous
// one caused waits for the next). River runs only while there is work
// (keep.go), so this costs an idle replica nothing.
const ListenFallback = time.Second

// newRiver makes the River client of q over db: listening on PostgreSQL
// when cfg names the URL, polling otherwise.
func (q *Queue) newRiver(db *sql.DB, dialectName string, cfg Config, ws *river.Workers, workers int) (*river.Client[*sql.Tx], error) {
	driver := database.QueueDriver(db, dialectName)
	poll := cmp.Or(cfg.PollInterval, 50*time.Millisecond)
	if cfg.ListenURL != "" && dialectName == dialect.Postgres {
		pool, err := database.QueueListenPool(context.Background(), cfg.ListenURL)
		if err != nil {
			return nil, err
		}
		q.listenPool = pool
		driver, poll = database.ListeningQueueDriver(db, pool), ListenFallback
	}
	return river.NewClient(driver, &river.Config{
		// A job waiting for its owner's turn holds a worker: twice the
		// attempts, so that an owner's attempts and waits (its share of
		// each) leave the others room.
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2 * workers}},
		Workers:           ws,
		PollOnly:          q.listenPool == nil,
		FetchPollInterval: poll,
		// A fetch as soon as a worker is free (the default waits 100 ms,
		// which caps one replica at MaxWorkers deliveries per 100 ms).
		FetchCooldown: 5 * time.Millisecond,
		// An attempt takes at most AttemptTimeout, a batch at most
		// batchTimeout; a job running for longer belonged to a replica
		// that died.
		RescueStuckJobsAfter: 3 * AttemptTimeout,
		// A delivery job's bound: the request and the bookkeeping around it.
		JobTimeout:  AttemptTimeout + 5*time.Second,
		MaxAttempts: len(q.schedule) + 1,
		// Every dispatch and delivery leaves a completed job, every
		// delivery that ends FAILED a discarded one: kept for
		// Retention.Jobs (an hour by default, not River's day and week).
		// A discarded or cancelled job is what names a delivery whose
		// outcome was lost, which the settle job (every settleEvery, and
		// before River stops: keep.go) reads: those stay two of its
		// periods at least.
		CompletedJobRetentionPeriod: q.retention.Jobs,
		DiscardedJobRetentionPeriod: max(q.retention.Jobs, 2*q.settleEvery),
		CancelledJobRetentionPeriod: max(q.retention.Jobs, 2*q.settleEvery),
		PeriodicJobs: []*river.PeriodicJob{settleJob(q.settleEvery),
			retainJob(q.retention.Every)},
		Logger: quiet(q.log),
	})
}

// MaxAnswerHeader bounds what a receiver's answer may hold before its
// body: the status line and headers, with those of any informational
// (1xx) answers before it. A longer one fails the attempt as soon as the
// bound is read, so that an attempt costs the replica a few tens of
// kilobytes whatever the receiver sends.
const MaxAnswerHeader = 16 << 10

// MaxAnswerBody is how much of an answer's body is read (and dropped): a
// longer body is not read on, its connection is closed. Trailers are
// bounded by net/http (a read buffer, 4 KB), chunk framing by its check
// of the overhead.
const MaxAnswerBody = 64 << 10

// newHTTPClient is the client that sends the deliveries: it dials through
// g, follows no redirect and ignores proxy settings. Every owner's
// attempts share it, and nothing in it makes one owner's attempt wait for
// another's: no limit of connections per host, the DNS lookups of an
// attempt within the attempt (its owner's share, its timeout), and at
// most twice workers idle connections in all (the least recently used
// are closed first).
func newHTTPClient(g *Guard, workers int) *http.Client {
	return &http.Client{
		Timeout: AttemptTimeout,
		Transport: &http.Transport{
			DialContext:            g.Dialer().DialContext,
			TLSHandshakeTimeout:    5 * time.Second,
			MaxResponseHeaderBytes: MaxAnswerHeader,
			// As many idle connections to a receiver as attempts at once,
			// so that a busy endpoint reuses its connections.
			MaxIdleConnsPerHost: workers,
			MaxIdleConns:        2 * workers,
			IdleConnTimeout:     90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// quiet passes on the queue library's warnings and errors only.
func quiet(log *slog.Logger) *slog.Logger {
	return slog.New(levelHandler{log.Handler(), slog.LevelWarn})
}

type levelHandler struct {
	slog.Handler
	min slog.Level
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

// Start dispatches new events and works due deliveries until Stop. River
// runs from the start (the leader settles and removes what the retention
// allows) and, after that, only while there is work (keep.go).
func (q *Queue) Start(ctx context.Context) error {
	if err := q.startRiver(ctx); err != nil {
		return err
	}
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { q.dispatchLoop(dctx) })
	q.stopDispatch = func() { cancel(); wg.Wait() }
	return nil
}

// Stop stops dispatching, lets running attempts finish and be recorded
// (until ctx is done; a batch starts no more and hands the rest on) and
// stops working.
func (q *Queue) Stop(ctx context.Context) error {
	q.stopOnce.Do(func() { close(q.stopping) })
	if q.stopDispatch != nil {
		q.stopDispatch()
	}
	err := q.river.Stop(ctx)
	q.working.Store(false)
	if q.listenPool != nil {
		q.listenPool.Close()
	}
	return err
}

// stopped says whether Stop was called.
func (q *Queue) stopped() bool {
	select {
	case <-q.stopping:
		return true
	default:
		return false
	}
}

// Enqueue inserts a job for each of deliveries in tx, the transaction
// that made them pending again (a redelivery).
func (q *Queue) Enqueue(ctx context.Context, tx *sql.Tx, deliveries ...int) error {
	if len(deliveries) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(deliveries))
	for i, id := range deliveries {
		params[i] = river.InsertManyParams{Args: deliverArgs{DeliveryID: id}}
	}
	_, err := q.river.InsertManyTx(ctx, tx, params)
	q.changed.Store(true)
	return err
}

// worker sends one delivery per job.
type worker struct {
	river.WorkerDefaults[deliverArgs]
	q *Queue
}

// NextRetry follows the queue's schedule.
func (w *worker) NextRetry(job *river.Job[deliverArgs]) time.Time {
	return time.Now().Add(w.q.wait(job.Attempt + job.Args.Tried))
}

// defaultWorkers is Config.Workers' default.
const defaultWorkers = 20

// wait is the pause after the attempt-th failed attempt.
func (q *Queue) wait(attempt int) time.Duration {
	return q.schedule[min(max(attempt, 1), len(q.schedule))-1]
}

// jobWait is how long a delivery job waits for a free place in the
// replica's sending when its owner's share is not the reason (other
// owners use it all): it holds a River worker meanwhile, so it is put
// back after this rather than wait for long.
const jobWait = time.Second

// Work sends the delivery and records the outcome on its row. A delivery
// that is gone (its endpoint was deleted) or no longer pending ends the
// job. A job whose owner has no turn on this replica (fair.acquire) is
// snoozed until the owner's booked turn: River puts it back without
// counting an attempt.
func (w *worker) Work(ctx context.Context, job *river.Job[deliverArgs]) error {
	q := w.q
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	var ds []delivery
	owner := job.Args.Owner
	if owner == 0 {
		var err error
		if ds, err = q.load(ctx, []int{job.Args.DeliveryID}, pickAny); err != nil || len(ds) == 0 {
			return err
		}
		owner = ds[0].owner
	}
	slot := q.fair.acquire(ctx, owner, time.Now().Add(jobWait))
	if slot == nil {
		return river.JobSnooze(q.fair.deferral(owner, 1))
	}
	released := sync.OnceFunc(slot.release)
	defer released()
	if ds == nil {
		var err error
		if ds, err = q.load(ctx, []int{job.Args.DeliveryID}, pickAny); err != nil {
			return err
		}
	}
	if len(ds) == 0 || ds[0].status != webhookdelivery.StatusPENDING {
		return nil
	}
	d := ds[0]
	// One UPDATE records the outcome (an update of one node would read
	// the row back, in a transaction of its own).
	up := q.client.WebhookDelivery.Update().Where(webhookdelivery.ID(job.Args.DeliveryID)).SetAttempts(d.attempts + 1)
	o := outcome{err: "the endpoint is disabled", failed: true}
	var sendErr error
	if d.enabled {
		o.code, sendErr = q.send(ctx, d.url, d.secret, MessageID(job.Args.DeliveryID), d.payload)
		released()
		o.err, o.failed = "", false
		if sendErr != nil {
			o.err, o.failed = sendErr.Error(), job.Attempt >= job.MaxAttempts
		}
	}
	now := time.Now()
	q.metrics.outcome(o.metric())
	if err := o.apply(up, now, now.Add(q.wait(job.Attempt+job.Args.Tried))).Exec(sys); err != nil {
		return errors.Join(sendErr, err)
	}
	return sendErr
}

// delivery is what an attempt needs of a delivery, its endpoint and its
// event.
type delivery struct {
	id, owner   int
	status      webhookdelivery.Status
	attempts    int
	url, secret string
	enabled     bool
	payload     []byte
}

// pick says which of a job's deliveries load reads.
type pick int

const (
	// pickAny reads them whatever their state.
	pickAny pick = iota
	// pickFirst reads those that wait for their first attempt: pending,
	// never attempted, not handed to a job of their own.
	pickFirst
	// pickDeferred reads those that wait for their first attempt in a
	// batch of their owner's, deferred to its turn: pending and never
	// attempted.
	pickDeferred
)

// load reads the deliveries of ids that p picks, with their endpoints and
// events, in one statement.
func (q *Queue) load(ctx context.Context, ids []int, p pick) ([]delivery, error) {
	d, e, ev := entsql.Table(webhookdelivery.Table).As("d"), entsql.Table(webhookendpoint.Table).As("e"), entsql.Table(event.Table).As("ev")
	in := make([]any, len(ids))
	for i, id := range ids {
		in[i] = id
	}
	where := entsql.In(d.C(webhookdelivery.FieldID), in...)
	if p != pickAny {
		where = entsql.And(where, entsql.EQ(d.C(webhookdelivery.FieldStatus), webhookdelivery.StatusPENDING),
			entsql.EQ(d.C(webhookdelivery.FieldAttempts), 0))
	}
	if p == pickFirst {
		where = entsql.And(where, entsql.IsNull(d.C(webhookdelivery.FieldNextAttemptAt)))
	}
	query, args := entsql.Dialect(q.dialect).
		Select(d.C(webhookdelivery.FieldID), d.C(webhookdelivery.FieldOwnerID), d.C(webhookdelivery.FieldStatus), d.C(webhookdelivery.FieldAttempts),
			e.C(webhookendpoint.FieldURL), e.C(webhookendpoint.FieldSecret), e.C(webhookendpoint.FieldEnabled), ev.C(event.FieldPayload)).
		From(d).Join(e).On(d.C(webhookdelivery.FieldEndpointID), e.C(webhookendpoint.FieldID)).
		Join(ev).On(d.C(webhookdelivery.FieldEventID), ev.C(event.FieldID)).
		Where(where).OrderBy(d.C(webhookdelivery.FieldID)).Query()
	rows, err := q.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []delivery
	for rows.Next() {
		var a delivery
		if err := rows.Scan(&a.id, &a.owner, &a.status, &a.attempts, &a.url, &a.secret, &a.enabled, &a.payload); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// MessageID is the webhook-id of a delivery: the same on every attempt of
// one event to one endpoint, so that a receiver can drop a repeat.
func MessageID(delivery int) string { return "msg_" + strconv.Itoa(delivery) }

// send POSTs body to url, signed, and returns the status code (0 when
// there was no answer) and why the attempt failed (nil for a 2xx). It
// times itself in webhook_attempt_duration_seconds.
func (q *Queue) send(ctx context.Context, url, secret, id string, body []byte) (int, error) {
	defer prometheus.NewTimer(q.metrics.duration).ObserveDuration()
	ts := time.Now().Unix()
	sig, err := Sign(secret, id, ts, body)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "configurator-catalogue-webhooks/1")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := q.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("no answer: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, MaxAnswerBody))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("the receiver answered %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// queueMetrics are the queue's Prometheus series.
type queueMetrics struct {
	outcomes *prometheus.CounterVec
	duration prometheus.Histogram
	aside    prometheus.Counter
	removed  *prometheus.CounterVec
	rebuilt  *prometheus.CounterVec
	// changed is the queue's: an outcome changes the pending count.
	changed *atomic.Bool
}

// newQueueMetrics registers the series on reg; with none (Config.Metrics
// nil) they are counted unregistered, and nobody reads them.
func newQueueMetrics(reg prometheus.Registerer, q *Queue) *queueMetrics {
	f := promauto.With(reg)
	m := &queueMetrics{
		changed: &q.changed,
		outcomes: f.NewCounterVec(prometheus.CounterOpts{
			Name: "webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: succeeded, retried (failed, another attempt is scheduled) or failed (no attempt left).",
		}, []string{"outcome"}),
		duration: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "webhook_attempt_duration_seconds",
			Help:    "Time from sending a webhook to the receiver's answer (or the failure).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		aside: f.NewCounter(prometheus.CounterOpts{
			Name: "webhook_events_set_aside_total",
			Help: "Events set aside without webhooks because their dispatch kept failing (each logged with its id and error).",
		}),
		removed: f.NewCounterVec(prometheus.CounterOpts{
			Name: "retention_removed_total",
			Help: "Rows the retention removed, by table: events, webhook_deliveries, idempotency_keys (docs/operations.md, Retention).",
		}, []string{"table"}),
		rebuilt: f.NewCounterVec(prometheus.CounterOpts{
			Name: "retention_rebuilt_total",
			Help: "Indexes of River's job table the retention rebuilt because they had outgrown the table (docs/operations.md, Retention).",
		}, []string{"index"}),
	}
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "webhook_queue_depth",
		Help: "Webhook deliveries still pending (due or waiting for a retry), counted every 5 s by the dispatch loop.",
	}, func() float64 { return float64(q.depth.Load()) })
	f.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "webhook_queue_working",
		Help: "1 while this replica's job queue runs (it has webhook jobs to do, or did within a minute), 0 while it is idle (docs/operations.md, An idle replica).",
	}, func() float64 {
		if q.working.Load() {
			return 1
		}
		return 0
	})
	return m
}

func (m *queueMetrics) outcome(o string) {
	m.outcomes.WithLabelValues(o).Inc()
	m.changed.Store(true)
}
