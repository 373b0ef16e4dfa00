package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/testkit"
	"github.com/configurator/catalogue/internal/valid"
)

// The parity test puts every question a client can ask REST v1 to GraphQL
// too, as an integrator would: each parameter and body field with good
// values, each kind of bad value, boundaries, nulls and over-size input.
// Both transports must give the same outcome (ok, invalid, not found, too
// large, ...), the same rows in the same order, and name the field at
// fault in their own spelling: REST in problem+json errors[].name
// (snake_case), GraphQL in extensions.field (camelCase).

// outcome is the class of an answer, the same for both transports.
type outcome string

const (
	ok        outcome = "ok"
	invalid   outcome = "invalid"   // REST 400; GraphQL BAD_REQUEST or GRAPHQL_*_FAILED
	notFound  outcome = "not found" // REST 404; GraphQL NOT_FOUND
	tooBig    outcome = "too large" // REST 413; GraphQL PAYLOAD_TOO_LARGE (413)
	forbidden outcome = "forbidden" // REST 403; GraphQL FORBIDDEN
)

// restOutcome classifies a REST status.
var restOutcome = map[int]outcome{
	http.StatusOK: ok, http.StatusCreated: ok, http.StatusBadRequest: invalid, http.StatusNotFound: notFound,
	http.StatusRequestEntityTooLarge: tooBig, http.StatusForbidden: forbidden,
}

// gqlOutcome classifies a GraphQL error by its extensions.code.
var gqlOutcome = map[string]outcome{
	"BAD_REQUEST": invalid, "GRAPHQL_VALIDATION_FAILED": invalid, "GRAPHQL_PARSE_FAILED": invalid,
	"NOT_FOUND": notFound, "PAYLOAD_TOO_LARGE": tooBig, "FORBIDDEN": forbidden,
}

// answer is what one transport answered, reduced to what both must agree
// on.
type answer struct {
	outcome outcome
	// fields names the inputs at fault, in the transport's spelling.
	fields []string
	// rows are the ids of the records answered, in order, each with the
	// ids of its nested lists (rowsOf); total is the list's total, -1
	// when the answer has none.
	rows  []string
	total int
	// record is the one record a write answered, for comparing what was
	// stored (nil otherwise).
	record map[string]any
	// envelope is the message of a failure in the spec's {success,
	// message, data} envelope, which names no fields.
	envelope string
	raw      string
}

// restReq is a REST request: "METHOD /path?query" and a body.
type restReq struct {
	target      string
	contentType string
	body        []byte
}

// gqlReq is a GraphQL operation; files are sent with the GraphQL
// multipart request specification, each to the variable path it names.
type gqlReq struct {
	query string
	vars  map[string]any
	files map[string][]byte
	// size pads the request body with white space to this many bytes.
	size int
}

// ask is one question put to both transports.
type ask struct {
	name  string
	token string
	rest  restReq
	gql   gqlReq
	want  outcome
	// field is the input at fault, as REST spells it; gqlField as
	// GraphQL does. Asked of invalid answers (and of not-found ones
	// that name the reference at fault).
	field, gqlField string
	// compare picks the fields of a written record both transports must
	// have stored alike (REST and GraphQL names).
	compare [][2]string
}

// run asks a of both transports and reports every disagreement.
func (a ask) run(t *testing.T, f *fixture) {
	t.Helper()
	r := f.askREST(t, a.token, a.rest)
	g := f.askGraphQL(t, a.token, a.gql)
	if r.outcome != a.want || g.outcome != a.want {
		t.Errorf("outcome: REST %s, GraphQL %s; want %s\nREST: %s\nGraphQL: %s", r.outcome, g.outcome, a.want, clipBody([]byte(r.raw)), clipBody([]byte(g.raw)))
		return
	}
	if a.field != "" || a.gqlField != "" {
		if r.envelope != "" {
			// The envelope of the override endpoint has no field list:
			// its message names the place as the client wrote it.
			last := a.field[strings.LastIndexAny(a.field, ".")+1:]
			if !strings.Contains(r.envelope, last) {
				t.Errorf("REST message %q does not name %s", r.envelope, last)
			}
		} else if !slices.Equal(r.fields, []string{a.field}) {
			t.Errorf("REST names %q; want [%s]: %s", r.fields, a.field, clipBody([]byte(r.raw)))
		}
		if !slices.Equal(g.fields, []string{a.gqlField}) {
			t.Errorf("GraphQL names %q; want [%s]: %s", g.fields, a.gqlField, clipBody([]byte(g.raw)))
		}
	} else if a.want == invalid {
		t.Fatalf("case %s: an invalid answer must name a field", a.name)
	}
	if a.want != ok {
		return
	}
	if a.compare == nil && (!slices.Equal(r.rows, g.rows) || r.total != g.total) {
		t.Errorf("rows: REST %v (total %d)\nGraphQL %v (total %d)", r.rows, r.total, g.rows, g.total)
	}
	for _, c := range a.compare {
		if rv, gv := fmt.Sprint(r.record[c[0]]), fmt.Sprint(g.record[c[1]]); rv != gv {
			t.Errorf("stored %s: REST %s, GraphQL %s = %s", c[0], rv, c[1], gv)
		}
	}
}

// askREST sends req with token and classifies the answer.
func (f *fixture) askREST(t *testing.T, token string, req restReq) answer {
	t.Helper()
	method, target, _ := strings.Cut(req.target, " ")
	status, h, body := f.send(t, method, target, token, req.contentType, req.body)
	a := answer{outcome: restOutcome[status], total: -1, raw: fmt.Sprintf("%d %s", status, body)}
	if a.outcome == "" {
		a.outcome = outcome(strconv.Itoa(status))
	}
	if status >= 400 {
		var p problem.Body
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatalf("REST %s: %d is not problem+json: %s", req.target, status, body)
		}
		if h.Get("Content-Type") == "application/json" {
			var env struct{ Message string }
			json.Unmarshal(body, &env)
			a.envelope = env.Message
		}
		for _, e := range p.Errors {
			a.fields = append(a.fields, e.Name)
		}
		return a
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("REST %s: %v: %s", req.target, err, body)
	}
	if n := h.Get("X-Total-Count"); n != "" {
		a.total, _ = strconv.Atoi(n)
	}
	if m, isObject := v.(map[string]any); isObject {
		if p, ok := m["pagination"].(map[string]any); ok {
			a.total = int(p["total"].(float64))
		}
		if inner, ok := m["texture"].(map[string]any); ok && m["status"] == "success" {
			m = inner // POST /textures: {status, id, texture}
		}
		a.record = m
		if _, wrapped := m["data"]; wrapped {
			v = m["data"]
		}
	}
	a.rows = rowsOf(v)
	return a
}

