package rest

import (
	"net/http"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
)

func TestMaterialsGolden(t *testing.T) {
	runGolden(t, []goldenCase{
		{"materials", "/materials"},
		{"materials_filtered", "/materials?category_id=3&texture_id=9&order_by=name&order=asc"},
		{"material_1", "/materials/1"},
		// Without texture, inactive.
		{"material_7", "/materials/7"},
		{"material_categories", "/materials-categories/list"},
		{"material_categories_title", "/materials-categories/list?order_by=title&order=ASC&page=2&per_page=1"},
	})
}

func TestMaterialsBadParams(t *testing.T) {
	runBadParams(t, []badParamCase{
		{"/materials?page=x", "page"},
		{"/materials?page=0", "page"},
		{"/materials?page=2&page=3", "page"},
		{"/materials?per_page=1000", "per_page"},
		{"/materials?per_page=-5", "per_page"},
		{"/materials?per_page=1.0", "per_page"},
		{"/materials?order=random", "order"},
		{"/materials?order_by=price", "order_by"},
		{"/materials?order_by=color", "order_by"},
		{"/materials?category_id=wood", "category_id"},
		{"/materials?category_id=-1", "category_id"},
		{"/materials?category_id=1&category_id=2", "category_id"},
		{"/materials?texture_id=", "texture_id"},
		{"/materials?texture_id=1e1", "texture_id"},
		{"/materials/x", "id"},
		{"/materials/0", "id"},
		{"/materials-categories/list?order_by=name", "order_by"},
		{"/materials-categories/list?order_by=created_at&order_by=id", "order_by"},
		{"/materials-categories/list?order=newest", "order"},
	})
}

// TestBareListPages checks the page headers of the lists whose body is a
// bare array.
func TestBareListPages(t *testing.T) {
	link := func(path, next, prev string) string {
		var out []string
		if next != "" {
			out = append(out, "<"+testPublicURL+Prefix+path+"?"+next+`>; rel="next"`)
		}
		if prev != "" {
			out = append(out, "<"+testPublicURL+Prefix+path+"?"+prev+`>; rel="prev"`)
		}
		return join(out)
	}
	cases := []struct {
		path, query string
		n           int
		total       string
		link        string
	}{
		{"/materials", "", 15, "25", link("/materials", "page=2", "")},
		{"/materials", "per_page=10", 10, "25", link("/materials", "page=2&per_page=10", "")},
		{"/materials", "per_page=10&page=2", 10, "25", link("/materials", "page=3&per_page=10", "page=1&per_page=10")},
		{"/materials", "per_page=10&page=3", 5, "25", link("/materials", "", "page=2&per_page=10")},
		{"/materials", "per_page=10&page=7", 0, "25", link("/materials", "", "page=3&per_page=10")},
		{"/materials", "per_page=-1", 25, "25", ""},
		{"/materials", "per_page=4&category_id=1&order=asc", 4, "8", link("/materials", "category_id=1&order=asc&page=2&per_page=4", "")},
		{"/materials", "category_id=3&texture_id=9", 3, "3", ""},
		{"/textures", "per_page=4&page=2", 4, "10", link("/textures", "page=3&per_page=4", "page=1&per_page=4")},
		{"/textures", "per_page=-1", 10, "10", ""},
		{"/textures", "category_id=2&per_page=3", 3, "4", link("/textures", "category_id=2&page=2&per_page=3", "")},
		{"/configurator-form-fields", "per_page=3&page=3", 1, "7", link("/configurator-form-fields", "", "page=2&per_page=3")},
		{"/configurator-form-fields", "", 7, "7", ""},
		{"/configurator-options", "per_page=5", 5, "12", link("/configurator-options", "page=2&per_page=5", "")},
		{"/configurator-options", "per_page=5&page=3&order_by=title", 2, "12", link("/configurator-options", "", "order_by=title&page=2&per_page=5")},
	}
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, tc := range cases {
			t.Run(tc.path+"?"+tc.query, func(t *testing.T) {
				var items []map[string]any
				h := f.ok(t, f.owner1, tc.path+"?"+tc.query, &items)
				if len(items) != tc.n || h.Get("X-Total-Count") != tc.total || h.Get("Link") != tc.link {
					t.Errorf("GET %s?%s = %d items, X-Total-Count %q, Link %q; want %d, %q, %q",
						tc.path, tc.query, len(items), h.Get("X-Total-Count"), h.Get("Link"), tc.n, tc.total, tc.link)
				}
			})
		}
		// The category list has no pagination: page and per_page are
		// ignored like any unknown parameter.
		if got := f.ids(t, f.owner1, "/materials-categories/list?per_page=1&page=9"); len(got) != 3 {
			t.Errorf("categories with page parameters: %v; want all 3", got)
		}
		_, h, _ := f.get(t, f.owner1, "/materials-categories/list")
		if h.Get("X-Total-Count") != "" || h.Get("Link") != "" {
			t.Errorf("category list has page headers: %v", h)
		}
	})
}

func join(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

func TestMaterialCategoryOrder(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, tc := range []struct {
			query string
			want  []int
		}{
			{"", []int{3, 2, 1}}, // created_at desc by default
			{"order=asc", []int{1, 2, 3}},
			{"order_by=title&order=asc", []int{2, 3, 1}}, // Fabrics, Metals, Woods
			{"order_by=id&order=desc", []int{3, 2, 1}},
		} {
			if got := f.ids(t, f.owner1, "/materials-categories/list?"+tc.query); s(got) != s(tc.want) {
				t.Errorf("categories?%s = %v; want %v", tc.query, got, tc.want)
			}
		}
		status, _, body := f.get(t, f.owner1, "/materials/25")
		if status != http.StatusOK {
			t.Errorf("GET /materials/25 = %d: %s", status, body)
		}
	})
}
