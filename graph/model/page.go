package model

import (
	"entgo.io/contrib/entgql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/scalar"
)

// The arguments of the page queries. GraphQL clients pass them one by one
// (gqlgen's @inlineArguments bundles them into these structs), and REST v1
// fills the same structs from its query strings, so each list has one
// named input on both transports and no argument can be swapped by
// position. Where is ent's generated filter.

// OrdersPageArgs are the arguments of ordersPage (GET /orders).
type OrdersPageArgs struct {
	Where     *ent.OrderWhereInput
	Page      *int
	PerPage   *int
	OrderBy   *ent.OrderOrderField
	Order     *entgql.OrderDirection
	StartDate *scalar.Date
	EndDate   *scalar.Date
}

// MaterialsPageArgs are the arguments of materialsPage (GET /materials).
type MaterialsPageArgs struct {
	Where   *ent.MaterialWhereInput
	Page    *int
	PerPage *int
	OrderBy *ent.MaterialOrderField
	Order   *entgql.OrderDirection
}

// TexturesPageArgs are the arguments of texturesPage (GET /textures).
type TexturesPageArgs struct {
	Where   *ent.TextureWhereInput
	Page    *int
	PerPage *int
	OrderBy *ent.TextureOrderField
	Order   *entgql.OrderDirection
}

// FormFieldsPageArgs are the arguments of formFieldsPage (GET
// /configurator-form-fields).
type FormFieldsPageArgs struct {
	Where   *ent.FormFieldWhereInput
	Page    *int
	PerPage *int
	OrderBy *ent.FormFieldOrderField
	Order   *entgql.OrderDirection
}

// ConfiguratorOptionsPageArgs are the arguments of configuratorOptionsPage
// (GET /configurator-options).
type ConfiguratorOptionsPageArgs struct {
	Where   *ent.ConfiguratorOptionWhereInput
	Page    *int
	PerPage *int
	OrderBy *ent.ConfiguratorOptionOrderField
	Order   *entgql.OrderDirection
}
