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

// PageArgs are the arguments of a page query whose list is filtered by
// Where (W) and sorted by OrderBy (F).
type PageArgs[W, F any] struct {
	Where   *W
	Page    *int
	PerPage *int
	OrderBy *F
	Order   *entgql.OrderDirection
}

// MaterialsPageArgs are the arguments of materialsPage (GET /materials).
type MaterialsPageArgs = PageArgs[ent.MaterialWhereInput, ent.MaterialOrderField]

// TexturesPageArgs are the arguments of texturesPage (GET /textures).
type TexturesPageArgs = PageArgs[ent.TextureWhereInput, ent.TextureOrderField]

// FormFieldsPageArgs are the arguments of formFieldsPage (GET
// /configurator-form-fields).
type FormFieldsPageArgs = PageArgs[ent.FormFieldWhereInput, ent.FormFieldOrderField]

// ConfiguratorOptionsPageArgs are the arguments of configuratorOptionsPage
// (GET /configurator-options).
type ConfiguratorOptionsPageArgs = PageArgs[ent.ConfiguratorOptionWhereInput, ent.ConfiguratorOptionOrderField]
