package graph

import (
	"context"
	"fmt"

	"entgo.io/contrib/entgql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configuratorform"
	"github.com/configurator/catalogue/ent/formfield"
	"github.com/configurator/catalogue/graph/model"
)

// configuratorFormList returns every form of the owner, by id.
func (r *Resolver) configuratorFormList(ctx context.Context) ([]*ent.ConfiguratorForm, error) {
	q, err := eager(ctx, r.client.ConfiguratorForm.Query(), noEdges[*ent.ConfiguratorFormQuery])
	if err != nil {
		return nil, err
	}
	forms, err := q.Order(configuratorform.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list forms: %w", err)
	}
	return forms, nil
}

func (r *Resolver) configuratorForm(ctx context.Context, id int) (*ent.ConfiguratorForm, error) {
	q, err := eager(ctx, r.client.ConfiguratorForm.Query().Where(configuratorform.ID(id)), noEdges[*ent.ConfiguratorFormQuery])
	if err != nil {
		return nil, err
	}
	return one[ent.ConfiguratorForm](ctx, q, "configurator form", id)
}

func (r *Resolver) formFieldsPage(ctx context.Context, page, perPage *int, orderBy *ent.FormFieldOrderField, dir *entgql.OrderDirection) (*model.FormFieldPage, error) {
	sort, err := sortOf(orderBy, dir, sortSpec{column: formfield.FieldCreatedAt, desc: true})
	if err != nil {
		return nil, err
	}
	items, info, err := paginate[ent.FormField, formfield.OrderOption](ctx, r.client.FormField.Query(), page, perPage, sort, func(q *ent.FormFieldQuery) (*ent.FormFieldQuery, error) {
		return eager(ctx, q, noEdges[*ent.FormFieldQuery], "data")
	})
	if err != nil {
		return nil, err
	}
	return &model.FormFieldPage{Data: items, Pagination: info}, nil
}

func (r *Resolver) formField(ctx context.Context, id int) (*ent.FormField, error) {
	q, err := eager(ctx, r.client.FormField.Query().Where(formfield.ID(id)), noEdges[*ent.FormFieldQuery])
	if err != nil {
		return nil, err
	}
	return one[ent.FormField](ctx, q, "configurator form field", id)
}
