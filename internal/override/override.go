package override

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/configurator/catalogue/internal/valid"
)

// Variation is the part of a parameter_list entry an override can change;
// the caller copies these fields in from its own model and back out again,
// so the engine needs no knowledge of how options are stored.
type Variation struct {
	ID                  int
	Selected            bool
	ModelID             *int
	MaterialID          *int
	MaterialCategoryID  *int
	TextValue           *string
	CustomColor         *bool
	TextFontSize        *string
	TextFontFamily      *string
	TextColorCategoryID *int
	NumericalDefault    *int
	// SelectedParts are the model parts a material override names; nil when none.
	SelectedParts []string
}

// Option is a configurator option as the engine sees it: its id (the key of
// the options object), its type (which decides the allowed fields and the
// rule), and its variations.
type Option struct {
	ID         int
	Type       string
	Variations []Variation
}

// Entry is the override of one option: the variation id and the supplied
// fields (nil = not supplied), so that "keep the current value" and "set it"
// stay distinct. Its fields are in the byte order of their JSON names, the
// order of the canonical form (Data.MarshalJSON).
type Entry struct {
	CustomColor        *bool `json:"custom_color,omitzero"`
	ID                 int   `json:"id"`
	MaterialCategoryID *int  `json:"material_category_id,omitzero"`
	MaterialID         *int  `json:"material_id,omitzero"`
	ModelID            *int  `json:"model_id,omitzero"`
	NumericalDefault   *int  `json:"numerical_default,omitzero"`
	Selected           *bool `json:"selected,omitzero"`
	// SelectedParts is nil when not supplied and empty non-nil when supplied
	// empty.
	SelectedParts       []string `json:"selected_parts,omitzero"`
	TextColorCategoryID *int     `json:"text_color_category_id,omitzero"`
	TextFontFamily      *string  `json:"text_font_family,omitzero"`
	TextFontSize        *string  `json:"text_font_size,omitzero"`
	TextValue           *string  `json:"text_value,omitzero"`
}

// Data is a validated override set, keyed by option id, as stored with an
// Open API token and applied when the share link is read.
type Data map[int]Entry

// Error is a refusal of override input. Path points at the input at fault
// (options, options.12, options.12.material_id) so a client can highlight it;
// Message says what is wrong and what is expected, names the place itself,
// and is safe to show the client.
type Error struct {
	Path    string
	Message string
	err     error
}

// Error returns the message, which already names the place at fault.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying cause (such as a *json.SyntaxError), if any,
// so callers can inspect it with errors.As.
func (e *Error) Unwrap() error { return e.err }

func refuse(path, format string, args ...any) *Error {
	return &Error{Path: path, Message: fmt.Sprintf(format, args...)}
}

// The JSON kinds a field can have.
type kind int

const (
	kindInt kind = iota
	kindBool
	kindString
	kindStrings
)

func (k kind) String() string {
	return [...]string{kindInt: "an integer", kindBool: "a boolean", kindString: "a string", kindStrings: "an array of strings"}[k]
}

// json is the kind jsonKind names for a value of kind k.
func (k kind) json() string {
	return [...]string{kindInt: "a number", kindBool: "a boolean", kindString: "a string", kindStrings: "an array"}[k]
}

// fieldKinds lists every override field and its JSON kind.
var fieldKinds = map[string]kind{
	"id":                     kindInt,
	"selected":               kindBool,
	"model_id":               kindInt,
	"material_id":            kindInt,
	"material_category_id":   kindInt,
	"selected_parts":         kindStrings,
	"text_value":             kindString,
	"custom_color":           kindBool,
	"text_font_size":         kindString,
	"text_font_family":       kindString,
	"text_color_category_id": kindInt,
	"numerical_default":      kindInt,
}

var selectFields = []string{"selected"}

