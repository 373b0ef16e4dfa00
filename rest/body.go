package rest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// maxFormMemory is how much of a multipart body is held in memory; the
// rest of its files is spooled to temporary files. The limits of whole
// bodies are valid's, the same as GraphQL's.
const maxFormMemory = 8 << 20

// mediaType returns the media type of the request body, lower-cased.
func mediaType(r *http.Request) string {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return strings.ToLower(mt)
}

// unsupported is the 415 for a body of another media type.
func unsupported(r *http.Request, want ...string) error {
	got := mediaType(r)
	if got == "" {
		got = "no Content-Type"
	}
	return apperr.E(apperr.Unsupported, "%s %s takes %s, got %s", r.Method, r.URL.Path, strings.Join(want, " or "), got)
}

// limit refuses a body whose declared length is over n at once, without
// reading it, and cuts off one that turns out longer while it is read.
func limit(w http.ResponseWriter, r *http.Request, n int64) error {
	if r.ContentLength > n {
		return valid.TooLarge(n)
	}
	r.Body = http.MaxBytesReader(w, r.Body, n)
	return nil
}

// readErr maps a failure to read the body: over the limit, or a form
// with more text or parts than is held in memory, is 413; anything else
// (a malformed multipart body) 400.
func readErr(err error, n int64) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return valid.TooLarge(n)
	}
	if errors.Is(err, multipart.ErrMessageTooLarge) {
		// The text fields of a form are held in memory, within a budget
		// of their own, and so is the count of its parts.
		return apperr.E(apperr.TooLarge, "the form is too large: its text fields hold too much data, or it has too many parts")
	}
	return apperr.E(apperr.Invalid, "the request body cannot be read: %v", err)
}

// form is a parsed multipart/form-data (or urlencoded) body, read strictly:
// a text field given twice, or a file where text is expected, is an error
// naming the field.
type form struct {
	values map[string][]string
	files  map[string][]*multipart.FileHeader
	errs   apperr.List
	// opened are the uploads handed out, closed by close.
	opened []multipart.File
}

// parseForm reads a multipart/form-data body, or with urlencoded also an
// application/x-www-form-urlencoded one, within valid.MaxMultipartBody.
func parseForm(w http.ResponseWriter, r *http.Request, urlencoded bool) (*form, error) {
	mt, want := mediaType(r), []string{"multipart/form-data"}
	if urlencoded {
		want = append(want, "application/x-www-form-urlencoded")
	}
	if !slices.Contains(want, mt) {
		return nil, unsupported(r, want...)
	}
	if err := limit(w, r, valid.MaxMultipartBody); err != nil {
		return nil, err
	}
	if mt == "multipart/form-data" {
		parts := valid.BoundParts(r)
		if err := r.ParseMultipartForm(maxFormMemory); err != nil {
			if bound := parts.Err(); bound != nil {
				return nil, bound
			}
			return nil, readErr(err, valid.MaxMultipartBody)
		}
		return &form{values: r.MultipartForm.Value, files: r.MultipartForm.File}, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, readErr(err, valid.MaxMultipartBody)
	}
	return &form{values: r.PostForm}, nil
}

// close closes the uploads handed out by file and fileArray (a part over
// the in-memory budget is an open temporary file) and then removes the
// temporary files of the body; handlers that take files defer it.
func (f *form) close(r *http.Request) {
	for _, file := range f.opened {
		file.Close()
	}
	if r.MultipartForm != nil {
		r.MultipartForm.RemoveAll()
	}
}

func (f *form) fail(name, format string, args ...any) {
	f.errs = append(f.errs, apperr.Field(name, format, args...))
}

// err returns the collected faults, or nil.
func (f *form) err() error { return f.errs.Err() }

