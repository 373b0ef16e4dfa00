package fast

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/plugin/federation/fedruntime"

	"github.com/configurator/catalogue/ent"
)

// entities writes the answer of a federation subgraph's _entities (a
// list of the union _Entity, one element per representation, null where
// it has an error) with the writer of each element's type, as gqlgen
// would execute its `... on Type` fragments; a gateway's batch of 100
// orders is otherwise 100 executions of gqlgen's per-field machinery.
// It declines (false) when an element's type has no writer or its
// selection is one the writers do not cover.
func (w *writer) entities(ctx context.Context, f *graphql.CollectedField, list []fedruntime.Entity) bool {
	checked := map[string]bool{}
	w.byte('[')
	for i, e := range list {
		if i > 0 {
			w.byte(',')
		}
		if e == nil {
			w.null()
			continue
		}
		typ := entityType(e)
		if !checked[typ] {
			if typ == "" || !supported(w.oc, typ, f.Selections, 0) {
				return false
			}
			checked[typ] = true
		}
		if !w.entity(ctx, f, e) {
			return false
		}
	}
	w.byte(']')
	return true
}

// entityType is the GraphQL type of an entity, "" for one without a
// writer.
func entityType(e fedruntime.Entity) string {
	switch e.(type) {
	case *ent.Configurator:
		return "Configurator"
	case *ent.ConfiguratorForm:
		return "ConfiguratorForm"
	case *ent.ConfiguratorOption:
		return "ConfiguratorOption"
	case *ent.FormField:
		return "FormField"
	case *ent.Material:
		return "Material"
	case *ent.MaterialCategory:
		return "MaterialCategory"
	case *ent.OptionSet:
		return "OptionSet"
	case *ent.OptionVariation:
		return "OptionVariation"
	case *ent.Order:
		return "Order"
	case *ent.Texture:
		return "Texture"
	}
	return ""
}

// entity writes one entity with its type's writer.
func (w *writer) entity(ctx context.Context, f *graphql.CollectedField, e fedruntime.Entity) bool {
	switch v := e.(type) {
	case *ent.Configurator:
		return w.objConfigurator(ctx, f, v)
	case *ent.ConfiguratorForm:
		return w.objConfiguratorForm(ctx, f, v)
	case *ent.ConfiguratorOption:
		return w.objConfiguratorOption(ctx, f, v)
	case *ent.FormField:
		return w.objFormField(ctx, f, v)
	case *ent.Material:
		return w.objMaterial(ctx, f, v)
	case *ent.MaterialCategory:
		return w.objMaterialCategory(ctx, f, v)
	case *ent.OptionSet:
		return w.objOptionSet(ctx, f, v)
	case *ent.OptionVariation:
		return w.objOptionVariation(ctx, f, v)
	case *ent.Order:
		return w.objOrder(ctx, f, v)
	case *ent.Texture:
		return w.objTexture(ctx, f, v)
	}
	return false
}