// typeFields lists the fields, besides id, each option type accepts. A type
// not listed accepts id only. The select-like types are those that accept
// selected: an override of one of them selects its variation.
var typeFields = map[string][]string{
	"select":       selectFields,
	"radio":        selectFields,
	"checkbox":     selectFields,
	"select_thumb": selectFields,
	"arrows":       selectFields,
	"material":     {"model_id", "material_id", "material_category_id", "selected_parts"},
	"text":         {"text_value", "custom_color", "text_font_size", "text_font_family", "text_color_category_id"},
	"numeral":      {"numerical_default"},
	"patterns":     nil,
}

// Parse checks raw, the options form field, against the configurator's
// options and returns the override set, so that nothing is stored that
// could not be applied. It returns the first problem as an *Error.
func Parse(raw []byte, options []Option) (Data, error) {
	byID := make(map[int]Option, len(options))
	for _, o := range options {
		if _, dup := byID[o.ID]; !dup {
			byID[o.ID] = o
		}
	}
	d, err := entries(raw, func(path string, id int, value json.RawMessage) (Entry, error) {
		o, ok := byID[id]
		if !ok {
			return Entry{}, refuse(path, "option %d is not an option of this configurator", id)
		}
		e, err := parseEntry(path, id, value, o.Type, slices.Sorted(slices.Values(append([]string{"id"}, typeFields[o.Type]...))))
		if err == nil && !slices.ContainsFunc(o.Variations, func(v Variation) bool { return v.ID == e.ID }) {
			err = refuse(path+".id", "option %d has no variation %d", id, e.ID)
		}
		return e, err
	})
	if err == nil && len(d) == 0 {
		return nil, refuse("options", "options must name at least one option")
	}
	return d, err
}

// Decode reads back data written by MarshalJSON. It makes the type checks of
// Parse but has no option list, since the configurator may have changed
// since the data was stored (Apply ignores what no longer fits). Unlike
// Parse it accepts an empty object, which is how empty Data is written.
func Decode(raw []byte) (Data, error) {
	fields := slices.Sorted(maps.Keys(fieldKinds))
	return entries(raw, func(path string, id int, value json.RawMessage) (Entry, error) {
		return parseEntry(path, id, value, "", fields)
	})
}

// entries reads the options object raw, each option's value with entry,
// in key order, refusing a bad or repeated key first.
func entries(raw []byte, entry func(path string, id int, value json.RawMessage) (Entry, error)) (Data, error) {
	ms, err := topMembers(raw)
	if err != nil {
		return nil, err
	}
	d := make(Data, len(ms))
	for i, m := range ms {
		path := "options." + m.key
		id, err := optionKey(path, m.key)
		if err != nil {
			return nil, err
		}
		if i > 0 && ms[i-1].key == m.key {
			return nil, refuse(path, "option %d is given more than once", id)
		}
		if d[id], err = entry(path, id, m.value); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// member is one key and value of a JSON object, in input order.
type member struct {
	key   string
	value json.RawMessage
}

// topMembers checks that raw is one JSON object and returns its members
// sorted by key in byte order (stable, so duplicates are adjacent).
func topMembers(raw []byte) ([]member, error) {
	var probe json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		e := refuse("options", "options must be valid JSON: %s", err.Error())
		var se *json.SyntaxError
		if errors.As(err, &se) {
			e.Message = fmt.Sprintf("options must be valid JSON: %s at byte %d", se.Error(), se.Offset)
		}
		e.err = err
		return nil, e
	}
	if k := jsonKind(probe); k != "an object" {
		return nil, refuse("options", "options must be a JSON object keyed by option id, got %s", k)
	}
	ms, err := members(probe)
	if err != nil {
		return nil, &Error{Path: "options", Message: "options must be valid JSON", err: err}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].key < ms[j].key })
	return ms, nil
}

