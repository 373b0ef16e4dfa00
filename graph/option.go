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
	q := r.client.ConfiguratorOption.Query().WithVariations(withVariations)
	items, info, err := paginate[ent.ConfiguratorOption, configuratoroption.OrderOption](ctx, q, page, perPage, sort)
	if err != nil {
		return nil, err
	}
	return &model.ConfiguratorOptionPage{Data: items, Pagination: info}, nil
}

func (r *Resolver) configuratorOption(ctx context.Context, id int) (*ent.ConfiguratorOption, error) {
	q := r.client.ConfiguratorOption.Query().Where(configuratoroption.ID(id)).WithVariations(withVariations)
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
	vs, err := r.client.OptionVariation.Query().
		Where(optionvariation.ConfiguratorOptionID(optionID)).
		Order(optionvariation.ByPosition(), optionvariation.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list variations of option %d: %w", optionID, err)
	}
	return vs, nil
}

// optionSetList returns every option set with its options, by id.
func (r *Resolver) optionSetList(ctx context.Context) ([]*ent.OptionSet, error) {
	sets, err := r.client.OptionSet.Query().
		WithOptions(func(q *ent.ConfiguratorOptionQuery) {
			q.Order(configuratoroption.ByPosition(), configuratoroption.ByID())
		}).
		Order(optionset.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list option sets: %w", err)
	}
	return sets, nil
}
