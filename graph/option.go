package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"entgo.io/contrib/entgql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/ent/optionset"
	"github.com/configurator/catalogue/ent/optionvariation"
	"github.com/configurator/catalogue/ent/schema"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/apperr"
)

// restOption loads what REST v1 shows with an option: its parameter_list.
func restOption(q *ent.ConfiguratorOptionQuery) *ent.ConfiguratorOptionQuery {
	return q.WithVariations(withVariations)
}

// withVariations loads an option's parameter_list in its display order.
func withVariations(q *ent.OptionVariationQuery) {
	q.Order(optionvariation.ByPosition(), optionvariation.ByID())
}

// optionTypes lists the option types in the order of the data model.
func optionTypes() []configuratoroption.Type {
	types := make([]configuratoroption.Type, len(schema.OptionTypes))
	for i, t := range schema.OptionTypes {
		types[i] = configuratoroption.Type(t)
	}
	return types
}

// configuratorOptionsPage lists options with their variations; the default
// order is the options' position, as a configurator shows them.
func (r *Resolver) configuratorOptionsPage(ctx context.Context, page, perPage *int, orderBy *ent.ConfiguratorOptionOrderField, dir *entgql.OrderDirection) (*model.ConfiguratorOptionPage, error) {
	sort, err := sortOf(orderBy, dir, sortSpec{column: configuratoroption.FieldPosition})
	if err != nil {
		return nil, err
	}
	items, info, err := paginate[ent.ConfiguratorOption, configuratoroption.OrderOption](ctx, r.client.ConfiguratorOption.Query(), page, perPage, sort, func(q *ent.ConfiguratorOptionQuery) (*ent.ConfiguratorOptionQuery, error) {
		return eager(ctx, q, restOption, "data")
	})
	if err != nil {
		return nil, err
	}
	return &model.ConfiguratorOptionPage{Data: items, Pagination: info}, nil
}

func (r *Resolver) configuratorOption(ctx context.Context, id int) (*ent.ConfiguratorOption, error) {
	q, err := eager(ctx, r.client.ConfiguratorOption.Query().Where(configuratoroption.ID(id)), restOption)
	if err != nil {
		return nil, err
	}
	return one[ent.ConfiguratorOption](ctx, q, "configurator option", id)
}

// optionVariationList returns an option's variations; an option the viewer
// cannot see is NotFound rather than an empty list.
func (r *Resolver) optionVariationList(ctx context.Context, optionID int) ([]*ent.OptionVariation, error) {
	ok, err := r.client.ConfiguratorOption.Query().Where(configuratoroption.ID(optionID)).Exist(ctx)
	if err != nil {
		return nil, fmt.Errorf("find option %d: %w", optionID, err)
	}
	if !ok {
		return nil, apperr.E(apperr.NotFound, "configurator option %d not found", optionID)
	}
	q, err := eager(ctx, r.client.OptionVariation.Query(), noEdges[*ent.OptionVariationQuery])
	if err != nil {
		return nil, err
	}
	vs, err := q.
		Where(optionvariation.ConfiguratorOptionID(optionID)).
		Order(optionvariation.ByPosition(), optionvariation.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list variations of option %d: %w", optionID, err)
	}
	return vs, nil
}

// optionSetList returns every option set with its options, by id.
func (r *Resolver) optionSetList(ctx context.Context) ([]*ent.OptionSet, error) {
	q, err := eager(ctx, r.client.OptionSet.Query(), func(q *ent.OptionSetQuery) *ent.OptionSetQuery {
		return q.WithOptions(func(q *ent.ConfiguratorOptionQuery) {
			q.Order(configuratoroption.ByPosition(), configuratoroption.ByID())
		})
	})
	if err != nil {
		return nil, err
	}
	sets, err := q.Order(optionset.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list option sets: %w", err)
	}
	return sets, nil
}

// variationsOf is ConfiguratorOption.variations: the loaded edge (by the
// field's alias, as entgql loads it) or a query, in position order.
func variationsOf(ctx context.Context, o *ent.ConfiguratorOption) ([]*ent.OptionVariation, error) {
	vs, err := o.Variations(ctx)
	if err != nil {
		return nil, err
	}
	return sortedBy(vs, func(v *ent.OptionVariation) (int, int) { return v.Position, v.ID }), nil
}

// optionsOf is OptionSet.options, in the options' position order.
func optionsOf(ctx context.Context, s *ent.OptionSet) ([]*ent.ConfiguratorOption, error) {
	os, err := s.Options(ctx)
	if err != nil {
		return nil, err
	}
	return sortedBy(os, func(o *ent.ConfiguratorOption) (int, int) { return o.Position, o.ID }), nil
}

// sortedBy returns a copy of xs sorted by (position, id).
func sortedBy[T any](xs []T, key func(T) (int, int)) []T {
	out := slices.Clone(xs)
	slices.SortFunc(out, func(a, b T) int {
		pa, ia := key(a)
		pb, ib := key(b)
		return cmp.Or(cmp.Compare(pa, pb), cmp.Compare(ia, ib))
	})
	return out
}
