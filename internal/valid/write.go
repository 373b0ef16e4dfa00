package valid

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/configurator/catalogue/internal/apperr"
)

// MaxPrintMaps bounds the print-map images of one order.
const MaxPrintMaps = 20

// Order checks the values of a new order: a finite price of 0 or more, the
// customer details and the configurator summary as JSON objects, and at
// most MaxPrintMaps print maps. It reports every fault at once.
func Order(price float64, customerDetails, summary json.RawMessage, printMaps int) error {
	var errs apperr.List
	if math.IsNaN(price) || math.IsInf(price, 0) || price < 0 {
		errs = append(errs, apperr.Field("price", "{} must be a number of 0 or more"))
	}
	for _, o := range []struct {
		field string
		raw   json.RawMessage
	}{{"customer_details", customerDetails}, {"configurator_summary", summary}} {
		if err := Object(o.field, o.raw); err != nil {
			errs = append(errs, err.(*apperr.Error))
		}
	}
	if printMaps > MaxPrintMaps {
		errs = append(errs, apperr.Field("configurator_print_map", "{} takes at most %d images, got %d", MaxPrintMaps, printMaps))
	}
	return errs.Err()
}

// Object checks that raw, the value of field, is one JSON object.
func Object(field string, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return apperr.Field(field, "{} must be a JSON object")
	}
	return nil
}

// Name checks a name a client gives a record: it must have a character
// other than white space.
func Name(field, s string) error {
	if strings.TrimSpace(s) == "" {
		return apperr.Field(field, "{} must not be empty")
	}
	return nil
}

// TextureUpdate checks a change to a texture: a new name must not be
// empty, and a value and the request to clear it exclude each other.
func TextureUpdate(name *string, category, clearCategory, bumpFile, clearBumpFile bool) error {
	var errs apperr.List
	if name != nil {
		if err := Name("name", *name); err != nil {
			errs = append(errs, err.(*apperr.Error))
		}
	}
	if category && clearCategory {
		errs = append(errs, apperr.Field("clear_category", "give {category_id} or {}, not both"))
	}
	if bumpFile && clearBumpFile {
		errs = append(errs, apperr.Field("clear_bump_file", "give {bump_file} or {}, not both"))
	}
	return errs.Err()
}

// Nulls gives the fields a client set to null (domain names) their one
// meaning on both transports: a field that can be cleared is cleared, any
// other null is refused (BAD_REQUEST naming it), never silently ignored.
// in points at a generated update input; a field can be cleared when the
// input has its Clear flag (ClearMaterialFile for material_file,
// ClearCategory for category_id), which ent generates for exactly the
// optional fields and edges.
func Nulls(in any, fields []string) error {
	v := reflect.ValueOf(in).Elem()
	var errs apperr.List
	fields = slices.Clone(fields)
	slices.SortFunc(fields, func(a, b string) int {
		if d := inputOrder(v.Type(), a) - inputOrder(v.Type(), b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, f := range fields {
		flag := v.FieldByName("Clear" + pascal(strings.TrimSuffix(f, "_id")))
		switch {
		case !flag.IsValid():
			errs = append(errs, apperr.Field(f, "{} cannot be null"))
		case flag.Kind() == reflect.Bool:
			flag.SetBool(true)
		case flag.Kind() == reflect.Pointer && flag.Type().Elem().Kind() == reflect.Bool:
			t := true
			flag.Set(reflect.ValueOf(&t))
		default:
			errs = append(errs, apperr.Field(f, "{} cannot be null"))
		}
	}
	return errs.Err()
}

// inputOrder is the position of the domain field name among the fields
// of the input type t, so that faults are reported in the input's order;
// names it lacks come last.
func inputOrder(t reflect.Type, name string) int {
	flat := strings.ReplaceAll(name, "_", "")
	for i := range t.NumField() {
		if strings.EqualFold(t.Field(i).Name, flat) {
			return i
		}
	}
	return t.NumField()
}

// pascal turns a snake_case name into the PascalCase of Go field names.
func pascal(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}
