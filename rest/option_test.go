package rest

import (
	"net/http"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
)

func TestOptionsGolden(t *testing.T) {
	runGolden(t, []goldenCase{
		{"option_types", "/configurator-options/types/list"},
		{"options", "/configurator-options"},
		{"options_by_title", "/configurator-options?order_by=title&order=desc&per_page=4&page=2"},
		// Select, material, text and numeral options.
		{"option_1", "/configurator-option/1"},
		{"option_6", "/configurator-option/6"},
		{"option_7", "/configurator-option/7"},
		{"option_8", "/configurator-option/8"},
		{"variations_6", "/configurator-option-variations?configurator_option_id=6"},
		{"variations_7", "/configurator-option-variations?configurator_option_id=7"},
		{"option_sets", "/configurator-option-sets"},
	})
}

func TestOptionsBadParams(t *testing.T) {
	runBadParams(t, []badParamCase{
		{"/configurator-options?page=first", "page"},
		{"/configurator-options?page=0", "page"},
		{"/configurator-options?per_page=-10", "per_page"},
		{"/configurator-options?per_page=", "per_page"},
		{"/configurator-options?order=DOWN", "order"},
		{"/configurator-options?order_by=type", "order_by"},
		{"/configurator-options?order_by=name", "order_by"},
		{"/configurator-options?page=1&page=1", "page"},
		{"/configurator-option/abc", "id"},
		{"/configurator-option/0", "id"},
		{"/configurator-option-variations", "configurator_option_id"},
		{"/configurator-option-variations?option_id=1", "configurator_option_id"},
		{"/configurator-option-variations?configurator_option_id=", "configurator_option_id"},
		{"/configurator-option-variations?configurator_option_id=abc", "configurator_option_id"},
		{"/configurator-option-variations?configurator_option_id=0", "configurator_option_id"},
		{"/configurator-option-variations?configurator_option_id=1&configurator_option_id=2", "configurator_option_id"},
	})
}

func TestOptionDefaultsAndOrders(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		// Options default to position order (ties by id): the first
		// option of each of owner 1's configurators, then the second...
		if got := f.ids(t, f.owner1, "/configurator-options?per_page=4"); s(got) != s([]int{1, 10, 2, 11}) {
			t.Errorf("options = %v; want [1 10 2 11]", got)
		}
		// Variations come in position order.
		var vs []struct{ ID, Position int }
		f.ok(t, f.owner1, "/configurator-option-variations?configurator_option_id=6", &vs)
		for i := 1; i < len(vs); i++ {
			if vs[i-1].Position > vs[i].Position {
				t.Errorf("variations out of position order: %v", vs)
			}
		}
		// An unknown option is 404, not an empty list.
		status, h, body := f.get(t, f.owner1, "/configurator-option-variations?configurator_option_id=999")
		problemOf(t, "variations of 999", status, h, body, http.StatusNotFound)
	})
}