// members returns the members of raw, which must be a valid JSON object.
func members(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("read object start: got %v: %w", t, err)
	}
	var ms []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("read key: %w", err)
		}
		key, ok := t.(string)
		if !ok {
			return nil, fmt.Errorf("read key: got %v", t)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("read value of %q: %w", key, err)
		}
		ms = append(ms, member{key: key, value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("read object end: %w", err)
	}
	return ms, nil
}

// jsonKind names the kind of the valid JSON value raw, for messages.
func jsonKind(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// optionKey reads an option key: a positive decimal id without sign or
// leading zeros.
func optionKey(path, key string) (int, error) {
	id, err := strconv.Atoi(key)
	if err != nil || key[0] < '1' || key[0] > '9' {
		return 0, refuse(path, "option key %q must be the id of an option in decimal, such as \"12\"", key)
	}
	return id, nil
}

// parseEntry reads the override of option id from raw. typ is the option's
// type, or "" when decoding stored data; fields are the accepted fields,
// sorted.
func parseEntry(path string, id int, raw json.RawMessage, typ string, fields []string) (Entry, error) {
	if k := jsonKind(raw); k != "an object" {
		return Entry{}, refuse(path, "option %d must be a JSON object with an integer id, got %s", id, k)
	}
	ms, err := members(raw)
	if err != nil {
		return Entry{}, &Error{Path: path, Message: fmt.Sprintf("option %d must be valid JSON", id), err: err}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].key < ms[j].key })
	hasID := false
	for i, m := range ms {
		fpath := path + "." + m.key
		if !slices.Contains(fields, m.key) {
			if typ == "" {
				return Entry{}, refuse(fpath, "option %d has unknown field %q; known fields are %s",
					id, m.key, strings.Join(fields, ", "))
			}
			return Entry{}, refuse(fpath, "option %d (%s) does not accept field %q; it accepts %s",
				id, typ, m.key, strings.Join(fields, ", "))
		}
		if i > 0 && ms[i-1].key == m.key {
			return Entry{}, refuse(fpath, "field %s of option %d is given more than once", m.key, id)
		}
		if err := checkField(fpath, id, m.key, m.value); err != nil {
			return Entry{}, err
		}
		if m.key == "id" {
			hasID = true
		}
	}
	if !hasID {
		return Entry{}, refuse(path+".id", "option %d must have an integer id, the id of one of its variations", id)
	}
	// Every field is known, given once and of its kind: encoding/json
	// reads them as they are.
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return Entry{}, &Error{Path: path, Message: fmt.Sprintf("option %d must be valid JSON", id), err: err}
	}
	return e, nil
}

// checkField checks that the value of field name is of its kind: an
// integer written as one (a positive one for id), or an array of strings
// only.
func checkField(path string, id int, name string, raw json.RawMessage) error {
	want, got := fieldKinds[name], jsonKind(raw)
	if got != want.json() {
		return refuse(path, "%s of option %d must be %s, got %s", name, id, want, got)
	}
	switch want {
	case kindInt:
		n, err := parseInt(raw)
		if err != nil {
			return refuse(path, "%s of option %d must be %s, got %s", name, id, want, err.Error())
		}
		if name == "id" && n <= 0 {
			return refuse(path, "id of option %d must be a positive integer, got %d", id, n)
		}
	case kindStrings:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return refuse(path, "%s of option %d must be %s, got %s", name, id, want, got)
		}
		for i, it := range items {
			if k := jsonKind(it); k != "a string" {
				return refuse(fmt.Sprintf("%s[%d]", path, i),
					"%s of option %d must be %s, got %s at index %d", name, id, want, k, i)
			}
		}
	}
	return nil
}

// parseInt reads a JSON number that must be written as an integer. 3.0 is
// refused like 1.5 so that a value is never rounded or truncated.
func parseInt(raw json.RawMessage) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var num json.Number
	if err := dec.Decode(&num); err != nil {
		return 0, errors.New("a malformed number")
	}
	s := num.String()
	if strings.ContainsAny(s, ".eE") {
		return 0, fmt.Errorf("a number with a fraction or exponent (%s); write whole numbers without them, such as 3", valid.Clip(s))
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("an integer out of range (%s)", valid.Clip(s))
	}
	return n, nil
}