// text returns the one text value of name; absent is ok false.
func (f *form) text(name string) (string, bool) {
	vs := f.values[name]
	if len(f.files[name]) > 0 {
		f.fail(name, "{} must be a text field, not a file")
		return "", false
	}
	switch len(vs) {
	case 0:
		return "", false
	case 1:
		return vs[0], true
	}
	f.fail(name, "{} is given %d times; give it once", len(vs))
	return "", false
}

// required returns the text value of name, or records that it is missing.
func (f *form) required(name string) (string, bool) {
	v, ok := f.text(name)
	if !ok && len(f.values[name]) == 0 && len(f.files[name]) == 0 {
		f.fail(name, "{} is required")
	}
	return v, ok
}

// decimal matches a number as people write it: decimal digits with an
// optional sign, fraction and exponent. strconv.ParseFloat alone would
// also take hexadecimal, digit separators, NaN and Inf.
var decimal = regexp.MustCompile(`^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$`)

// float reads a required decimal number.
func (f *form) float(name string) float64 {
	s, ok := f.required(name)
	if !ok {
		return 0
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !decimal.MatchString(strings.TrimSpace(s)) {
		f.fail(name, "{} must be a decimal number, got %q", valid.Clip(s))
	}
	return n
}

// id reads a record id (valid.ID), white space around it aside;
// required says whether it must be there.
func (f *form) id(name string, required bool) *int {
	read := f.text
	if required {
		read = f.required
	}
	s, ok := read(name)
	if !ok {
		return nil
	}
	n, err := valid.ID(name, strings.TrimSpace(s))
	if err != nil {
		f.errs = append(f.errs, apperr.Errors(err)...)
		return nil
	}
	return &n
}

// object reads a required text field holding a JSON object.
func (f *form) object(name string) json.RawMessage {
	s, ok := f.required(name)
	if !ok {
		return nil
	}
	m, err := decodeObject(s)
	if err != nil {
		f.fail(name, "{} must be a JSON object: %v", err)
	}
	return m
}

// decodeObject checks that s is one JSON object and returns it as raw
// JSON, stored and served back as sent.
func decodeObject(s string) (json.RawMessage, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	var m json.RawMessage
	if err := dec.Decode(&m); err != nil {
		return nil, jsonProblem(err)
	}
	if !atEnd(dec) {
		return nil, errors.New("unexpected data after the object")
	}
	switch m[0] {
	case '{':
		return m, nil
	case 'n':
		return nil, errors.New("got null")
	}
	kind := map[byte]string{'[': "array", '"': "string", 't': "bool", 'f': "bool"}[m[0]]
	return nil, fmt.Errorf("expected an object, got a JSON %s", cmp.Or(kind, "number"))
}

// atEnd reports whether nothing but white space follows the value dec
// decoded. dec.More is not enough: it answers false before a stray ] or }.
func atEnd(dec *json.Decoder) bool {
	_, err := dec.Token()
	return err == io.EOF
}

// jsonProblem describes a JSON decoding error without Go type names.
func jsonProblem(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Errorf("%s must be %s, got a JSON %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return fmt.Errorf("expected %s, got a JSON %s", jsonKind(te.Type.Kind().String()), te.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON ends early")
	}
	return errors.New("invalid JSON")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "float32", "float64":
		return "a number"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	}
	return "another type"
}

// file returns the upload of name, at most one; nil when absent.
func (f *form) file(name string) *graphql.Upload {
	fs := f.files[name]
	if len(f.values[name]) > 0 {
		f.fail(name, "{} must be a file")
		return nil
	}
	switch len(fs) {
	case 0:
		return nil
	case 1:
		return f.open(name, fs[0])
	}
	f.fail(name, "{} takes one file, got %d", len(fs))
	return nil
}

// arrayIndex matches the index of a PHP-style array field, name[3]; like
// PHP it takes no leading zeros (name[01] would be the same element as
// name[1]).
var arrayIndex = regexp.MustCompile(`^\[(0|[1-9]\d{0,2})\]$`)