// askGraphQL sends req with token to the GraphQL endpoint and classifies
// the answer.
func (f *fixture) askGraphQL(t *testing.T, token string, req gqlReq) answer {
	t.Helper()
	body, ct := gqlBody(t, req)
	hr := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	hr.Header.Set("Content-Type", ct)
	if token != "" {
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	f.gql.ServeHTTP(rec, hr)
	var resp struct {
		Data   map[string]any
		Errors []struct {
			Message    string
			Extensions struct {
				Code  string
				Field string
			}
		}
	}
	a := answer{outcome: ok, total: -1, raw: fmt.Sprintf("%d %s", rec.Code, rec.Body)}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("GraphQL %s: %d %v: %s", req.query, rec.Code, err, rec.Body)
	}
	if len(resp.Errors) > 0 {
		code := resp.Errors[0].Extensions.Code
		if a.outcome = gqlOutcome[code]; a.outcome == "" {
			a.outcome = outcome(code)
		}
		for _, e := range resp.Errors {
			if e.Extensions.Field != "" {
				a.fields = append(a.fields, e.Extensions.Field)
			}
		}
		return a
	}
	if len(resp.Data) != 1 {
		t.Fatalf("GraphQL %s: want one root field: %s", req.query, rec.Body)
	}
	for _, v := range resp.Data {
		if m, isObject := v.(map[string]any); isObject {
			if p, ok := m["pagination"].(map[string]any); ok {
				a.total = int(p["total"].(float64))
			}
			a.record = m
			if _, wrapped := m["data"]; wrapped {
				v = m["data"]
			}
		}
		a.rows = rowsOf(v)
	}
	return a
}

