package query

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/material"
	"github.com/configurator/catalogue/ent/materialcategory"
	"github.com/configurator/catalogue/internal/dbtest"
)

// TestQualifiedColumns: the statements of ent's queries select the
// columns ent's selector writes (sql.SelectTable.C), whether the query
// takes them qualified in advance (ent/template/qualified.tmpl: every
// column, or the fields selected) or has the selector write them (a
// traversal from another table); and the rows read are the right ones.
func TestQualifiedColumns(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			c, statements := logged(t, b.URL(t))
			ctx := dbtest.Sys
			A := dbtest.NewTenant(t, c, "A", "Sofa")
			cat := dbtest.Must(c.MaterialCategory.Create().SetOwnerID(A.ID).SetTitle("Woods").Save(ctx))
			for _, name := range []string{"Oak", "Ash"} {
				dbtest.Must(c.Material.Create().SetOwnerID(A.ID).SetName(name).SetCategoryID(cat.ID).Save(ctx))
			}
			d := c.Debug()
			// statement runs q and returns the statement it sent, its
			// rows' names, and ent's selector's own writing of columns.
			statement := func(name string, q *ent.MaterialQuery) (string, []string) {
				statements()
				ms, err := q.All(ctx)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var names []string
				for _, m := range ms {
					names = append(names, m.Name)
				}
				sent := statements()
				if len(sent) != 1 {
					t.Fatalf("%s: %d statements logged; want 1: %q", name, len(sent), sent)
				}
				return sent[0], names
			}
			dialectOf := map[string]string{"sqlite": dialect.SQLite, "postgres": dialect.Postgres}
			table := sql.Dialect(dialectOf[b.Name]).Table(material.Table)
			for _, tc := range []struct {
				name    string
				q       *ent.MaterialQuery
				columns []string
				names   []string
			}{
				{"every column", d.Material.Query().Order(material.ByName()), material.Columns, []string{"Ash", "Oak"}},
				{"fields selected", d.Material.Query().Select(material.FieldName).Order(material.ByID()), []string{material.FieldID, material.FieldName}, []string{"Oak", "Ash"}},
			} {
				got, names := statement(tc.name, tc.q)
				want := "SELECT " + strings.Join(table.Columns(tc.columns...), ", ") + " FROM "
				if !strings.Contains(got, want) {
					t.Errorf("%s: sent %s\nwant it to select %s", tc.name, got, want)
				}
				if !slices.Equal(names, tc.names) {
					t.Errorf("%s: read %v; want %v", tc.name, names, tc.names)
				}
			}
			// A traversal joins a subquery (its rows distinct), and the
			// selector qualifies the columns itself.
			got, names := statement("traversal", d.MaterialCategory.Query().Where(materialcategory.ID(cat.ID)).QueryMaterials().Order(material.ByName()))
			if want := "SELECT DISTINCT " + strings.Join(table.Columns(material.Columns...), ", ") + " FROM "; !strings.Contains(got, want) {
				t.Errorf("traversal: sent %s\nwant it to select %s", got, want)
			}
			if !slices.Equal(names, []string{"Ash", "Oak"}) {
				t.Errorf("traversal: read %v", names)
			}
		})
	}
}

// logged opens url with a client whose Debug() logs its statements, and
// returns it with a function that takes the statements logged since its
// last call.
func logged(t *testing.T, url string) (*ent.Client, func() []string) {
	var mu sync.Mutex
	var sent []string
	c := dbtest.Open(t, url, ent.Log(func(a ...any) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, fmt.Sprint(a...))
	}))
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		s := sent
		sent = nil
		return s
	}
}
