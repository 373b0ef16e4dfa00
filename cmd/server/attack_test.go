package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// attackBound is how long any attack may take to be answered: generous,
// it only proves that nothing hangs (each is answered in milliseconds,
// which the log shows).
const attackBound = 5 * time.Second

// attackBudget is the rate limit the attacked server runs with, small
// enough to be spent by the test.
const attackBudget = 400

// extraMaterials are seeded beside the demo's 25 materials, so that the
// owner's list is longer than valid.AllPagesCeiling: per_page=-1 must
// return it whole.
const extraMaterials = 1250

// target is the real binary serving a database, with its tokens.
type target struct {
	t    *testing.T
	base string
	// owner1 and owner2 are Open API tokens of configurators 1 and 3;
	// payer is another of configurator 1, used only to measure costs.
	owner1, owner2, payer string
}

// TestAttacks attacks the real binary, built and started on loopback, as
// the failures listed by issue 10 did, on each database: each attack must
// get its clear 4xx, fast. Times are logged.
func TestAttacks(t *testing.T) {
	bin := binary(t)
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			dbURL := b.URL(t)
			tg := startTarget(t, bin, dbURL)
			tg.graphQLDocuments()
			tg.introspection()
			tg.orderInput()
			tg.scope()
			tg.costs()
			tg.revoke(bin, dbURL)
		})
	}
}