// gqlBody encodes req as JSON, or as a multipart request when it carries
// files.
func gqlBody(t *testing.T, req gqlReq) ([]byte, string) {
	t.Helper()
	ops, err := json.Marshal(map[string]any{"query": req.query, "variables": req.vars})
	if err != nil {
		t.Fatal(err)
	}
	if len(req.files) == 0 {
		if pad := req.size - len(ops); pad > 0 {
			ops = append(ops, bytes.Repeat([]byte(" "), pad)...)
		}
		return ops, "application/json"
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	paths := slices.Sorted(mapKeys(req.files))
	fileMap := map[string][]string{}
	for i, p := range paths {
		fileMap[strconv.Itoa(i)] = []string{"variables." + p}
	}
	m, _ := json.Marshal(fileMap)
	mw.WriteField("operations", string(ops))
	mw.WriteField("map", string(m))
	for i, p := range paths {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%d"; filename="upload"`, i))
		h.Set("Content-Type", "application/octet-stream")
		w, _ := mw.CreatePart(h)
		w.Write(req.files[p])
	}
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// rowsOf reduces an answer to the ids of its records, in order, each with
// the ids of its nested lists (parameter_list / variations, option-set
// options), alike in the REST and the GraphQL shapes.
func rowsOf(v any) []string {
	items, isList := v.([]any)
	if !isList {
		items = []any{v}
	}
	out := []string{}
	for _, it := range items {
		m, isObject := it.(map[string]any)
		if !isObject {
			out = append(out, idString(it))
			continue
		}
		s := idString(m["id"])
		for _, key := range []string{"parameter_list", "variations", "options"} {
			nested, isList := m[key].([]any)
			if !isList {
				continue
			}
			var ids []string
			for _, n := range nested {
				if nm, ok := n.(map[string]any); ok {
					ids = append(ids, idString(nm["id"]))
				} else {
					ids = append(ids, idString(n))
				}
			}
			s += "(" + strings.Join(ids, ",") + ")"
		}
		out = append(out, s)
	}
	return out
}

// idString renders a REST id (a JSON number) or a GraphQL ID (a string)
// alike.
func idString(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

// setPath sets vars[a][b]... = v for the dotted path "a.b".
func setPath(vars map[string]any, path string, v any) {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		vars[head] = v
		return
	}
	inner, _ := vars[head].(map[string]any)
	if inner == nil {
		inner = map[string]any{}
		vars[head] = inner
	}
	setPath(inner, rest, v)
}

// A listSpec is a REST list and the GraphQL query behind it.
type listSpec struct {
	path  string
	field string
	// decl declares the operation's variables; args passes them.
	decl, args string
	// sel selects each item; nested ids are compared too.
	sel   string
	paged bool
	// params are the list's query parameters.
	params []param
	// good are combinations of parameters, as REST query strings.
	good []string
}

// param is a query parameter of a list and the GraphQL argument it
// fills.
type param struct {
	rest string
	// gql is the variable path it fills (where.configuratorID), field the
	// name a GraphQL error gives it.
	gql, field string
	kind       kind
	// values are the good values of an enum, as REST writes them.
	values []string
}

// kind says how a parameter is written, which decides its questions.
type kind int

const (
	pageKind kind = iota
	perPageKind
	orderByKind
	orderKind
	idKind
	dateKind
)

// question is one value of a parameter, as REST and as GraphQL write it.
type question struct {
	rest string
	gql  any
	want outcome
}

// intQuestions are the values every integer parameter is asked.
var intQuestions = []question{
	{"1.5", 1.5, invalid}, {"abc", "abc", invalid}, {"", "", invalid}, {"2147483648", 2147483648, invalid},
	{"-2147483649", -2147483649, invalid},
}

// questions returns the values p is asked.
func (p param) questions() []question {
	switch p.kind {
	case pageKind:
		return append([]question{
			{"1", 1, ok}, {"2", 2, ok}, {"3", 3, ok}, {"2147483647", 2147483647, ok}, {"0", 0, invalid}, {"-1", -1, invalid},
		}, intQuestions...)
	case perPageKind:
		return append([]question{
			{"1", 1, ok}, {"7", 7, ok}, {"100", 100, ok}, {"-1", -1, ok}, {"0", 0, invalid}, {"101", 101, invalid},
			{"-2", -2, invalid}, {"2147483647", 2147483647, invalid},
		}, intQuestions...)
	case orderByKind:
		qs := []question{{"colour", "COLOUR", invalid}, {"", "", invalid}, {"id;drop table orders", "ID;DROP", invalid}}
		for _, v := range p.values {
			qs = append(qs, question{v, strings.ToUpper(v), ok})
		}
		return qs
	case orderKind:
		return []question{
			{"asc", "ASC", ok}, {"desc", "DESC", ok}, {"DESC", "DESC", ok}, {"up", "UP", invalid}, {"", "", invalid},
		}
	case idKind:
		return []question{
			{"1", "1", ok}, {"2", 2, ok}, {"3", "3", ok}, {"999999", "999999", ok}, {"9223372036854775807", "9223372036854775807", ok},
			{"0", "0", invalid}, {"-1", -1, invalid}, {"abc", "abc", invalid}, {"1.5", 1.5, invalid}, {"", "", invalid},
			{"9223372036854775808", "9223372036854775808", invalid},
		}
	case dateKind:
		return []question{
			{"2026-03-04", "2026-03-04", ok}, {"2026-03-04T00:00:00Z", "2026-03-04T00:00:00Z", ok},
			{"2026-03-04T23:30:00-02:00", "2026-03-04T23:30:00-02:00", ok}, {"2026-03-04T00:00:00", "2026-03-04T00:00:00", invalid},
			{"2026-02-30", "2026-02-30", invalid}, {"2026-13-01", "2026-13-01", invalid}, {"04/03/2026", "04/03/2026", invalid},
			{"", "", invalid}, {"20260304", 20260304, invalid},
		}
	}
	panic("unknown kind")
}

// pageParams are the paging and sorting parameters of a paged list.
func pageParams(sorts ...string) []param {
	return []param{
		{rest: "page", gql: "page", field: "page", kind: pageKind},
		{rest: "per_page", gql: "perPage", field: "perPage", kind: perPageKind},
		{rest: "order_by", gql: "orderBy", field: "orderBy", kind: orderByKind, values: sorts},
		{rest: "order", gql: "order", field: "order", kind: orderKind},
	}
}

// pageDecl declares the paging variables of a page query whose sort enum
// is sortEnum.
func pageDecl(where, sortEnum string) (decl, args string) {
	return "$where: " + where + ", $page: Int, $perPage: Int, $orderBy: " + sortEnum + ", $order: OrderDirection",
		"where: $where, page: $page, perPage: $perPage, orderBy: $orderBy, order: $order"
}

var lists = func() []listSpec {
	orderDecl, orderArgs := pageDecl("OrderWhereInput", "OrderOrderField")
	materialDecl, materialArgs := pageDecl("MaterialWhereInput", "MaterialOrderField")
	textureDecl, textureArgs := pageDecl("TextureWhereInput", "TextureOrderField")
	fieldDecl, fieldArgs := pageDecl("FormFieldWhereInput", "FormFieldOrderField")
	optionDecl, optionArgs := pageDecl("ConfiguratorOptionWhereInput", "ConfiguratorOptionOrderField")
	return []listSpec{
		{
			path: "/orders", field: "ordersPage", paged: true, sel: "id",
			decl: orderDecl + ", $startDate: Date, $endDate: Date", args: orderArgs + ", startDate: $startDate, endDate: $endDate",
			params: append(pageParams("id", "created_at", "updated_at", "price", "status"),
				param{rest: "configurator_id", gql: "where.configuratorID", field: "configuratorID", kind: idKind},
				param{rest: "start_date", gql: "startDate", field: "startDate", kind: dateKind},
				param{rest: "end_date", gql: "endDate", field: "endDate", kind: dateKind},
			),
			good: []string{
				"per_page=-1", "per_page=7&page=3", "order_by=price&order=asc", "order_by=status&order=DESC&per_page=-1",
				"configurator_id=2&per_page=-1", "start_date=2026-03-04&end_date=2026-03-06&order_by=id",
				"configurator_id=1&start_date=2026-03-02&per_page=4&page=2&order_by=updated_at&order=asc",
				"start_date=2026-03-04T00:00:00Z&end_date=2026-03-04T23:59:59Z&per_page=-1",
				"start_date=2026-03-05&end_date=2026-03-05", "page=5", "configurator_id=3",
			},
		},
		{
			path: "/materials", field: "materialsPage", paged: true, sel: "id", decl: materialDecl, args: materialArgs,
			params: append(pageParams("id", "created_at", "updated_at", "name"),
				param{rest: "category_id", gql: "where.categoryID", field: "categoryID", kind: idKind},
				param{rest: "texture_id", gql: "where.textureID", field: "textureID", kind: idKind},
			),
			good: []string{
				"per_page=-1", "per_page=10&page=3", "order_by=name&order=asc", "category_id=2&per_page=-1&order_by=updated_at",
				"texture_id=5", "category_id=3&texture_id=9&order=asc", "order_by=id&order=desc&per_page=6&page=2",
			},
		},
		{
			path: "/materials-categories/list", field: "materialCategoryList", sel: "id",
			decl: "$orderBy: MaterialCategoryOrderField, $order: OrderDirection", args: "orderBy: $orderBy, order: $order",
			params: pageParams("id", "created_at", "updated_at", "title")[2:],
			good:   []string{"order_by=title&order=desc", "order_by=id&order=asc"},
		},
		{
			path: "/textures", field: "texturesPage", paged: true, sel: "id", decl: textureDecl, args: textureArgs,
			params: append(pageParams("id", "created_at", "updated_at", "name"),
				param{rest: "category_id", gql: "where.categoryID", field: "categoryID", kind: idKind},
			),
			good: []string{"per_page=-1&order_by=name", "per_page=3&page=2", "category_id=1&order=asc", "order_by=id&per_page=4&page=3"},
		},
		{path: "/configurator-forms", field: "configuratorFormList", sel: "id"},
		{
			path: "/configurator-form-fields", field: "formFieldsPage", paged: true, sel: "id", decl: fieldDecl, args: fieldArgs,
			params: pageParams("id", "created_at", "updated_at", "title", "position"),
			good:   []string{"order_by=position&order=asc", "order_by=title&per_page=3&page=2", "per_page=-1&order=asc", "order_by=id&per_page=2&page=4"},
		},
		{
			path: "/configurator-options", field: "configuratorOptionsPage", paged: true, sel: "id variations { id }",
			decl: optionDecl, args: optionArgs,
			params: pageParams("id", "created_at", "updated_at", "title", "position"),
			good: []string{
				"per_page=-1", "order_by=title&order=desc", "order_by=created_at&per_page=5&page=2",
				"order=desc&per_page=5&page=3", "order_by=position&order=asc&per_page=-1",
			},
		},
		{
			path: "/configurator-option-variations", field: "optionVariationList", sel: "id",
			decl: "$configuratorOptionID: ID!", args: "configuratorOptionID: $configuratorOptionID",
			params: []param{{rest: "configurator_option_id", gql: "configuratorOptionID", field: "configuratorOptionID", kind: idKind}},
		},
		{path: "/configurator-option-sets", field: "optionSetList", sel: "id options { id }"},
	}
}()

// query is the GraphQL operation of the list.
func (l listSpec) query() string {
	q := "query"
	if l.decl != "" {
		q += "(" + l.decl + ")"
	}
	q += " { " + l.field
	if l.args != "" {
		q += "(" + l.args + ")"
	}
	if l.paged {
		return q + " { data { " + l.sel + " } pagination { total } } }"
	}
	return q + " { " + l.sel + " } }"
}

// ask builds the question of the REST query string query.
func (l listSpec) ask(name, token, query string, want outcome) ask {
	vals, err := url.ParseQuery(query)
	if err != nil {
		panic(err)
	}
	vars := map[string]any{}
	for _, p := range l.params {
		if v, given := vals[p.rest]; given {
			var gv any = v[0]
			switch p.kind {
			case pageKind, perPageKind:
				gv, _ = strconv.Atoi(v[0])
			case orderByKind, orderKind:
				gv = strings.ToUpper(v[0])
			}
			setPath(vars, p.gql, gv)
		}
	}
	target := "GET " + l.path
	if query != "" {
		target += "?" + query
	}
	return ask{name: name, token: token, rest: restReq{target: target}, gql: gqlReq{query: l.query(), vars: vars}, want: want}
}

// listAsks are the questions of every list: each parameter alone with
// each of its values, the good combinations, and the lists without
// parameters.
func listAsks(token string, optionIDs []string) []ask {
	var asks []ask
	for _, l := range lists {
		if l.path != "/configurator-option-variations" {
			asks = append(asks, l.ask(l.path, token, "", ok))
		}
		for _, q := range l.good {
			asks = append(asks, l.ask(l.path+"?"+q, token, q, ok))
		}
		for _, p := range l.params {
			for _, q := range p.questions() {
				query := p.rest + "=" + url.QueryEscape(q.rest)
				a := l.ask(l.path+"?"+query, token, query, q.want)
				setPath(a.gql.vars, p.gql, q.gql)
				if p.kind == idKind && l.path == "/configurator-option-variations" && q.want == ok {
					// An option id that no option of the caller's owner
					// has is not found.
					if !slices.Contains(optionIDs, q.rest) {
						a.want = notFound
					}
				}
				if q.want == invalid {
					a.field, a.gqlField = p.rest, p.field
				}
				asks = append(asks, a)
			}
		}
	}
	for _, id := range optionIDs {
		q := "configurator_option_id=" + id
		asks = append(asks, lists[7].ask("/configurator-option-variations?"+q, token, q, ok))
	}
	return asks
}

// byIDSpec is a REST read of one record and its GraphQL field.
type byIDSpec struct {
	path, field, sel string
}

var byIDs = []byIDSpec{
	{"/orders/", "order", "id"},
	{"/materials/", "material", "id"},
	{"/textures/", "texture", "id"},
	{"/configurator-forms/", "configuratorForm", "id"},
	{"/configurator-form-fields/", "formField", "id"},
	{"/configurator-option/", "configuratorOption", "id variations { id }"},
}

// byIDAsks asks each by-id read for a good id, ids that cannot exist,
// ids that are not ids, and another owner's record.
func byIDAsks(token string, othersOrder string) []ask {
	var asks []ask
	for _, b := range byIDs {
		query := "query($id: ID!) { " + b.field + "(id: $id) { " + b.sel + " } }"
		for _, q := range []question{
			{"1", "1", ok}, {"2", 2, ok}, {"999999", "999999", notFound}, {"9223372036854775807", "9223372036854775807", notFound},
			{"0", "0", invalid}, {"-1", "-1", invalid}, {"abc", "abc", invalid}, {"1.5", "1.5", invalid}, {"1e2", "1e2", invalid},
			{"9223372036854775808", "9223372036854775808", invalid}, {"%20", " ", invalid},
		} {
			a := ask{
				name: "GET " + b.path + q.rest, token: token, want: q.want,
				rest: restReq{target: "GET " + b.path + q.rest},
				gql:  gqlReq{query: query, vars: map[string]any{"id": q.gql}},
			}
			if q.want == invalid {
				a.field, a.gqlField = "id", "id"
			}
			asks = append(asks, a)
		}
	}
	asks = append(asks, ask{
		name: "another owner's order", token: token, want: notFound,
		rest: restReq{target: "GET /orders/" + othersOrder},
		gql:  gqlReq{query: "query($id: ID!) { order(id: $id) { id } }", vars: map[string]any{"id": othersOrder}},
	})
	return asks
}

// materialFields are the fields of a material both transports must store
// alike (REST and GraphQL names).
var materialFields = [][2]string{
	{"name", "name"}, {"material_file", "materialFile"}, {"category_id", "categoryID"}, {"texture_id", "textureID"},
	{"status", "status"}, {"material_type", "materialType"}, {"surface", "surface"}, {"bump", "bump"}, {"color", "color"},
	{"opacity", "opacity"}, {"specular", "specular"}, {"reflection", "reflection"}, {"created_by", "createdBy"},
}

// materialSel selects materialFields on GraphQL.
const materialSel = "id name materialFile categoryID textureID status materialType surface bump color opacity specular reflection createdBy"

// askField is a field of a JSON body: its REST and GraphQL names and the
// questions it is asked, each a JSON value as both transports take it.
type askField struct {
	rest, gql string
	values    []bodyValue
}

// bodyValue is a JSON value of a body field and the outcome it gets;
// gql is the GraphQL JSON of the same value when it is written otherwise
// there (an ID is a JSON string on GraphQL, a number on REST).
type bodyValue struct {
	json string
	want outcome
	gql  string
}

// gqlJSON is the value as GraphQL takes it.
func (v bodyValue) gqlJSON() string {
	if v.gql != "" {
		return v.gql
	}
	return v.json
}

// materialBodyFields are the writable fields of a material.
var materialBodyFields = []askField{
	{"name", "name", []bodyValue{
		{`"Teak"`, ok, ``}, {`"  Teak  "`, ok, ``}, {`"` + strings.Repeat("x", valid.MaxName) + `"`, ok, ``}, {`""`, invalid, ``},
		{`"` + strings.Repeat("x", valid.MaxName+1) + `"`, invalid, ``}, {`"` + strings.Repeat("é", valid.MaxName/2+1) + `"`, invalid, ``},
		{`12`, invalid, ``}, {`"a\u0000b"`, invalid, ``},
	}},
	{"material_file", "materialFile", []bodyValue{
		{`"https://cdn.example.com/teak.glb"`, ok, ``}, {`"/files/teak.glb"`, ok, ``}, {`"teak"`, invalid, ``}, {`true`, invalid, ``},
		{`"/files/` + strings.Repeat("x", valid.MaxURL-7) + `"`, ok, ``}, {`"/files/` + strings.Repeat("x", valid.MaxURL-6) + `"`, invalid, ``},
	}},
	{"category_id", "categoryID", []bodyValue{
		{`1`, ok, `"1"`}, {`2`, ok, `2`}, {`0`, invalid, `"0"`}, {`-1`, invalid, ``}, {`1.5`, invalid, `"1.5"`}, {`"2"`, invalid, `true`},
		{`999999`, notFound, `"999999"`},
	}},
	{"texture_id", "textureID", []bodyValue{{`1`, ok, `"1"`}, {`0`, invalid, `"0"`}, {`"abc"`, invalid, ``}, {`999999`, notFound, `"999999"`}}},
	{"status", "status", []bodyValue{{`false`, ok, ``}, {`"yes"`, invalid, ``}, {`1`, invalid, ``}}},
	{"material_type", "materialType", []bodyValue{
		{`"glossy"`, ok, ``}, {`"` + strings.Repeat("x", valid.MaxKeyword) + `"`, ok, ``}, {`"` + strings.Repeat("x", valid.MaxKeyword+1) + `"`, invalid, ``},
	}},
	{"surface", "surface", []bodyValue{{`"wood"`, ok, ``}, {`[]`, invalid, ``}, {`"` + strings.Repeat("x", valid.MaxKeyword+1) + `"`, invalid, ``}}},
	{"bump", "bump", []bodyValue{{`true`, ok, ``}, {`"true"`, invalid, ``}}},
	{"color", "color", []bodyValue{{`"#8B5A2B"`, ok, ``}, {`"#8b5a2b"`, ok, ``}, {`"red"`, invalid, ``}, {`"#8B5A2"`, invalid, ``}}},
	{"opacity", "opacity", []bodyValue{{`0`, ok, ``}, {`1`, ok, ``}, {`0.25`, ok, ``}, {`1.01`, invalid, ``}, {`-0.1`, invalid, ``}, {`"x"`, invalid, ``}, {`"0.5"`, invalid, ``}}},
	{"specular", "specular", []bodyValue{{`0.5`, ok, ``}, {`1e3`, ok, ``}, {`-1`, invalid, ``}}},
	{"reflection", "reflection", []bodyValue{{`0`, ok, ``}, {`-0.5`, invalid, ``}}},
	{"created_by", "createdBy", []bodyValue{{`"api"`, ok, ``}, {`"` + strings.Repeat("x", valid.MaxName+1) + `"`, invalid, ``}}},
}

// materialAsks asks each material field its questions on create and
// update, and the rules of null, unknown fields and size.
func materialAsks(dash string, materialID int) []ask {
	create := func(name, restBody, gqlInput string, want outcome, field, gqlField string) ask {
		var input map[string]any
		if err := json.Unmarshal([]byte(gqlInput), &input); err != nil {
			panic(fmt.Sprintf("%s: %v", gqlInput, err))
		}
		return ask{
			name: "POST /materials " + name, token: dash, want: want, field: field, gqlField: gqlField,
			rest: restReq{target: "POST /materials", contentType: "application/json", body: []byte(restBody)},
			gql: gqlReq{
				query: "mutation($input: CreateMaterialInput!) { createMaterial(input: $input) { " + materialSel + " } }",
				vars:  map[string]any{"input": input},
			},
			compare: materialFields,
		}
	}
	update := func(name, restBody, gqlInput string, want outcome, field, gqlField string) ask {
		a := create(name, restBody, gqlInput, want, field, gqlField)
		a.name = "PUT /materials/{id} " + name
		a.rest.target = fmt.Sprintf("PUT /materials/%d", materialID)
		a.gql.query = "mutation($id: ID!, $input: UpdateMaterialInput!) { updateMaterial(id: $id, input: $input) { " + materialSel + " } }"
		a.gql.vars["id"] = materialID
		return a
	}
	var asks []ask
	for _, f := range materialBodyFields {
		for _, v := range f.values {
			field, gqlField := "", ""
			if v.want != ok {
				field, gqlField = f.rest, f.gql
			}
			restBody := fmt.Sprintf(`{"name":"Teak",%q:%s}`, f.rest, v.json)
			gqlInput := fmt.Sprintf(`{"name":"Teak",%q:%s}`, f.gql, v.gqlJSON())
			if f.rest == "name" {
				restBody, gqlInput = `{"name":`+v.json+`}`, `{"name":`+v.gqlJSON()+`}`
			}
			asks = append(asks, create(f.rest+"="+clip(v.json), restBody, gqlInput, v.want, field, gqlField))
			asks = append(asks, update(f.rest+"="+clip(v.json), `{`+strconv.Quote(f.rest)+`:`+v.json+`}`, `{`+strconv.Quote(f.gql)+`:`+v.gqlJSON()+`}`, v.want, field, gqlField))
		}
	}
	// Null: absent on create for an optional field; on update, it clears
	// what can be cleared and is refused for anything else, naming it.
	for _, f := range materialBodyFields {
		clears := f.rest == "material_file" || f.rest == "category_id" || f.rest == "texture_id"
		if f.rest == "name" {
			asks = append(asks, create("name=null", `{"name":null}`, `{"name":null}`, invalid, "name", "name"))
		} else {
			asks = append(asks, create(f.rest+"=null", fmt.Sprintf(`{"name":"Teak",%q:null}`, f.rest), fmt.Sprintf(`{"name":"Teak",%q:null}`, f.gql), ok, "", ""))
		}
		if clears {
			asks = append(asks, update(f.rest+"=null", fmt.Sprintf(`{%q:null}`, f.rest), fmt.Sprintf(`{%q:null}`, f.gql), ok, "", ""))
		} else {
			asks = append(asks, update(f.rest+"=null", fmt.Sprintf(`{%q:null}`, f.rest), fmt.Sprintf(`{%q:null}`, f.gql), invalid, f.rest, f.gql))
		}
	}
	asks = append(asks,
		create("every field", `{"name":"Walnut","material_file":"https://cdn.example.com/w.glb","category_id":1,"texture_id":1,"status":true,`+
			`"material_type":"glossy","surface":"wood","bump":true,"color":"#5C4033","opacity":0.9,"specular":0.3,"reflection":0.1,"created_by":"api"}`,
			`{"name":"Walnut","materialFile":"https://cdn.example.com/w.glb","categoryID":1,"textureID":1,"status":true,`+
				`"materialType":"glossy","surface":"wood","bump":true,"color":"#5C4033","opacity":0.9,"specular":0.3,"reflection":0.1,"createdBy":"api"}`, ok, "", ""),
		create("without name", `{"color":"#FFFFFF"}`, `{"color":"#FFFFFF"}`, invalid, "name", "name"),
		create("unknown field", `{"name":"Teak","colour":"#FFFFFF"}`, `{"name":"Teak","colour":"#FFFFFF"}`, invalid, "colour", "colour"),
		update("empty", `{}`, `{}`, ok, "", ""),
		update("unknown field", `{"textValue":"x"}`, `{"textValue":"x"}`, invalid, "textValue", "textValue"),
	)
	// Over the body limit: 413 on both, before anything is read.
	big := create("over the body limit", `{"name":"`+strings.Repeat("x", valid.MaxJSONBody)+`"}`, `{"name":"x"}`, tooBig, "", "")
	big.gql.size = valid.MaxJSONBody + 1
	asks = append(asks, big)
	return asks
}

// clip shortens a long value in a case name.
func clip(s string) string {
	if r := []rune(s); len(r) > 24 {
		return string(r[:20]) + "..."
	}
	return s
}

// textureAsks asks the texture writes' fields their questions.
func textureAsks(t *testing.T, dash string, textureID int) []ask {
	img := testkit.PNG(8, 6, 2)
	create := func(name string, parts []formPart, input map[string]any, files map[string][]byte, want outcome, field, gqlField string) ask {
		body, ct := encodeForm(t, parts)
		return ask{
			name: "POST /textures " + name, token: dash, want: want, field: field, gqlField: gqlField,
			rest: restReq{target: "POST /textures", contentType: ct, body: body},
			gql: gqlReq{
				query: "mutation($input: CreateTextureInput!) { createTexture(input: $input) { id name categoryID } }",
				vars:  map[string]any{"input": input}, files: files,
			},
			compare: [][2]string{{"name", "name"}, {"category_id", "categoryID"}},
		}
	}
	update := func(name, restBody string, input string, want outcome, field, gqlField string) ask {
		var in map[string]any
		json.Unmarshal([]byte(input), &in)
		return ask{
			name: "PUT /textures/{id} " + name, token: dash, want: want, field: field, gqlField: gqlField,
			rest: restReq{target: fmt.Sprintf("PUT /textures/%d", textureID), contentType: "application/json", body: []byte(restBody)},
			gql: gqlReq{
				query: "mutation($id: ID!, $input: UpdateTextureInput!) { updateTexture(id: $id, input: $input) { id name categoryID } }",
				vars:  map[string]any{"id": textureID, "input": in},
			},
			compare: [][2]string{{"name", "name"}, {"category_id", "categoryID"}},
		}
	}
	file := map[string][]byte{"input.file": img}
	return []ask{
		create("name and file", []formPart{textPart("name", "Linen"), filePart("file", img)}, map[string]any{"name": "Linen", "file": nil}, file, ok, "", ""),
		create("category_id", []formPart{textPart("name", "Linen"), textPart("category_id", "2"), filePart("file", img)},
			map[string]any{"name": "Linen", "categoryID": "2", "file": nil}, file, ok, "", ""),
		create("category_id=0", []formPart{textPart("name", "Linen"), textPart("category_id", "0"), filePart("file", img)},
			map[string]any{"name": "Linen", "categoryID": "0", "file": nil}, file, invalid, "category_id", "categoryID"),
		create("category_id=abc", []formPart{textPart("name", "Linen"), textPart("category_id", "abc"), filePart("file", img)},
			map[string]any{"name": "Linen", "categoryID": "abc", "file": nil}, file, invalid, "category_id", "categoryID"),
		create("category_id=999999", []formPart{textPart("name", "Linen"), textPart("category_id", "999999"), filePart("file", img)},
			map[string]any{"name": "Linen", "categoryID": "999999", "file": nil}, file, notFound, "", ""),
		create("empty name", []formPart{textPart("name", " "), filePart("file", img)}, map[string]any{"name": " ", "file": nil}, file, invalid, "name", "name"),
		create("file not an image", []formPart{textPart("name", "Linen"), filePart("file", []byte("just text"))},
			map[string]any{"name": "Linen", "file": nil}, map[string][]byte{"input.file": []byte("just text")}, invalid, "file", "file"),
		create("file over the limit", []formPart{textPart("name", "Linen"), filePart("file", bytes.Repeat([]byte{0x89}, testMaxFileBytes+1))},
			map[string]any{"name": "Linen", "file": nil}, map[string][]byte{"input.file": bytes.Repeat([]byte{0x89}, testMaxFileBytes+1)}, tooBig, "", ""),
		update("name", `{"name":"Linen II"}`, `{"name":"Linen II"}`, ok, "", ""),
		update("category_id", `{"category_id":3}`, `{"categoryID":3}`, ok, "", ""),
		update("category_id=null clears", `{"category_id":null}`, `{"categoryID":null}`, ok, "", ""),
		update("category_id=0", `{"category_id":0}`, `{"categoryID":0}`, invalid, "category_id", "categoryID"),
		update("category_id=999999", `{"category_id":999999}`, `{"categoryID":999999}`, notFound, "", ""),
		update("name=null", `{"name":null}`, `{"name":null}`, invalid, "name", "name"),
		update("name empty", `{"name":""}`, `{"name":""}`, invalid, "name", "name"),
		update("name=12", `{"name":12}`, `{"name":12}`, invalid, "name", "name"),
		create("name of 255 bytes", []formPart{textPart("name", strings.Repeat("x", valid.MaxName)), filePart("file", img)},
			map[string]any{"name": strings.Repeat("x", valid.MaxName), "file": nil}, file, ok, "", ""),
		create("name over 255 bytes", []formPart{textPart("name", strings.Repeat("x", valid.MaxName+1)), filePart("file", img)},
			map[string]any{"name": strings.Repeat("x", valid.MaxName+1), "file": nil}, file, invalid, "name", "name"),
		update("name over 255 bytes", `{"name":"`+strings.Repeat("x", valid.MaxName+1)+`"}`, `{"name":"`+strings.Repeat("x", valid.MaxName+1)+`"}`, invalid, "name", "name"),
	}
}

// orderAsks asks each field of a new order its questions.
func orderAsks(t *testing.T, token string) []ask {
	img := testkit.PNG(8, 6, 1)
	good := map[string]string{"price": "249.9", "configurator_id": "1", "customer_details": `{"name":"Ada"}`, "configurator_summary": `{"Frame Size":"Grand"}`}
	gqlName := map[string]string{
		"price": "price", "configurator_id": "configuratorID", "customer_details": "customerDetails",
		"configurator_summary": "configuratorSummary", "configurator_snapshot": "configuratorSnapshot",
	}
	order := func(name string, with map[string]string, files map[string][]byte, want outcome, field string) ask {
		values := map[string]string{}
		for k, v := range good {
			values[k] = v
		}
		for k, v := range with {
			values[k] = v
		}
		var parts []formPart
		input := map[string]any{}
		for _, k := range slices.Sorted(mapKeys(values)) {
			v := values[k]
			if v == "\x00absent" {
				continue
			}
			parts = append(parts, textPart(k, v))
			var jv any = v
			switch k {
			case "price":
				if n, err := strconv.ParseFloat(v, 64); err == nil && decimal.MatchString(v) {
					jv = n
				}
			case "customer_details", "configurator_summary":
				var o any
				if json.Unmarshal([]byte(v), &o) == nil {
					jv = o
				}
			}
			input[gqlName[k]] = jv
		}
		gqlFiles := map[string][]byte{}
		for k, data := range files {
			parts = append(parts, filePart(k, data))
			if k == "configurator_snapshot" {
				input["configuratorSnapshot"] = nil
				gqlFiles["input.configuratorSnapshot"] = data
			} else {
				maps, _ := input["configuratorPrintMap"].([]any)
				gqlFiles[fmt.Sprintf("input.configuratorPrintMap.%d", len(maps))] = data
				input["configuratorPrintMap"] = append(maps, nil)
			}
		}
		body, ct := encodeForm(t, parts)
		gqlField := ""
		if field != "" {
			gqlField = gqlName[field]
			if gqlField == "" {
				gqlField = field
			}
		}
		return ask{
			name: "POST /orders " + name, token: token, want: want, field: field, gqlField: gqlField,
			rest: restReq{target: "POST /orders", contentType: ct, body: body},
			gql: gqlReq{
				query: "mutation($input: CreateOrderInput!) { createOrder(input: $input) { id price customerDetails configuratorSummary } }",
				vars:  map[string]any{"input": input}, files: gqlFiles,
			},
			compare: [][2]string{{"price", "price"}, {"customer_details", "customerDetails"}, {"configurator_summary", "configuratorSummary"}},
		}
	}
	absent := "\x00absent"
	return []ask{
		order("good", nil, nil, ok, ""),
		order("with a snapshot", nil, map[string][]byte{"configurator_snapshot": img}, ok, ""),
		order("price 0", map[string]string{"price": "0"}, nil, ok, ""),
		order("price 1e3", map[string]string{"price": "1e3"}, nil, ok, ""),
		order("price -1", map[string]string{"price": "-1"}, nil, invalid, "price"),
		order("price cheap", map[string]string{"price": "cheap"}, nil, invalid, "price"),
		order("price at the maximum", map[string]string{"price": strconv.Itoa(valid.MaxPrice)}, nil, ok, ""),
		order("price over the maximum", map[string]string{"price": strconv.Itoa(valid.MaxPrice) + ".01"}, nil, invalid, "price"),
		order("price 1e26", map[string]string{"price": "1e26"}, nil, invalid, "price"),
		order("price absent", map[string]string{"price": absent}, nil, invalid, "price"),
		order("configurator_id 2", map[string]string{"configurator_id": "2"}, nil, ok, ""),
		order("configurator_id 0", map[string]string{"configurator_id": "0"}, nil, invalid, "configurator_id"),
		order("configurator_id abc", map[string]string{"configurator_id": "abc"}, nil, invalid, "configurator_id"),
		order("configurator_id absent", map[string]string{"configurator_id": absent}, nil, invalid, "configurator_id"),
		order("configurator_id 999999", map[string]string{"configurator_id": "999999"}, nil, notFound, "configurator_id"),
		order("another owner's configurator", map[string]string{"configurator_id": "3"}, nil, notFound, "configurator_id"),
		order("customer_details empty object", map[string]string{"customer_details": "{}"}, nil, ok, ""),
		order("customer_details array", map[string]string{"customer_details": "[]"}, nil, invalid, "customer_details"),
		order("customer_details string", map[string]string{"customer_details": `"Ada"`}, nil, invalid, "customer_details"),
		order("customer_details absent", map[string]string{"customer_details": absent}, nil, invalid, "customer_details"),
		order("configurator_summary number", map[string]string{"configurator_summary": "12"}, nil, invalid, "configurator_summary"),
		order("customer_details 20 levels deep", map[string]string{"customer_details": nested(valid.MaxJSONDepth)}, nil, ok, ""),
		order("customer_details too deep", map[string]string{"customer_details": nested(valid.MaxJSONDepth + 1)}, nil, invalid, "customer_details"),
		order("configurator_summary too deep", map[string]string{"configurator_summary": nested(1000)}, nil, invalid, "configurator_summary"),
		order("customer_details too large", map[string]string{"customer_details": `{"notes":"` + strings.Repeat("x", valid.MaxJSONBytes) + `"}`}, nil, invalid, "customer_details"),
		order("snapshot not an image", nil, map[string][]byte{"configurator_snapshot": []byte("plain text")}, invalid, "configurator_snapshot"),
		order("snapshot over the limit", nil, map[string][]byte{"configurator_snapshot": bytes.Repeat([]byte{0x89}, testMaxFileBytes+1)}, tooBig, ""),
	}
}

// overrideAsks asks the override endpoint about its options field; the
// text option's unknown key textValue is named as the client wrote it.
func overrideAsks(t *testing.T, token string, textOption, textVariation, selectOption, selectVariation int) []ask {
	set := func(name, options string, want outcome, field string) ask {
		body, ct := encodeForm(t, []formPart{textPart("options", options)})
		var v any
		if err := json.Unmarshal([]byte(options), &v); err != nil {
			v = options
		}
		return ask{
			name: "POST /configurator-options/set/new-options " + name, token: token, want: want, field: field, gqlField: field,
			rest: restReq{target: "POST /configurator-options/set/new-options", contentType: ct, body: body},
			gql:  gqlReq{query: "mutation($options: Map!) { setOptionOverrides(options: $options) { url } }", vars: map[string]any{"options": v}},
			// The same overrides of the same token make the same link.
			compare: [][2]string{{"data", "url"}},
		}
	}
	text := func(entry string) string { return fmt.Sprintf(`{"%d":{"id":%d,%s}}`, textOption, textVariation, entry) }
	return []ask{
		set("select", fmt.Sprintf(`{"%d":{"id":%d}}`, selectOption, selectVariation), ok, ""),
		set("text", text(`"text_value":"Ada"`), ok, ""),
		set("unknown key textValue", text(`"textValue":"Ada"`), invalid, fmt.Sprintf("options.%d.textValue", textOption)),
		set("unknown option", `{"999999":{"id":1}}`, invalid, "options.999999"),
		set("not an object", `[]`, invalid, "options"),
		set("too deep", fmt.Sprintf(`{"%d":%s}`, selectOption, nested(valid.MaxJSONDepth)), invalid, "options"),
		set("too large", fmt.Sprintf(`{"%d":{"id":%d,"x":"%s"}}`, selectOption, selectVariation, strings.Repeat("x", valid.MaxJSONBytes)), invalid, "options"),
	}
}

// whyAsks are the disagreements that issue 9 ("One path, for real")
// found, by name; the tables above ask them too, among the rest.
func whyAsks(t *testing.T, f *fixture, material, textOption, textVariation int) []ask {
	byID := func(field, id string) gqlReq {
		return gqlReq{query: "query($id: ID!) { " + field + "(id: $id) { id } }", vars: map[string]any{"id": id}}
	}
	update := func(body string) ask {
		var input map[string]any
		json.Unmarshal([]byte(body), &input)
		return ask{
			token: f.dash1,
			rest:  restReq{target: fmt.Sprintf("PUT /materials/%d", material), contentType: "application/json", body: []byte(body)},
			gql: gqlReq{
				query: "mutation($id: ID!, $input: UpdateMaterialInput!) { updateMaterial(id: $id, input: $input) { id } }",
				vars:  map[string]any{"id": material, "input": input},
			},
		}
	}
	orders := lists[0]
	rfc3339 := orders.ask("", f.owner1, "start_date=2026-03-04T00:00:00Z&per_page=-1", ok)
	overrides := overrideAsks(t, f.owner1, textOption, textVariation, 0, 0)[2] // the unknown key textValue
	nameNull, opacityNull := update(`{"name":null}`), update(`{"opacity":null}`)
	big := materialAsks(f.dash1, material)
	over := big[len(big)-1]
	for _, a := range []*ask{&rfc3339, &overrides, &nameNull, &opacityNull, &over} {
		a.compare = nil
	}
	asks := []ask{
		{token: f.owner1, rest: restReq{target: "GET /orders/0"}, gql: byID("order", "0"), want: invalid, field: "id", gqlField: "id"},
		{token: f.owner1, rest: restReq{target: "GET /materials/-1"}, gql: byID("material", "-1"), want: invalid, field: "id", gqlField: "id"},
		{token: f.owner1, rest: restReq{target: "GET /orders/abc"}, gql: byID("order", "abc"), want: invalid, field: "id", gqlField: "id"},
		rfc3339, overrides, nameNull, opacityNull, over,
	}
	for i, name := range []string{
		"GET /orders/0 is order(id: 0)", "GET /materials/-1 is material(id: -1)", "order(id: abc) is bad input, not INTERNAL",
		"start_date as an RFC 3339 date-time", "an override's unknown key textValue is named as written",
		"a material update with name null", "a material update with opacity null", "a JSON body over the limit",
	} {
		asks[i].name = "why: " + name
	}
	asks[5].want, asks[5].field, asks[5].gqlField = invalid, "name", "name"
	asks[6].want, asks[6].field, asks[6].gqlField = invalid, "opacity", "opacity"
	return asks
}

// TestParity asks both transports every question of the v1 interface and
// requires the same answers.
func TestParity(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)

		optionIDs := map[string][]string{}
		var options []optionJSON
		f.ok(t, f.owner2, "/configurator-options?per_page=-1", &options)
		for _, o := range options {
			optionIDs[f.owner2] = append(optionIDs[f.owner2], strconv.Itoa(o.ID))
		}
		f.ok(t, f.owner1, "/configurator-options?per_page=-1", &options)
		var textOption, textVariation, selectOption, selectVariation int
		for _, o := range options {
			optionIDs[f.owner1] = append(optionIDs[f.owner1], strconv.Itoa(o.ID))
			if len(o.ParameterList) == 0 || o.ConfiguratorID != 1 {
				continue // overrides are for the token's configurator
			}
			switch o.Type {
			case "text":
				textOption, textVariation = o.ID, o.ParameterList[0].ID
			case "select":
				selectOption, selectVariation = o.ID, o.ParameterList[len(o.ParameterList)-1].ID
			}
		}
		othersOrders := f.ids(t, f.owner2, "/orders?per_page=1")
		if len(othersOrders) == 0 || textOption == 0 || selectOption == 0 {
			t.Fatalf("the demo data lacks owner 2's orders or a text or select option")
		}

		var asks []ask
		for _, token := range []string{f.owner1, f.owner2} {
			asks = append(asks, listAsks(token, optionIDs[token])...)
		}
		asks = append(asks, byIDAsks(f.owner1, strconv.Itoa(othersOrders[0]))...)
		m := f.createMaterial(t, `{"name":"Parity"}`)
		asks = append(asks, materialAsks(f.dash1, m)...)
		tex := f.createTexture(t, textPart("name", "Parity"), filePart("file", testkit.PNG(8, 6, 4)))
		asks = append(asks, textureAsks(t, f.dash1, idOf(tex))...)
		asks = append(asks, orderAsks(t, f.owner1)...)
		asks = append(asks, overrideAsks(t, f.owner1, textOption, textVariation, selectOption, selectVariation)...)
		asks = append(whyAsks(t, f, m, textOption, textVariation), asks...)

		seen := map[string]bool{}
		counts := map[outcome]int{}
		for _, a := range asks {
			name := a.name
			if a.token == f.owner2 {
				name = "owner 2 " + name
			}
			if seen[name] {
				continue // a good combination that is also a single question
			}
			seen[name] = true
			counts[a.want]++
			t.Run(name, func(t *testing.T) { a.run(t, f) })
		}
		t.Logf("%d questions asked of both transports: %v", len(asks), counts)
	})
}

// createMaterial creates a material with the dashboard token and returns
// its id.
func (f *fixture) createMaterial(t *testing.T, body string) int {
	t.Helper()
	status, _, resp := f.sendJSON(t, http.MethodPost, "/materials", f.dash1, body)
	if status != http.StatusCreated {
		t.Fatalf("create material: %d %s", status, resp)
	}
	var m struct{ ID int }
	json.Unmarshal(resp, &m)
	return m.ID
}
