package valid

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/configurator/catalogue/internal/apperr"
)

// Bounds of what clients write, the same on both transports; the OpenAPI
// document (maxLength, maximum) and the GraphQL descriptions state them,
// and a test checks that they agree.
const (
	// MaxPrintMaps bounds the print-map images of one order.
	MaxPrintMaps = 20
	// MaxPrice bounds an order's price: orders are money, and a price of
	// 1e26 is a mistake or an attack, not a sale. Below 2^53 cents, so
	// every price keeps its cents exactly.
	MaxPrice = 1_000_000_000
	// MaxJSONBytes bounds each JSON object a client stores (an order's
	// customer_details and configurator_summary, override options).
	MaxJSONBytes = 64 << 10
	// MaxJSONDepth bounds the nesting of those objects (the object itself
	// is level 1).
	MaxJSONDepth = 20
	// MaxName bounds names and other short texts (a material's or a
	// texture's name, created_by), in bytes of UTF-8: the data layer's
	// column sizes and validators (ent MaxLen), so at most as many
	// characters.
	MaxName = 255
	// MaxURL bounds URLs a client gives (a material's file), in bytes.
	MaxURL = 2048
	// MaxKeyword bounds one-word texts (a material's type and surface), in
	// bytes.
	MaxKeyword = 64
)

// Order checks the values of a new order: a finite price from 0 to
// MaxPrice, the customer details and the configurator summary as JSON
// objects within the JSON bounds that jsonb can hold, and at most
// MaxPrintMaps print maps. It reports every fault at once, and puts the
// two objects in their stored form (Stored).
func Order(price float64, customerDetails, summary *json.RawMessage, printMaps int) error {
	var errs apperr.List
	if math.IsNaN(price) || math.IsInf(price, 0) || price < 0 || price > MaxPrice {
		errs = append(errs, apperr.Field("price", "{} must be a number from 0 to %d", MaxPrice))
	}
	for _, o := range []struct {
		field string
		raw   *json.RawMessage
	}{{"customer_details", customerDetails}, {"configurator_summary", summary}} {
		stored, err := Object(o.field, *o.raw)
		if err != nil {
			errs = append(errs, err.(*apperr.Error))
			continue
		}
		*o.raw = stored
	}
	if printMaps > MaxPrintMaps {
		errs = append(errs, apperr.Field("configurator_print_map", "{} takes at most %d images, got %d", MaxPrintMaps, printMaps))
	}
	return errs.Err()
}

// Object checks that raw, the value of field, is one JSON object within
// the JSON bounds (JSON) that jsonb can hold, and returns its stored form
// (Stored).
func Object(field string, raw json.RawMessage) (json.RawMessage, error) {
	if err := JSON(field, raw); err != nil {
		return nil, err
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil, apperr.Field(field, "{} must be a JSON object")
	}
	stored, err := Stored(raw)
	if err != nil {
		return nil, apperr.Field(field, "{} cannot be stored: %s", err.Error())
	}
	return stored, nil
}

// JSON checks the size (MaxJSONBytes) and the nesting (MaxJSONDepth) of
// raw, the JSON value of field, before anything decodes it: both bound
// the work and the memory of every later step. It does not check that raw
// is valid JSON.
func JSON(field string, raw []byte) error {
	if len(raw) > MaxJSONBytes {
		return apperr.Field(field, "{} is %d bytes of JSON; the limit is %d", len(raw), MaxJSONBytes)
	}
	if depth(raw, MaxJSONDepth) > MaxJSONDepth {
		return apperr.Field(field, "{} nests more than %d levels deep", MaxJSONDepth)
	}
	return nil
}

// depth returns how deep JSON text nests its objects and arrays, counting
// up to limit+1 at most.
func depth(raw []byte, limit int) int {
	d, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			if d > deepest {
				if deepest = d; deepest > limit {
					return deepest
				}
			}
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
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
// ClearCategory for category_id, ClearInvoiceURL for invoice_url, in any
// case), which ent generates for exactly the optional fields and edges.
func Nulls(in any, fields []string) error {
	v := reflect.ValueOf(in).Elem()
	var errs apperr.List
	fields = slices.Clone(fields)
	slices.SortFunc(fields, func(a, b string) int {
		return cmp.Or(inputOrder(v.Type(), a)-inputOrder(v.Type(), b), strings.Compare(a, b))
	})
	for _, f := range fields {
		want := "Clear" + pascal(strings.TrimSuffix(f, "_id"))
		flag := v.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, want) })
		// A missing flag is the zero Value, of kind Invalid: refused below.
		switch {
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

type nullsKey struct{}

// WithNulls returns a copy of ctx that tells the mutation REST calls
// which fields of its input the client set to null (domain names), as a
// GraphQL operation tells it in its arguments, so that valid.Nulls decides
// both the same way.
func WithNulls(ctx context.Context, fields []string) context.Context {
	return context.WithValue(ctx, nullsKey{}, fields)
}

// NullsOf returns the fields WithNulls put in ctx, and whether it did.
func NullsOf(ctx context.Context) ([]string, bool) {
	fields, ok := ctx.Value(nullsKey{}).([]string)
	return fields, ok
}

// MaxStatus bounds an order's status, a free word (characters).
const MaxStatus = 64

// OrderUpdate checks the fields an order update sets: a status of 1 to
// MaxStatus characters, an absolute http(s) invoice URL, a storefront of
// at most MaxName bytes; each fault names its field.
func OrderUpdate(status, invoiceURL, storefront *string) error {
	var errs apperr.List
	if status != nil && (*status == "" || utf8.RuneCountInString(*status) > MaxStatus) {
		errs = append(errs, apperr.Field("status", "{} must be 1 to %d characters, got %d", MaxStatus, utf8.RuneCountInString(*status)))
	}
	if invoiceURL != nil {
		u, err := url.Parse(*invoiceURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(*invoiceURL) > MaxURL {
			errs = append(errs, apperr.Field("invoice_url", "{} must be an absolute http or https URL of at most %d bytes", MaxURL))
		}
	}
	if storefront != nil && len(*storefront) > MaxName {
		errs = append(errs, apperr.Field("order_storefront", "{} must be at most %d bytes, got %d", MaxName, len(*storefront)))
	}
	return errs.Err()
}
