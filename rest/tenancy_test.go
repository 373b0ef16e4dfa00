package rest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
)

// TestTenancy checks that owner 1 never sees owner 2's data: by-id reads
// of owner 2's objects are 404 (as for ids that do not exist), and no list
// holds owner 2's ids. Owner 2's ids are learnt through owner 2's token.
func TestTenancy(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		catID, texID, matID := otherCatalogue(t, c)

		type kind struct {
			list, byID string // list path (per_page=-1 where paged), by-id path format
		}
		kinds := []kind{
			{"/orders?per_page=-1", "/orders/%d"},
			{"/materials?per_page=-1", "/materials/%d"},
			{"/materials-categories/list", ""},
			{"/textures?per_page=-1", "/textures/%d"},
			{"/configurator-forms", "/configurator-forms/%d"},
			{"/configurator-form-fields?per_page=-1", "/configurator-form-fields/%d"},
			{"/configurator-options?per_page=-1", "/configurator-option/%d"},
		}
		for _, k := range kinds {
			theirs := f.ids(t, f.owner2, k.list)
			mine := f.ids(t, f.owner1, k.list)
			if len(theirs) == 0 || len(mine) == 0 {
				t.Fatalf("%s: owner 1 has %v, owner 2 has %v; want rows for both", k.list, mine, theirs)
			}
			own := map[int]bool{}
			for _, id := range mine {
				own[id] = true
			}
			for _, id := range theirs {
				if own[id] {
					t.Errorf("%s: owner 1 sees id %d of owner 2", k.list, id)
				}
				if k.byID == "" {
					continue
				}
				path := fmt.Sprintf(k.byID, id)
				status, h, body := f.get(t, f.owner1, path)
				problemOf(t, "owner 1 GET "+path, status, h, body, http.StatusNotFound)
				if status, _, body := f.get(t, f.owner2, path); status != http.StatusOK {
					t.Errorf("owner 2 GET %s = %d; want 200: %s", path, status, body)
				}
			}
		}

		// Variations: an option of owner 2 is 404 for owner 1.
		for _, id := range f.ids(t, f.owner2, "/configurator-options?per_page=-1") {
			path := fmt.Sprintf("/configurator-option-variations?configurator_option_id=%d", id)
			status, h, body := f.get(t, f.owner1, path)
			problemOf(t, "owner 1 GET "+path, status, h, body, http.StatusNotFound)
			if n := len(f.ids(t, f.owner2, path)); n == 0 {
				t.Errorf("owner 2 GET %s: no variations", path)
			}
		}

		// Parameter lists and option sets hold only the owner's ids.
		var theirOptions []struct {
			ID            int
			ParameterList []struct{ ID int } `json:"parameter_list"`
		}
		f.ok(t, f.owner2, "/configurator-options?per_page=-1", &theirOptions)
		theirVariations := map[int]bool{}
		for _, o := range theirOptions {
			for _, v := range o.ParameterList {
				theirVariations[v.ID] = true
			}
		}
		var myOptions []struct {
			ParameterList []struct{ ID int } `json:"parameter_list"`
		}
		f.ok(t, f.owner1, "/configurator-options?per_page=-1", &myOptions)
		for _, o := range myOptions {
			for _, v := range o.ParameterList {
				if theirVariations[v.ID] {
					t.Errorf("owner 1 sees variation %d of owner 2", v.ID)
				}
			}
		}
		var sets struct {
			Data []struct {
				ID             int
				ConfiguratorID int `json:"configurator_id"`
				Options        []int
			}
		}
		f.ok(t, f.owner1, "/configurator-option-sets", &sets)
		for _, set := range sets.Data {
			if set.ConfiguratorID == 3 {
				t.Errorf("owner 1 sees option set %d of configurator 3", set.ID)
			}
		}
		f.ok(t, f.owner2, "/configurator-option-sets", &sets)
		if len(sets.Data) != 1 || sets.Data[0].ConfiguratorID != 3 {
			t.Errorf("owner 2 option sets = %+v; want the one of configurator 3", sets.Data)
		}

		// Filters naming another owner's rows find nothing.
		for _, path := range []string{
			"/orders?configurator_id=3",
			fmt.Sprintf("/materials?category_id=%d", catID),
			fmt.Sprintf("/materials?texture_id=%d", texID),
			fmt.Sprintf("/textures?category_id=%d", catID),
		} {
			if got := f.ids(t, f.owner1, path); len(got) != 0 {
				t.Errorf("owner 1 GET %s = %v; want nothing", path, got)
			}
		}
		if got := f.ids(t, f.owner2, fmt.Sprintf("/materials?category_id=%d", catID)); s(got) != s([]int{matID}) {
			t.Errorf("owner 2 materials of its category = %v; want [%d]", got, matID)
		}
	})
}
