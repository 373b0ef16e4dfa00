package rest

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/configurator/catalogue/graph/scalar"
)

// The hot answer shapes (materials, orders and their page, options with
// their variations) write themselves: encoding/json spends most of a list's
// encoding time in reflection and in re-scanning the stored raw JSON of
// orders and options, which these appenders copy after a cheap check.
// Each appender writes exactly the bytes encoding/json writes for its type
// (with HTML escaping off, as writeBody encodes), and encode_test.go holds
// every one of them to encoding/json on generated values, so the struct
// tags in present.go stay the one description of the v1 shapes.

// appender is a v1 shape that writes its own JSON. It returns false where
// encoding/json would fail (a NaN or infinite number).
type appender interface {
	appendJSON(b []byte) ([]byte, bool)
}

// fastShape returns v as an appender when its type is one of the shapes
// above. The list is explicit rather than an interface check, so that a
// type embedding one of them (the share link's option, which replaces its
// parameter_list) never borrows an appender that leaves its own fields
// out.
func fastShape(v any) appender {
	switch v := v.(type) {
	case materialJSON:
		return v
	case orderJSON:
		return v
	case orderPageJSON:
		return v
	case optionJSON:
		return v
	case array[materialJSON]:
		return v
	case array[optionJSON]:
		return v
	}
	return nil
}

// array is a slice of a shape that has an appender, written as an array.
type array[J appender] []J

func (l array[J]) appendJSON(b []byte) ([]byte, bool) {
	if l == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i, v := range l {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = v.appendJSON(b); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

func (m materialJSON) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(m.ID), 10)
	b = appendKeyString(b, `,"name":`, m.Name)
	b = appendKeyStringPtr(b, `,"material_file":`, m.MaterialFile)
	b = appendKeyIntPtr(b, `,"category_id":`, m.CategoryID)
	b = appendKeyIntPtr(b, `,"texture_id":`, m.TextureID)
	b = appendKeyBool(b, `,"status":`, m.Status)
	b = appendKeyString(b, `,"material_type":`, m.MaterialType)
	b = appendKeyString(b, `,"surface":`, m.Surface)
	b = appendKeyBool(b, `,"bump":`, m.Bump)
	b = appendKeyString(b, `,"color":`, m.Color)
	var ok1, ok2, ok3 bool
	b, ok1 = appendKeyFloat(b, `,"opacity":`, m.Opacity)
	b, ok2 = appendKeyFloat(b, `,"specular":`, m.Specular)
	b, ok3 = appendKeyFloat(b, `,"reflection":`, m.Reflection)
	b = appendKeyString(b, `,"created_at":`, m.CreatedAt)
	b = appendKeyString(b, `,"updated_at":`, m.UpdatedAt)
	b = appendKeyString(b, `,"created_by":`, m.CreatedBy)
	return append(b, '}'), ok1 && ok2 && ok3
}

func (o orderJSON) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(o.ID), 10)
	b, ok := appendKeyFloat(b, `,"price":`, o.Price)
	b = appendKeyString(b, `,"status":`, o.Status)
	b = appendKeyRaw(b, `,"customer_details":`, o.CustomerDetails)
	b = appendKeyRaw(b, `,"configurator_summary":`, o.ConfiguratorSummary)
	b = appendKeyStringPtr(b, `,"configurator_snapshot":`, o.ConfiguratorSnapshot)
	b = append(b, `,"configurator_print_map":`...)
	if o.ConfiguratorPrintMap == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, s := range o.ConfiguratorPrintMap {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		b = append(b, ']')
	}
	b = appendKeyStringPtr(b, `,"invoice_url":`, o.InvoiceURL)
	b = appendKeyStringPtr(b, `,"order_storefront":`, o.OrderStorefront)
	b = appendKeyString(b, `,"created_at":`, o.CreatedAt)
	b = appendKeyString(b, `,"updated_at":`, o.UpdatedAt)
	b = append(b, `,"configurator":{"id":`...)
	b = strconv.AppendInt(b, int64(o.Configurator.ID), 10)
	b = appendKeyString(b, `,"configurator_name":`, o.Configurator.Name)
	return append(b, "}}"...), ok
}