// fileArray returns the uploads of an array field, in order. Clients send
// arrays as repeated name, as name[] or as name[0], name[1], ... (the
// forms PHP and most HTTP clients use); indexed parts are ordered by index
// (numerically, gaps allowed) and follow the others. Text under any of
// these names, an index given twice and any other name[...] are errors
// naming the part, so no part a client meant as an element is dropped.
func (f *form) fileArray(name string) []*graphql.Upload {
	var headers []*multipart.FileHeader
	headers = append(headers, f.files[name]...)
	headers = append(headers, f.files[name+"[]"]...)
	indexed := map[int]*multipart.FileHeader{}
	maxIndex := -1
	for _, key := range f.arrayKeys(name) {
		m := arrayIndex.FindStringSubmatch(strings.TrimPrefix(key, name))
		switch {
		case key == name || key == name+"[]":
			if len(f.values[key]) > 0 {
				f.fail(key, "{} must be files")
			}
			continue
		case m == nil:
			f.fail(key, "{} is not an element of %s; send %s, %s[] or %s[0], %s[1], ...", name, name, name, name, name)
			continue
		case len(f.values[key]) > 0:
			f.fail(key, "{} must be a file")
			continue
		}
		fs := f.files[key]
		if len(fs) != 1 {
			f.fail(key, "{} takes one file, got %d", len(fs))
			continue
		}
		i, _ := strconv.Atoi(m[1])
		indexed[i] = fs[0]
		maxIndex = max(maxIndex, i)
	}
	for i := 0; i <= maxIndex; i++ {
		if h, ok := indexed[i]; ok {
			headers = append(headers, h)
		}
	}
	out := make([]*graphql.Upload, 0, len(headers))
	for _, h := range headers {
		if u := f.open(name, h); u != nil {
			out = append(out, u)
		}
	}
	return out
}

// arrayKeys returns the names of the text and file parts that are name or
// start with name[, sorted so that faults are reported in a stable order.
func (f *form) arrayKeys(name string) []string {
	var keys []string
	add := func(key string) {
		if (key == name || strings.HasPrefix(key, name+"[")) && !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	for key := range f.values {
		add(key)
	}
	for key := range f.files {
		add(key)
	}
	slices.Sort(keys)
	return keys
}

func (f *form) open(name string, h *multipart.FileHeader) *graphql.Upload {
	file, err := h.Open()
	if err != nil {
		f.fail(name, "{} cannot be read")
		return nil
	}
	f.opened = append(f.opened, file)
	return &graphql.Upload{File: file, Filename: h.Filename, Size: h.Size, ContentType: h.Header.Get("Content-Type")}
}

// decodeJSON reads a JSON object body into v strictly: application/json
// only (415), within valid.MaxJSONBody (413), no unknown fields, no trailing
// data; faults name the field. It returns the top-level members as raw
// JSON too, so that a partial update can tell null from absent.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) (map[string]json.RawMessage, error) {
	if mediaType(r) != "application/json" {
		return nil, unsupported(r, "application/json")
	}
	raw, err := readJSON(w, r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			name = strings.Trim(name, `"`)
			return nil, apperr.List{apperr.Field(name, "unknown field %q", name)}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, apperr.List{apperr.Field(te.Field, "%v", jsonProblem(err))}
		}
		return nil, apperr.E(apperr.Invalid, "the body must be a JSON object: %v", jsonProblem(err))
	}
	if !atEnd(dec) {
		return nil, apperr.E(apperr.Invalid, "the body must be one JSON object: unexpected data after it")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return nil, apperr.E(apperr.Invalid, "the body must be a JSON object")
	}
	return members, nil
}

// readJSON reads a JSON body within valid.MaxJSONBody.
func readJSON(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if err := limit(w, r, valid.MaxJSONBody); err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, readErr(err, valid.MaxJSONBody)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, apperr.E(apperr.Invalid, "the body is empty; send a JSON object")
	}
	return raw, nil
}
