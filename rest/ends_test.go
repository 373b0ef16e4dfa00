package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/query"
)

// TestPagesFromEitherEnd reads every page of lists with ties in their
// sort column (both directions, a partial last page, one page past the
// end) from the start, from the end, and seeking by the order counts of
// months and of days (query.ReadPagesFrom; orders by created_at only, over
// several months with ties at midnight): REST and GraphQL must answer the
// same bytes every way, and each page must be its slice of the whole list.
func TestPagesFromEitherEnd(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		tiedRows(t, c)
		const perPage = 4

		// read answers one request with pages read from end e.
		read := func(t *testing.T, e query.End, get func() []byte) []byte {
			defer query.ReadPagesFrom(e)()
			return get()
		}
		// compare reads a list's pages both ways; ids gives the ids of an
		// answer, all the ids of the whole list.
		compare := func(t *testing.T, name string, pageOf func(p int) []byte, ids func([]byte) []int, all []int) {
			last := (len(all) + perPage - 1) / perPage
			if last < 3 {
				t.Fatalf("%s: %d rows; want several pages", name, len(all))
			}
			for p := 1; p <= last+1; p++ {
				start := read(t, query.FromStart, func() []byte { return pageOf(p) })
				var end []byte
				for _, e := range []query.End{query.FromEnd, query.SeekByMonth, query.SeekByDay} {
					end = read(t, e, func() []byte { return pageOf(p) })
					if !bytes.Equal(start, end) {
						t.Fatalf("%s page %d:\nfrom the start %s\nread by %d     %s", name, p, start, e, end)
					}
				}
				want := all[min((p-1)*perPage, len(all)):min(p*perPage, len(all))]
				if got := ids(end); !slices.Equal(got, want) {
					t.Fatalf("%s page %d: ids %v; want %v (of %v)", name, p, got, want, all)
				}
			}
		}

		restList := func(path string) (func(int) []byte, []int) {
			pageOf := func(p int) []byte {
				status, _, body := f.get(t, f.owner1, fmt.Sprintf("%s&per_page=%d&page=%d", path, perPage, p))
				if status != http.StatusOK {
					t.Fatalf("GET %s page %d = %d %s", path, p, status, body)
				}
				return body
			}
			return pageOf, f.ids(t, f.owner1, path+"&per_page=-1")
		}
		restIDs := func(body []byte) []int { return restIDsOf(t, body) }
		for _, list := range []string{"/orders", "/orders?configurator_id=1", "/orders?start_date=2026-03-01&end_date=2026-03-31",
			"/materials", "/textures", "/configurator-form-fields", "/configurator-options"} {
			sorts := map[string][]string{
				"/orders": {"created_at", "price", "status", "updated_at", "id"}, "/materials": {"created_at", "name"},
				"/textures": {"name", "updated_at"}, "/configurator-form-fields": {"position", "title"},
				"/configurator-options": {"position", "title"},
			}
			base := list
			if i := bytes.IndexByte([]byte(list), '?'); i >= 0 {
				base = list[:i]
			}
			for _, by := range sorts[base] {
				for _, dir := range []string{"asc", "desc"} {
					path := list
					if path == base {
						path += "?"
					} else {
						path += "&"
					}
					path += "order_by=" + by + "&order=" + dir
					t.Run("REST "+path, func(t *testing.T) {
						pageOf, all := restList(path)
						compare(t, path, pageOf, restIDs, all)
					})
				}
			}
		}

		// GraphQL: ordersPage with and without its pagination (its total
		// is stored, so it is read first either way), and materialsPage.
		gqlIDs := func(body []byte) []int {
			var page struct {
				P struct {
					Data []struct {
						ID int `json:",string"`
					}
				}
			}
			if err := json.Unmarshal(body, &page); err != nil {
				t.Fatalf("decode %s: %v", body, err)
			}
			var ids []int
			for _, d := range page.P.Data {
				ids = append(ids, d.ID)
			}
			return ids
		}
		for _, tc := range []struct{ name, query string }{
			{"ordersPage", `query($page: Int, $perPage: Int, $dir: OrderDirection) { p: ordersPage(page: $page, perPage: $perPage, orderBy: PRICE, order: $dir) {
				data { id price status createdAt updatedAt customerDetails configuratorSummary configurator { id name } } pagination { currentPage perPage total lastPage } } }`},
			{"ordersPage without pagination", `query($page: Int, $perPage: Int, $dir: OrderDirection) { p: ordersPage(page: $page, perPage: $perPage, orderBy: STATUS, order: $dir) {
				data { id price status configurator { id name } } } }`},
			{"ordersPage of a configurator", `query($page: Int, $perPage: Int, $dir: OrderDirection) { p: ordersPage(where: {configuratorID: "1"}, page: $page, perPage: $perPage, orderBy: CREATED_AT, order: $dir) {
				data { id createdAt } pagination { total lastPage } } }`},
			{"materialsPage", `query($page: Int, $perPage: Int, $dir: OrderDirection) { p: materialsPage(page: $page, perPage: $perPage, orderBy: NAME, order: $dir) {
				data { id name } pagination { currentPage total lastPage } } }`},
		} {
			for _, dir := range []string{"ASC", "DESC"} {
				t.Run("GraphQL "+tc.name+" "+dir, func(t *testing.T) {
					pageOf := func(p int) []byte {
						data, codes := f.graphqlResult(t, f.owner1, tc.query, map[string]any{"page": p, "perPage": perPage, "dir": dir})
						if len(codes) > 0 {
							t.Fatalf("%s page %d: %v", tc.name, p, codes)
						}
						return data
					}
					all := gqlIDs(read(t, query.FromStart, func() []byte {
						data, _ := f.graphqlResult(t, f.owner1, tc.query, map[string]any{"page": 1, "perPage": -1, "dir": dir})
						return data
					}))
					compare(t, tc.name, pageOf, gqlIDs, all)
				})
			}
		}
	})
}