func (p orderPageJSON) appendJSON(b []byte) ([]byte, bool) {
	b, ok := array[orderJSON](p.Data).appendJSON(append(b, `{"data":`...))
	if !ok {
		return b, false
	}
	pg := p.Pagination
	b = append(b, `,"pagination":{"current_page":`...)
	b = strconv.AppendInt(b, int64(pg.CurrentPage), 10)
	b = append(b, `,"per_page":`...)
	b = strconv.AppendInt(b, int64(pg.PerPage), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(pg.Total), 10)
	b = append(b, `,"last_page":`...)
	b = strconv.AppendInt(b, int64(pg.LastPage), 10)
	b = appendKeyStringPtr(b, `,"next_page_url":`, pg.NextPageURL)
	b = appendKeyStringPtr(b, `,"prev_page_url":`, pg.PrevPageURL)
	return append(b, "}}"...), true
}

func (o optionJSON) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(o.ID), 10)
	b = append(b, `,"configurator_id":`...)
	b = strconv.AppendInt(b, int64(o.ConfiguratorID), 10)
	b = appendKeyString(b, `,"title":`, o.Title)
	b = appendKeyString(b, `,"type":`, o.Type)
	b = appendKeyRaw(b, `,"settings":`, o.Settings)
	b, _ = array[variationJSON](o.ParameterList).appendJSON(append(b, `,"parameter_list":`...))
	b = append(b, `,"position":`...)
	b = strconv.AppendInt(b, int64(o.Position), 10)
	b = appendKeyString(b, `,"created_at":`, o.CreatedAt)
	b = appendKeyString(b, `,"updated_at":`, o.UpdatedAt)
	b = appendKeyString(b, `,"created_by":`, o.CreatedBy)
	return append(b, '}'), true
}

func (v variationJSON) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(v.ID), 10)
	b = append(b, `,"configurator_option_id":`...)
	b = strconv.AppendInt(b, int64(v.ConfiguratorOptionID), 10)
	b = appendKeyString(b, `,"name":`, v.Name)
	b = append(b, `,"position":`...)
	b = strconv.AppendInt(b, int64(v.Position), 10)
	b = appendKeyBool(b, `,"selected":`, v.Selected)
	b = appendKeyIntPtr(b, `,"model_id":`, v.ModelID)
	b = appendKeyIntPtr(b, `,"material_id":`, v.MaterialID)
	b = appendKeyIntPtr(b, `,"material_category_id":`, v.MaterialCategoryID)
	b = appendKeyStringPtr(b, `,"text_value":`, v.TextValue)
	b = append(b, `,"custom_color":`...)
	if v.CustomColor == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendBool(b, *v.CustomColor)
	}
	b = appendKeyStringPtr(b, `,"text_font_size":`, v.TextFontSize)
	b = appendKeyStringPtr(b, `,"text_font_family":`, v.TextFontFamily)
	b = appendKeyIntPtr(b, `,"text_color_category_id":`, v.TextColorCategoryID)
	b = appendKeyIntPtr(b, `,"numerical_default":`, v.NumericalDefault)
	b = appendKeyString(b, `,"created_at":`, v.CreatedAt)
	b = appendKeyString(b, `,"updated_at":`, v.UpdatedAt)
	return append(b, '}'), true
}

func appendKeyString(b []byte, key, s string) []byte {
	return appendString(append(b, key...), s)
}

func appendKeyStringPtr(b []byte, key string, s *string) []byte {
	b = append(b, key...)
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

func appendKeyIntPtr(b []byte, key string, n *int) []byte {
	b = append(b, key...)
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*n), 10)
}

func appendKeyBool(b []byte, key string, v bool) []byte {
	return strconv.AppendBool(append(b, key...), v)
}

// appendKeyFloat writes f as encoding/json does (ES6 number formatting);
// NaN and infinities are not JSON.
func appendKeyFloat(b []byte, key string, f float64) ([]byte, bool) {
	b = append(b, key...)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07, as encoding/json writes it: 1e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendKeyRaw writes stored raw JSON as encoding/json writes a
// json.RawMessage: compacted, null when empty (scalar.AppendObject).
func appendKeyRaw(b []byte, key string, raw json.RawMessage) []byte {
	return scalar.AppendObject(append(b, key...), raw)
}

// appendString writes s as a JSON string as encoding/json does without
// HTML escaping: quotes, backslashes and control characters escaped,
// invalid UTF-8 as U+FFFD, and U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"
