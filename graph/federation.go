package graph

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/plugin/federation/fedruntime"

	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/graph/scalar"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/query"
)

// Federation answers the two root fields of a federation subgraph
// (docs/federation.md), as a gqlgen field interceptor, where gqlgen's
// generated code would answer them otherwise than a gateway needs:
//
//   - _entities: gqlgen fails the whole batch of a type when one of its
//     representations has a malformed key, and reports an unknown
//     __typename or a missing key with no position, as an internal error.
//     Here each representation is checked first; a bad one is null with a
//     BAD_REQUEST naming representations[i] at its own position, and the
//     others are read by the generated batched entity resolvers (one
//     statement per type, under the privacy rules; another owner's id is
//     null with NOT_FOUND at its position). More than query.MaxByIDs
//     representations are refused whole.
//   - _service: gqlgen answers the SDL of the sources not built in, and a
//     schema with @inlineArguments is compiled into one built-in source,
//     so it would answer an empty SDL; here it answers the checked-in
//     schema (generated.SubgraphSDL).
type Federation struct {
	finders map[string]finder
}

// finder reads the entities of one type by their ids, in their order:
// nil with an error at the index of a record it cannot answer, or the
// error of the whole read.
type finder func(ctx context.Context, ids []int) ([]fedruntime.Entity, []error, error)

var _ interface {
	graphql.HandlerExtension
	graphql.FieldInterceptor
} = (*Federation)(nil)

// NewFederation returns the interceptor over the entity resolvers of r.
func NewFederation(r *Resolver) *Federation {
	e := r.Entity()
	return &Federation{finders: map[string]finder{
		"Configurator":       batch(e.FindManyConfiguratorByIDs, func(id int) *model.ConfiguratorByIDsInput { return &model.ConfiguratorByIDsInput{ID: id} }),
		"ConfiguratorForm":   batch(e.FindManyConfiguratorFormByIDs, func(id int) *model.ConfiguratorFormByIDsInput { return &model.ConfiguratorFormByIDsInput{ID: id} }),
		"ConfiguratorOption": batch(e.FindManyConfiguratorOptionByIDs, func(id int) *model.ConfiguratorOptionByIDsInput { return &model.ConfiguratorOptionByIDsInput{ID: id} }),
		"FormField":          batch(e.FindManyFormFieldByIDs, func(id int) *model.FormFieldByIDsInput { return &model.FormFieldByIDsInput{ID: id} }),
		"Material":           batch(e.FindManyMaterialByIDs, func(id int) *model.MaterialByIDsInput { return &model.MaterialByIDsInput{ID: id} }),
		"MaterialCategory":   batch(e.FindManyMaterialCategoryByIDs, func(id int) *model.MaterialCategoryByIDsInput { return &model.MaterialCategoryByIDsInput{ID: id} }),
		"OptionSet":          batch(e.FindManyOptionSetByIDs, func(id int) *model.OptionSetByIDsInput { return &model.OptionSetByIDsInput{ID: id} }),
		"OptionVariation":    batch(e.FindManyOptionVariationByIDs, func(id int) *model.OptionVariationByIDsInput { return &model.OptionVariationByIDsInput{ID: id} }),
		"Order":              batch(e.FindManyOrderByIDs, func(id int) *model.OrderByIDsInput { return &model.OrderByIDsInput{ID: id} }),
		"Texture":            batch(e.FindManyTextureByIDs, func(id int) *model.TextureByIDsInput { return &model.TextureByIDsInput{ID: id} }),
	}}
}

// ExtensionName names the extension in gqlgen's errors.
func (*Federation) ExtensionName() string { return "Federation" }

// Validate requires a finder for every member of _Entity, so that a new
// entity type cannot be left unreadable.
func (f *Federation) Validate(es graphql.ExecutableSchema) error {
	def := es.Schema().Types["_Entity"]
	if def == nil {
		return fmt.Errorf("federation: the schema has no _Entity union")
	}
	for _, typ := range def.Types {
		if f.finders[typ] == nil {
			return fmt.Errorf("federation: no entity finder for %s (graph/federation.go)", typ)
		}
	}
	return nil
}