// tiedRows adds rows to owner 1's lists that tie with each other in their
// sort columns: orders sharing prices, statuses and times, materials and
// textures sharing names, form fields sharing titles and positions.
func tiedRows(t *testing.T, c *ent.Client) {
	t.Helper()
	ctx := dbtest.Sys
	at := time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)
	for i := range 23 {
		dbtest.Must(c.Order.Create().SetOwnerID(1).SetConfiguratorID(1 + i%2).SetPrice(float64(10 * (i % 3))).
			SetStatus([]string{"new", "paid"}[i%2]).SetCreatedAt(at.Add(time.Duration(i%4) * time.Hour)).SetUpdatedAt(at).
			SetCustomerDetails(json.RawMessage(fmt.Sprintf(`{"name":"tied %d"}`, i))).SetConfiguratorSummary(json.RawMessage(`{}`)).Save(ctx))
	}
	// Orders over four months, tied at and just before midnights that
	// start days and months (the periods seeking skips by).
	for i, at := range []time.Time{
		time.Date(2026, 1, 31, 23, 59, 59, 999999000, time.UTC), time.Date(2026, 1, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 2, 14, 10, 0, 0, 0, time.UTC), time.Date(2026, 2, 14, 10, 0, 0, 0, time.UTC), time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 31, 23, 59, 59, 0, time.UTC), time.Date(2026, 3, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 5, 10, 8, 0, 0, 0, time.UTC),
	} {
		dbtest.Must(c.Order.Create().SetOwnerID(1).SetConfiguratorID(1 + i%2).SetPrice(float64(i % 2)).SetStatus("new").
			SetCreatedAt(at).SetUpdatedAt(at).SetCustomerDetails(json.RawMessage(fmt.Sprintf(`{"name":"dated %d"}`, i))).
			SetConfiguratorSummary(json.RawMessage(`{}`)).Save(ctx))
	}
	for i := range 9 {
		dbtest.Must(c.Material.Create().SetOwnerID(1).SetName([]string{"Oak", "Ash", "Elm"}[i%3]).Save(ctx))
		dbtest.Must(c.Texture.Create().SetOwnerID(1).SetName([]string{"Grain", "Weave"}[i%2]).SetUpdatedAt(at).Save(ctx))
		dbtest.Must(c.FormField.Create().SetOwnerID(1).SetConfiguratorID(1).SetTitle([]string{"Name", "Email"}[i%2]).SetPosition(i % 3).Save(ctx))
	}
}

// TestLongListNearerEnd: in a list longer than the rows a page must skip
// before the end is considered, the pages of its far half are read from
// the end by the service's own choice (query.Nearer), and answer what they
// answer read from the start.
func TestLongListNearerEnd(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		ctx := dbtest.Sys
		for range 3 {
			var batch []*ent.MaterialCreate
			for i := range 400 {
				batch = append(batch, c.Material.Create().SetOwnerID(1).SetName(fmt.Sprintf("Tied %d", i%7)))
			}
			dbtest.Must(c.Material.CreateBulk(batch...).Save(ctx))
		}
		all := f.ids(t, f.owner1, "/materials?order_by=name&order=desc&per_page=-1")
		if len(all) != 1225 {
			t.Fatalf("%d materials; want 1225", len(all))
		}
		for _, p := range []int{1, 10, 11, 12, 13, 14} {
			path := fmt.Sprintf("/materials?order_by=name&order=desc&per_page=100&page=%d", p)
			_, _, nearer := f.get(t, f.owner1, path)
			restore := query.ReadPagesFrom(query.FromStart)
			_, _, start := f.get(t, f.owner1, path)
			restore()
			if !bytes.Equal(nearer, start) {
				t.Fatalf("GET %s:\nnearer end     %.400s\nfrom the start %.400s", path, nearer, start)
			}
			if got, want := restIDsOf(t, nearer), all[min((p-1)*100, len(all)):min(p*100, len(all))]; !slices.Equal(got, want) {
				t.Fatalf("GET %s: ids %v; want %v", path, got, want)
			}
		}
	})
}

// restIDsOf reads the ids of a REST page, an envelope or a bare array.
func restIDsOf(t *testing.T, body []byte) []int {
	t.Helper()
	var page struct{ Data []struct{ ID int } }
	if err := json.Unmarshal(body, &page); err != nil {
		var rows []struct{ ID int }
		if err := json.Unmarshal(body, &rows); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		page.Data = rows
	}
	var ids []int
	for _, d := range page.Data {
		ids = append(ids, d.ID)
	}
	return ids
}
