package valid

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/apperr"
)

// fault is "" for nil, else the fields of the faults of err.
func fault(err error) string {
	if err == nil {
		return ""
	}
	var names []string
	for _, e := range apperr.Errors(err) {
		names = append(names, e.Field+":"+e.Error())
	}
	return strings.Join(names, "; ")
}

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		bits int
		want int
		err  string
	}{
		{"0", 32, 0, ""}, {"-7", 32, -7, ""}, {"007", 32, 7, ""}, {"2147483647", 32, 2147483647, ""},
		{"2147483648", 32, 0, `n:n is out of range, got 2147483648`}, {"2147483648", 64, 2147483648, ""},
		{"1.5", 32, 0, `n:n must be a base-10 integer, got "1.5"`}, {"+2", 32, 0, `n:n must be a base-10 integer, got "+2"`},
		{"1e3", 32, 0, `n:n must be a base-10 integer, got "1e3"`}, {"", 32, 0, `n:n must be a base-10 integer, got ""`},
		{"-", 32, 0, `n:n must be a base-10 integer, got "-"`}, {" 1", 32, 0, `n:n must be a base-10 integer, got " 1"`},
		{"0x10", 32, 0, `n:n must be a base-10 integer, got "0x10"`},
	} {
		got, err := Int("n", tc.in, tc.bits)
		if got != tc.want || fault(err) != tc.err {
			t.Errorf("Int(%q, %d) = %d, %q; want %d, %q", tc.in, tc.bits, got, fault(err), tc.want, tc.err)
		}
	}
}

func TestID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		err  string
	}{
		{"1", 1, ""}, {"9223372036854775807", 9223372036854775807, ""},
		{"0", 0, "id:id must be a positive integer, got 0"}, {"-1", 0, "id:id must be a positive integer, got -1"},
		{"9223372036854775808", 0, "id:id is out of range, got 9223372036854775808"}, {"abc", 0, `id:id must be a base-10 integer, got "abc"`},
	} {
		got, err := ID("id", tc.in)
		if got != tc.want || fault(err) != tc.err {
			t.Errorf("ID(%q) = %d, %q; want %d, %q", tc.in, got, fault(err), tc.want, tc.err)
		}
	}
}

func TestDate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2026-03-04", "2026-03-04"},
		{"2026-03-04T00:00:00Z", "2026-03-04"},
		{"2026-03-04T23:30:00-02:00", "2026-03-05"}, // its UTC date
		{"2026-03-04T01:00:00+02:00", "2026-03-03"},
		{"2026-03-04T00:00:00", "error"}, {"2026-02-30", "error"}, {"2026-3-4", "error"}, {"04/03/2026", "error"}, {"", "error"},
	} {
		d, err := Date("start_date", tc.in)
		got := d.Format(time.DateOnly)
		if err != nil {
			got = "error"
			if fault(err) == "" || apperr.Errors(err)[0].Field != "start_date" {
				t.Errorf("Date(%q) error %v does not name start_date", tc.in, err)
			}
		} else if d.Location() != time.UTC || d.Hour() != 0 {
			t.Errorf("Date(%q) = %v; want midnight UTC", tc.in, d)
		}
		if got != tc.want {
			t.Errorf("Date(%q) = %s; want %s", tc.in, got, tc.want)
		}
	}
}

func TestDays(t *testing.T) {
	day := func(s string) *time.Time { d, _ := time.Parse(time.DateOnly, s); return &d }
	from, until, err := Days(day("2026-03-02"), day("2026-03-05"))
	if err != nil || !from.Equal(*day("2026-03-02")) || !until.Equal(*day("2026-03-06")) {
		t.Errorf("Days = %v, %v, %v; want 2026-03-02 and the start of 2026-03-06", from, until, err)
	}
	if _, _, err := Days(day("2026-03-05"), day("2026-03-01")); fault(err) != "end_date:end_date 2026-03-01 is before start_date 2026-03-05" {
		t.Errorf("end before start: %q", fault(err))
	}
	if _, _, err := Days(day("2026-03-05"), day("2026-03-05")); err != nil {
		t.Errorf("one day: %v", err)
	}
}

func TestPage(t *testing.T) {
	n := func(i int) *int { return &i }
	for _, tc := range []struct {
		page, perPage *int
		want          string
	}{
		{nil, nil, "1 15 "}, {n(3), n(100), "3 100 "}, {n(1), n(-1), "1 -1 "}, {n(2147483647), n(1), "2147483647 1 "},
		{n(0), nil, "0 0 page:page must be 1 or more, got 0"},
		{nil, n(101), "0 0 per_page:per_page must be between 1 and 100, or -1 for all records, got 101"},
		{n(-1), n(0), "0 0 page:page must be 1 or more, got -1; per_page:per_page must be between 1 and 100, or -1 for all records, got 0"},
	} {
		p, pp, err := Page(tc.page, tc.perPage)
		if got := fmt.Sprintf("%d %d %s", p, pp, fault(err)); got != tc.want {
			t.Errorf("Page = %q; want %q", got, tc.want)
		}
	}
}

// TestBoundedPage: the same rules without -1, which is refused like any
// size outside 1 to 100.
func TestBoundedPage(t *testing.T) {
	n := func(i int) *int { return &i }
	for _, tc := range []struct {
		page, perPage *int
		want          string
	}{
		{nil, nil, "1 15 "}, {n(3), n(100), "3 100 "}, {n(2), n(1), "2 1 "},
		{n(1), n(-1), "0 0 per_page:per_page must be between 1 and 100, got -1"},
		{nil, n(101), "0 0 per_page:per_page must be between 1 and 100, got 101"},
		{n(0), n(-5), "0 0 page:page must be 1 or more, got 0; per_page:per_page must be between 1 and 100, got -5"},
	} {
		p, pp, err := BoundedPage(tc.page, tc.perPage)
		if got := fmt.Sprintf("%d %d %s", p, pp, fault(err)); got != tc.want {
			t.Errorf("BoundedPage(%v, %v) = %q; want %q", tc.page, tc.perPage, got, tc.want)
		}
	}
}

// update is an input with clear flags of both kinds ent and gqlgen make.
type update struct {
	Name              *string
	ClearMaterialFile bool
	MaterialFile      *string
	Status            *bool
	ClearCategory     *bool
	CategoryID        *int
	Opacity           *float64
}

func TestNulls(t *testing.T) {
	var in update
	err := Nulls(&in, []string{"opacity", "category_id", "material_file", "status", "name"})
	if got := fault(err); got != "name:name cannot be null; status:status cannot be null; opacity:opacity cannot be null" {
		t.Errorf("Nulls faults = %q; want name, status, opacity in the input's order", got)
	}
	in = update{}
	if err := Nulls(&in, []string{"category_id", "material_file"}); err != nil || !in.ClearMaterialFile || in.ClearCategory == nil || !*in.ClearCategory {
		t.Errorf("Nulls of clearable fields = %v, %+v; want both cleared", err, in)
	}
	if err := Nulls(&in, nil); err != nil {
		t.Errorf("no nulls: %v", err)
	}
}

func TestClip(t *testing.T) {
	if got := Clip(strings.Repeat("é", 30)); got != strings.Repeat("é", 20)+"..." {
		t.Errorf("Clip cut a rune: %q", got)
	}
	if got := Clip("short"); got != "short" {
		t.Errorf("Clip(short) = %q", got)
	}
}