// InterceptField answers Query._entities and Query._service; every other
// field goes on.
func (f *Federation) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Object != "Query" || fc.Field.Field == nil {
		return next(ctx)
	}
	switch fc.Field.Name {
	case "_service":
		return fedruntime.Service{SDL: generated.SubgraphSDL}, nil
	case "_entities":
		reps, _ := fc.Args["representations"].([]map[string]any)
		return f.entities(ctx, reps)
	}
	return next(ctx)
}

// entities answers the representations reps, each at its position.
func (f *Federation) entities(ctx context.Context, reps []map[string]any) ([]fedruntime.Entity, error) {
	if len(reps) > query.MaxByIDs {
		return nil, apperr.Field("representations", "{} holds %d representations; the limit is %d a request", len(reps), query.MaxByIDs)
	}
	at := func(i int) context.Context { return graphql.WithPathContext(ctx, graphql.NewPathWithIndex(i)) }
	list := make([]fedruntime.Entity, len(reps))
	byType := map[string][]int{} // type -> positions
	ids := make([]int, len(reps))
	for i, rep := range reps {
		typ, id, err := f.key(i, rep)
		if err != nil {
			graphql.AddError(at(i), err)
			continue
		}
		byType[typ], ids[i] = append(byType[typ], i), id
	}
	types := make([]string, 0, len(byType))
	for typ := range byType {
		types = append(types, typ)
	}
	slices.Sort(types)
	for _, typ := range types {
		at0 := byType[typ]
		keys := make([]int, len(at0))
		for j, i := range at0 {
			keys[j] = ids[i]
		}
		found, errs, err := f.finders[typ](ctx, keys)
		if err != nil {
			return nil, err
		}
		for j, i := range at0 {
			if j < len(errs) && errs[j] != nil {
				graphql.AddError(at(i), errs[j])
				continue
			}
			list[i] = found[j]
		}
	}
	return list, nil
}

// key reads representation i: the entity type it names and its id.
func (f *Federation) key(i int, rep map[string]any) (string, int, error) {
	field := fmt.Sprintf("representations[%d]", i)
	typ, ok := rep["__typename"].(string)
	if !ok || f.finders[typ] == nil {
		return "", 0, apperr.Field(field, "{}.__typename must name an entity of this subgraph (%s), got %s", f.typeNames(), describe(rep["__typename"]))
	}
	v, ok := rep["id"]
	if !ok || v == nil {
		return "", 0, apperr.Field(field, "{} has no id, the key of %s", typ)
	}
	id, err := scalar.UnmarshalID(v)
	if err != nil {
		return "", 0, apperr.Field(field, "{}.id must be the id of a %s (a positive integer), got %s", typ, describe(v))
	}
	return typ, id, nil
}

// typeNames lists the entity types, for errors.
func (f *Federation) typeNames() string {
	names := make([]string, 0, len(f.finders))
	for n := range f.finders {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// describe shows a value a client sent, briefly, for errors.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "nothing"
	case string:
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return fmt.Sprintf("%q", v)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v", v)
}

// batch is the finder of one entity type over its generated batched
// entity resolver find, which takes the representations as key builds
// them.
func batch[K any, T any, E interface {
	*T
	fedruntime.Entity
}](find func(context.Context, []*K) ([]E, error), key func(int) *K) finder {
	return func(ctx context.Context, ids []int) ([]fedruntime.Entity, []error, error) {
		ks := make([]*K, len(ids))
		for i, id := range ids {
			ks[i] = key(id)
		}
		recs, err := find(ctx, ks)
		errs, err := fedruntime.SplitEntityBatchErrors(err)
		if err != nil {
			return nil, nil, err
		}
		out := make([]fedruntime.Entity, len(ids))
		for i, r := range recs {
			if r != nil {
				out[i] = r
			}
		}
		return out, errs, nil
	}
}
