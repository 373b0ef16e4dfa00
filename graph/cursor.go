package graph

import (
	"entgo.io/ent"

	gen "github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/scalar"
)

// sortKeys maps the input type of a connection's orderBy argument to the
// sort keys of its record: for each value of its field enum, the value of
// that field on a zero record, whose kind is the kind a cursor of the
// connection carries (scalar.KindOf).
var sortKeys = map[string]func(field string) (ent.Value, error){
	"ConfiguratorOrder": sortKey(func(f *gen.ConfiguratorOrderField) (ent.Value, error) { return f.Value(&gen.Configurator{}) }),
	"ConfiguratorFormOrder": sortKey(func(f *gen.ConfiguratorFormOrderField) (ent.Value, error) {
		return f.Value(&gen.ConfiguratorForm{})
	}),
	"ConfiguratorOptionOrder": sortKey(func(f *gen.ConfiguratorOptionOrderField) (ent.Value, error) {
		return f.Value(&gen.ConfiguratorOption{})
	}),
	"FormFieldOrder": sortKey(func(f *gen.FormFieldOrderField) (ent.Value, error) { return f.Value(&gen.FormField{}) }),
	"MaterialOrder":  sortKey(func(f *gen.MaterialOrderField) (ent.Value, error) { return f.Value(&gen.Material{}) }),
	"MaterialCategoryOrder": sortKey(func(f *gen.MaterialCategoryOrderField) (ent.Value, error) {
		return f.Value(&gen.MaterialCategory{})
	}),
	"OptionSetOrder": sortKey(func(f *gen.OptionSetOrderField) (ent.Value, error) { return f.Value(&gen.OptionSet{}) }),
	"OptionVariationOrder": sortKey(func(f *gen.OptionVariationOrderField) (ent.Value, error) {
		return f.Value(&gen.OptionVariation{})
	}),
	"OrderOrder":   sortKey(func(f *gen.OrderOrderField) (ent.Value, error) { return f.Value(&gen.Order{}) }),
	"TextureOrder": sortKey(func(f *gen.TextureOrderField) (ent.Value, error) { return f.Value(&gen.Texture{}) }),
}

// sortKey reads an order-field enum value into F and returns what value
// gives for it.
func sortKey[F any, P interface {
	*F
	UnmarshalGQL(any) error
}](value func(P) (ent.Value, error)) func(string) (ent.Value, error) {
	return func(field string) (ent.Value, error) {
		f := P(new(F))
		if err := f.UnmarshalGQL(field); err != nil {
			return nil, err
		}
		return value(f)
	}
}

// CursorKind is the kind of value the cursors of a connection carry when
// it is sorted by field (an enum value of the input type orderType, the
// type of its orderBy argument; "" for the default sort, by id). An
// unknown type or field is scalar.NoKind, which no cursor matches.
func CursorKind(orderType, field string) scalar.SortKind {
	if field == "" {
		return scalar.IntKind // every connection's default sort is by id
	}
	key, ok := sortKeys[orderType]
	if !ok {
		return scalar.NoKind
	}
	v, err := key(field)
	if err != nil {
		return scalar.NoKind
	}
	return scalar.KindOf(v)
}