// cliBin runs the binary with args and returns its exit code, stdout and
// stderr.
func cliBin(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

var tokenIDRE = regexp.MustCompile(`created \w+ token (\d+) `)

// startTarget seeds dbURL with the demo data and extraMaterials more
// materials,
// mints tokens with the binary's own commands and serves it.
func startTarget(t *testing.T, bin, dbURL string) *target {
	if code, _, stderr := cliBin(t, bin, "seed", "--demo", "--database-url", dbURL); code != 0 {
		t.Fatalf("seed --demo: exit %d: %s", code, stderr)
	}
	c := dbtest.Open(t, dbURL)
	ctx := dbtest.Sys
	bulk := make([]*ent.MaterialCreate, extraMaterials)
	for i := range bulk {
		bulk[i] = c.Material.Create().SetOwnerID(1).SetName(fmt.Sprintf("extra %d", i))
	}
	if err := c.Material.CreateBulk(bulk...).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	mint := func(args ...string) string {
		code, out, stderr := cliBin(t, bin, append([]string{"token", "create", "--database-url", dbURL}, args...)...)
		if code != 0 {
			t.Fatalf("token create %v: exit %d: %s", args, code, stderr)
		}
		return strings.TrimSpace(out)
	}
	tg := &target{t: t, owner1: mint("--configurator", "1"), owner2: mint("--configurator", "3"), payer: mint("--configurator", "1")}

	addr := testkit.FreeAddr(t)
	cmd := exec.Command(bin, "serve", "--addr", addr, "--database-url", dbURL)
	cmd.Env = append(os.Environ(), "UPLOAD_DIR="+t.TempDir(), "DEMO=false", "DATABASE_URL=",
		"RATE_LIMIT_PER_MINUTE="+strconv.Itoa(attackBudget))
	startLogged(t, cmd, "server")
	tg.base = "http://" + addr
	waitReady(t, tg.base)
	return tg
}

// reply is what an attack got.
type reply struct {
	status int
	header http.Header
	body   []byte
	took   time.Duration
}

// send runs one attack and logs its reply and time.
func (tg *target) send(name string, req *http.Request) reply {
	tg.t.Helper()
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tg.t.Fatalf("%s: %v", name, err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	a := reply{status: res.StatusCode, header: res.Header, body: body, took: time.Since(start)}
	tg.t.Logf("attack %-58s -> %d %-22s in %s", name, a.status, a.code(), a.took.Round(10*time.Microsecond))
	if a.took > attackBound {
		tg.t.Errorf("%s took %s; it must not hang", name, a.took)
	}
	return a
}

// code is the error code of an reply: problem+json's code, the first
// GraphQL error's extensions.code, or "".
func (a reply) code() string {
	var v struct {
		Code   string
		Errors []struct{ Extensions struct{ Code string } }
	}
	json.Unmarshal(a.body, &v)
	if v.Code == "" && len(v.Errors) > 0 {
		return v.Errors[0].Extensions.Code
	}
	return v.Code
}

// graphql posts a GraphQL request accepting application/graphql-response+json.
func (tg *target) graphql(name, token, query string, vars map[string]any) reply {
	tg.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, tg.base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/graphql-response+json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return tg.send(name, req)
}

// rest sends a REST request with a body of content type ct.
func (tg *target) rest(name, method, path, token, ct string, body []byte) reply {
	tg.t.Helper()
	req, _ := http.NewRequest(method, tg.base+"/api/open-api/v1"+path, bytes.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return tg.send(name, req)
}

func (tg *target) expect(name string, a reply, status int, code string) {
	tg.t.Helper()
	if a.status != status || a.code() != code {
		tg.t.Errorf("%s: %d %s %.300s; want %d %s", name, a.status, a.code(), a.body, status, code)
	}
}

// graphQLDocuments: documents that hung the service or ran unbounded.
func (tg *target) graphQLDocuments() {
	for _, tc := range []struct{ name, query, message string }{
		{"fragment fan-out, 10 levels of 10 spreads", testkit.FanOut(10, 10), "the query selects more than 1000 fields"},
		{"depth 53 through order -> configurator -> orders", testkit.Cycle(13), "the query nests 53 levels deep; the limit is 15"},
		{"1,000 aliases of one field", testkit.Aliases(1000, "viewer { ownerID }"), "the query selects more than 1000 fields"},
		{"1,000 aliases of a leaf", testkit.Aliases(1000, "__typename"), "more than 100 aliased fields"},
		{"a document of 100 KB", "{ viewer { ownerID } }" + strings.Repeat(" ", 100_000), "the document is 100022 bytes; the limit is 65536"},
		{"complexity: 1000 orders, each with 100 orders", `{ orders(first: 1000) { edges { node { configurator { orders(first: 100) { edges { node { id } } } } } } } }`,
			"the operation's complexity is 304001; the limit is 50000"},
	} {
		a := tg.graphql(tc.name, tg.owner1, tc.query, nil)
		tg.expect(tc.name, a, http.StatusBadRequest, "QUERY_TOO_COMPLEX")
		if !strings.Contains(string(a.body), tc.message) {
			tg.t.Errorf("%s: %.300s; want it to say %q", tc.name, a.body, tc.message)
		}
	}
}

// introspection: anonymous introspection returned the whole schema. It
// needs a token (GRAPHQL_INTROSPECTION=token, the default): 401 with the
// Bearer challenge and nothing of the schema; with a token it works.
func (tg *target) introspection() {
	a := tg.graphql("anonymous introspection", "", `{ __schema { types { name } } }`, nil)
	tg.expect("anonymous introspection", a, http.StatusUnauthorized, "UNAUTHENTICATED")
	if strings.Contains(string(a.body), `"__schema"`) || strings.Contains(string(a.body), `"types"`) || !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
		tg.t.Errorf("anonymous introspection: %v %.300s; want a Bearer challenge and no schema", a.header, a.body)
	}
	if a := tg.graphql("introspection with a token", tg.owner1, `{ __schema { types { name } } }`, nil); a.status != http.StatusOK || !strings.Contains(string(a.body), `"__schema"`) {
		tg.t.Errorf("introspection with a token: %d %.300s; want the schema", a.status, a.body)
	}
	d := tg.graphql("anonymous data read", "", `{ ordersPage { data { id } } }`, nil)
	tg.expect("anonymous data read", d, http.StatusUnauthorized, "UNAUTHENTICATED")
}

// orderForm is a multipart order with the given text fields.
func orderForm(fields map[string]string) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, k := range []string{"price", "configurator_id", "customer_details", "configurator_summary"} {
		mw.WriteField(k, fields[k])
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// orderInput: bodies that were stored with 201.
func (tg *target) orderInput() {
	nested := strings.Repeat(`{"a":`, 9999) + "{}" + strings.Repeat("}", 9999)
	big := `{"notes":"` + strings.Repeat("x", 100_000) + `"}`
	for _, tc := range []struct {
		name, price, details, field string
	}{
		{"customer_details nested 10,000 levels deep", "10", nested, "customer_details"},
		{"a 100 KB string in customer_details", "10", big, "customer_details"},
		{"price=1e26", "1e26", `{"name":"Ada"}`, "price"},
	} {
		body, ct := orderForm(map[string]string{"price": tc.price, "configurator_id": "1", "customer_details": tc.details, "configurator_summary": "{}"})
		a := tg.rest("REST: "+tc.name, http.MethodPost, "/orders", tg.owner1, ct, body)
		tg.expect(tc.name, a, http.StatusBadRequest, "BAD_REQUEST")
		if !strings.Contains(string(a.body), `"name":"`+tc.field+`"`) {
			tg.t.Errorf("%s: %.300s; want it to name %s", tc.name, a.body, tc.field)
		}
		var details any
		json.Unmarshal([]byte(tc.details), &details)
		price, _ := strconv.ParseFloat(tc.price, 64)
		g := tg.graphql("GraphQL: "+tc.name, tg.owner1, `mutation($in: CreateOrderInput!) { createOrder(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"configuratorID": "1", "price": price, "customerDetails": details, "configuratorSummary": map[string]any{}}})
		// Nested 10,000 deep under the variables' own two levels, the
		// body is past encoding/json's limit: the transport refuses it
		// (400).
		if g.status != http.StatusOK && g.status != http.StatusBadRequest || g.code() != "BAD_REQUEST" || strings.Contains(string(g.body), `"createOrder":{`) {
			tg.t.Errorf("GraphQL %s: %d %s %.300s; want BAD_REQUEST and no order", tc.name, g.status, g.code(), g.body)
		}
	}
}

// scope: an Open API token creating a material that names a category it
// cannot see got 404 (the body was read before the scope was decided).
func (tg *target) scope() {
	a := tg.rest("Open API token: material naming another owner's category", http.MethodPost, "/materials", tg.owner2,
		"application/json", []byte(`{"name":"Teak","category_id":1}`))
	tg.expect("scope before body", a, http.StatusForbidden, "FORBIDDEN")
	g := tg.graphql("GraphQL: the same createMaterial", tg.owner2, `mutation { createMaterial(input: {name: "Teak", categoryID: "1"}) { id } }`, nil)
	tg.expect("GraphQL scope before body", g, http.StatusOK, "FORBIDDEN")
}

// costs: per_page=-1 and deep selections were free. Each now costs its
// rows, taken from the token's budget, and a token over budget is 429.
// The budget refills continuously (attackBudget a minute), so a cost is
// read from RateLimit-Remaining allowing for what came back meanwhile.
func (tg *target) costs() {
	remaining := func(name string, a reply) int {
		n, err := strconv.Atoi(a.header.Get("RateLimit-Remaining"))
		if err != nil || a.header.Get("RateLimit-Limit") != strconv.Itoa(attackBudget) {
			tg.t.Fatalf("%s: RateLimit headers %v", name, a.header)
		}
		return n
	}
	const deep = `{ orders(first: 1000) { edges { node { id configurator { id options { id } } } } } }`
	prev, at := attackBudget, time.Now()
	for _, tc := range []struct {
		name string
		send func(name string) reply
		cost int
	}{
		{"REST: a page of 15 materials", func(name string) reply {
			return tg.rest(name, http.MethodGet, "/materials", tg.payer, "", nil)
		}, 1},
		// 1275 rows, past the ceiling of 1000: all of them, for the
		// ceiling's 10 units, taken when the request arrives.
		{"REST: per_page=-1 of 1275 materials", func(name string) reply {
			a := tg.rest(name, http.MethodGet, "/materials?per_page=-1", tg.payer, "", nil)
			var rows []json.RawMessage
			if err := json.Unmarshal(a.body, &rows); err != nil || len(rows) != 25+extraMaterials {
				tg.t.Errorf("%s: %d rows (%v); want all %d", name, len(rows), err, 25+extraMaterials)
			}
			return a
		}, 10},
		// 1 + 1000 * (1 + 1 + 1 + (1 + 1 + (1 + 20))) = 26001 points.
		{"GraphQL: 1000 orders with their configurator's options", func(name string) reply {
			return tg.graphql(name, tg.payer, deep, nil)
		}, 27},
		// 1 + 1000 * (1 + 3) = 4001 points: perPage -1 costs its
		// ceiling, and returns every row.
		{"GraphQL: perPage -1 of 1275 materials", func(name string) reply {
			a := tg.graphql(name, tg.payer, `{ materialsPage(perPage: -1) { data { id name color } } }`, nil)
			var page struct {
				Data struct {
					MaterialsPage struct{ Data []json.RawMessage }
				}
			}
			if err := json.Unmarshal(a.body, &page); err != nil || len(page.Data.MaterialsPage.Data) != 25+extraMaterials {
				tg.t.Errorf("%s: %d rows (%v); want all %d", name, len(page.Data.MaterialsPage.Data), err, 25+extraMaterials)
			}
			return a
		}, 5},
	} {
		a := tc.send(tc.name)
		if a.status != http.StatusOK {
			tg.t.Errorf("%s: %d %.300s", tc.name, a.status, a.body)
		}
		got := remaining(tc.name, a)
		refilled := int(time.Since(at).Seconds()*attackBudget/60) + 1
		if cost := prev - got; cost > tc.cost || cost < tc.cost-refilled {
			tg.t.Errorf("%s cost %d units (remaining %d after %d); want %d", tc.name, cost, got, prev, tc.cost)
		}
		prev, at = got, time.Now()
	}
	// Spend the rest with deep selections: the token is then refused on
	// both transports, with Retry-After.
	over := func(name string, send func() reply) reply {
		for i := 0; i < 500; i++ {
			if a := send(); a.status != http.StatusOK {
				return a
			}
		}
		tg.t.Fatalf("%s: never refused", name)
		return reply{}
	}
	g := over("GraphQL", func() reply { return tg.graphql("GraphQL: deep selections until refused", tg.payer, deep, nil) })
	tg.expect("GraphQL over budget", g, http.StatusTooManyRequests, "RATE_LIMITED")
	r := over("REST", func() reply {
		return tg.rest("REST: per_page=-1 until refused", http.MethodGet, "/orders?per_page=-1", tg.payer, "", nil)
	})
	tg.expect("REST over budget", r, http.StatusTooManyRequests, "RATE_LIMITED")
	for _, a := range []reply{g, r} {
		if s, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
			tg.t.Errorf("over budget: Retry-After %q; want 1 to 60 seconds", a.header.Get("Retry-After"))
		}
	}
	if o := tg.rest("REST: another token meanwhile", http.MethodGet, "/materials/1", tg.owner1, "", nil); o.status != http.StatusOK {
		tg.t.Errorf("another token: %d; want 200, its budget is its own", o.status)
	}

	// The refusals and the operations' complexity are in the metrics.
	req, _ := http.NewRequest(http.MethodGet, tg.base+"/metrics", nil)
	scrape := string(tg.send("GET /metrics", req).body)
	for _, series := range []string{
		`http_rate_limited_total{route="/graphql"} `, `http_rate_limited_total{route="/api/open-api/v1/orders"} `,
		`graphql_operation_cost_count{operation="anonymous",type="query"} `,
	} {
		i := strings.Index(scrape, series)
		if i < 0 {
			tg.t.Errorf("metrics: no %s", series)
			continue
		}
		if n, err := strconv.ParseFloat(strings.Fields(scrape[i+len(series):])[0], 64); err != nil || n < 1 {
			tg.t.Errorf("metrics: %s%v; want 1 or more", series, n)
		}
	}
}

// revoke: `server token revoke ID --database-url URL`, the order its
// usage line shows, was a usage error.
func (tg *target) revoke(bin, dbURL string) {
	code, out, stderr := cliBin(tg.t, bin, "token", "create", "--configurator", "1", "--database-url", dbURL)
	m := tokenIDRE.FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		tg.t.Fatalf("token create: exit %d: %s", code, stderr)
	}
	token := strings.TrimSpace(out)
	viewer := func(name string) reply {
		req, _ := http.NewRequest(http.MethodGet, tg.base+"/graphql?query=%7B%20viewer%20%7B%20ownerID%20%7D%20%7D", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		return tg.send(name, req)
	}
	if a := viewer("the token before its revocation"); a.status != http.StatusOK {
		tg.t.Fatalf("the new token: %d %.300s", a.status, a.body)
	}
	start := time.Now()
	code, _, stderr = cliBin(tg.t, bin, "token", "revoke", m[1], "--database-url", dbURL)
	tg.t.Logf("attack %-58s -> exit %d in %s", "server token revoke "+m[1]+" --database-url URL", code, time.Since(start).Round(time.Millisecond))
	if code != 0 {
		tg.t.Errorf("token revoke %s --database-url URL: exit %d: %s", m[1], code, stderr)
	}
	// Refused from the next request on SQLite; on PostgreSQL as soon as
	// the revocation's notification reaches the server, counted from the
	// command's return (the command itself took 6.6 s once under CI's
	// load).
	returned := time.Now()
	for {
		a := viewer("the revoked token")
		if a.status == http.StatusUnauthorized {
			tg.t.Logf("the revoked token is refused %s after the command returned", time.Since(returned).Round(time.Millisecond))
			break
		}
		if time.Since(returned) > attackBound {
			tg.t.Errorf("the revoked token still answers %d after %s", a.status, attackBound)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, _, stderr = cliBin(tg.t, bin, "token", "revoke", "--database-url", dbURL)
	if code != 2 || !strings.Contains(stderr, "exactly one token ID") {
		tg.t.Errorf("token revoke without an id: exit %d: %s; want a usage error", code, stderr)
	}
}
