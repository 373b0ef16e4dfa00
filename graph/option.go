package graph

import (
	"context"
	"fmt"

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

// variationsOf is ConfiguratorOption.variations: the edge entgql loaded
// (by the field's alias) or a query; both come in position order, which
// the OptionVariation interceptor (ent/schema) adds to every read.
func variationsOf(ctx context.Context, o *ent.ConfiguratorOption) ([]*ent.OptionVariation, error) {
	return o.Variations(ctx)
}

// optionsOf is OptionSet.options, in position order (the
// ConfiguratorOption interceptor).
func optionsOf(ctx context.Context, s *ent.OptionSet) ([]*ent.ConfiguratorOption, error) {
	return s.Options(ctx)
}