// MarshalJSON writes the canonical form of d, so that equal content is
// stored as equal text: the shape of the input ({"12":{"id":45,"material_id":3}}),
// only supplied fields, keys of every object in byte order, no spaces.
func (d Data) MarshalJSON() ([]byte, error) {
	// encoding/json writes map keys in byte order, so "10" before "9", and
	// empty Data, nil included, as {}.
	m := map[int]Entry(d)
	if m == nil {
		m = map[int]Entry{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("marshal override data: %w", err)
	}
	return b, nil
}

// Digest returns the hex SHA-256 of the canonical form of d, so that equal
// content gives equal digests whatever the key order or whitespace of the
// posted text (for example to reuse a share link for the same overrides).
func (d Data) Digest() string {
	b, err := d.MarshalJSON()
	if err != nil {
		// Unreachable: the canonical form holds only ints, bools, strings
		// and string slices.
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Apply returns the variations of o with the override in d applied, following
// the rules of the package documentation. forUser is the open_api_for_user
// flag of the request. The result is a new slice sharing no pointers or
// slices with o or d, so the caller's option and stored data stay intact.
func Apply(o Option, d Data, forUser bool) []Variation {
	out := cloneVariations(o.Variations)
	// Nothing applies unless the read is for the user and the override
	// names one of the option's variations.
	e, ok := d[o.ID]
	if !forUser || !ok || !slices.ContainsFunc(out, func(v Variation) bool { return v.ID == e.ID }) {
		return out
	}
	if slices.Contains(typeFields[o.Type], "selected") {
		for i := range out {
			out[i].Selected = out[i].ID == e.ID
		}
		return out
	}
	for i := range out {
		v := &out[i]
		if v.ID != e.ID {
			continue
		}
		switch o.Type {
		case "material":
			setPtr(&v.ModelID, e.ModelID)
			setPtr(&v.MaterialID, e.MaterialID)
			setPtr(&v.MaterialCategoryID, e.MaterialCategoryID)
			if e.SelectedParts != nil {
				v.SelectedParts = slices.Clone(e.SelectedParts)
			}
		case "text":
			setPtr(&v.TextValue, e.TextValue)
			setPtr(&v.CustomColor, e.CustomColor)
			setPtr(&v.TextFontSize, e.TextFontSize)
			setPtr(&v.TextFontFamily, e.TextFontFamily)
			setPtr(&v.TextColorCategoryID, e.TextColorCategoryID)
		case "numeral":
			setPtr(&v.NumericalDefault, e.NumericalDefault)
		}
	}
	return out
}

// setPtr points *dst at a copy of *src when src is supplied.
func setPtr[T any](dst **T, src *T) {
	if src != nil {
		*dst = clonePtr(src)
	}
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneVariations(vs []Variation) []Variation {
	if vs == nil {
		return nil
	}
	out := make([]Variation, len(vs))
	for i, v := range vs {
		out[i] = Variation{
			ID:                  v.ID,
			Selected:            v.Selected,
			ModelID:             clonePtr(v.ModelID),
			MaterialID:          clonePtr(v.MaterialID),
			MaterialCategoryID:  clonePtr(v.MaterialCategoryID),
			TextValue:           clonePtr(v.TextValue),
			CustomColor:         clonePtr(v.CustomColor),
			TextFontSize:        clonePtr(v.TextFontSize),
			TextFontFamily:      clonePtr(v.TextFontFamily),
			TextColorCategoryID: clonePtr(v.TextColorCategoryID),
			NumericalDefault:    clonePtr(v.NumericalDefault),
			SelectedParts:       slices.Clone(v.SelectedParts),
		}
	}
	return out
}

var _ json.Marshaler = Data(nil)
