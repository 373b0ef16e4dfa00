package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ConfiguratorForm is the customer form shown with a configurator.
type ConfiguratorForm struct{ owned }

// Fields of the ConfiguratorForm.
func (ConfiguratorForm) Fields() []ent.Field {
	return []ent.Field{
		field.Int("configurator_id"),
		field.Bool("enable_form").Default(true),
	}
}

// Edges of the ConfiguratorForm.
func (ConfiguratorForm) Edges() []ent.Edge {
	return []ent.Edge{
		configuratorEdge("forms"),
		edge.To("fields", FormField.Type),
	}
}

// Indexes of the ConfiguratorForm: the list is by id.
func (ConfiguratorForm) Indexes() []ent.Index {
	return append(sortIndexes("id"), index.Fields("configurator_id"))
}

// FormField is one input of a configurator's form.
type FormField struct{ owned }

// Fields of the FormField.
func (FormField) Fields() []ent.Field {
	return []ent.Field{
		field.Int("configurator_id"),
		field.Int("form_id").Optional().Nillable(),
		field.String("title").NotEmpty().Annotations(entgql.OrderField("TITLE")),
		field.String("type").Default("form-text"),
		field.String("mandatory_status").Default("optional").Comment("required or optional"),
		field.String("description").Default(""),
		field.String("url").Default(""),
		field.String("settings").Default("{}").Comment("A JSON-encoded string, as the spec declares"),
		field.Int("show_title").Default(1).Min(0).Max(1).Comment("1 = title shown"),
		field.Int("position").Default(0).Annotations(entgql.OrderField("POSITION")),
	}
}

// Edges of the FormField.
func (FormField) Edges() []ent.Edge {
	return []ent.Edge{
		configuratorEdge("form_fields"),
		edge.From("form", ConfiguratorForm.Type).Ref("fields").Field("form_id").Unique(),
	}
}

// Indexes of the FormField: one per sort order of the list, and the
// foreign keys.
func (FormField) Indexes() []ent.Index {
	return append(sortIndexes("id", "updated_at", "title", "position"), index.Fields("configurator_id"), index.Fields("form_id"))
}
