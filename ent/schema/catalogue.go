package schema

import (
	"errors"
	"net/url"
	"strings"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/configurator/catalogue/internal/valid"
)

// MaterialCategory groups the materials and textures of an owner.
type MaterialCategory struct{ owned }

// Fields of the MaterialCategory.
func (MaterialCategory) Fields() []ent.Field {
	return []ent.Field{
		field.String("title").NotEmpty().Annotations(entgql.OrderField("TITLE")),
		field.String("description").Default(""),
		field.String("created_by").Default(""),
	}
}

// Edges of the MaterialCategory.
func (MaterialCategory) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("materials", Material.Type),
		edge.To("textures", Texture.Type),
	}
}

// Indexes of the MaterialCategory: one per sort order of the list.
func (MaterialCategory) Indexes() []ent.Index { return sortIndexes("id", "updated_at", "title") }

// Material is a surface that configurator options can apply to a model.
type Material struct{ owned }

// Fields of the Material.
func (Material) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxLen(valid.MaxName).Annotations(entgql.OrderField("NAME")).
			Comment("Not empty; at most 255 bytes of UTF-8"),
		field.String("material_file").Optional().Nillable().MaxLen(valid.MaxURL).Validate(absoluteURL).
			Comment("An absolute http(s) URL or a path on this service; at most 2048 bytes"),
		field.Int("category_id").Optional().Nillable(),
		field.Int("texture_id").Optional().Nillable(),
		field.Bool("status").Default(true).Comment("true = active, false = inactive"),
		field.String("material_type").Default("").MaxLen(valid.MaxKeyword).Comment("flat, glossy, ...; at most 64 bytes"),
		field.String("surface").Default("").MaxLen(valid.MaxKeyword).Comment("At most 64 bytes"),
		field.Bool("bump").Default(false),
		field.String("color").Default("#FFFFFF").Validate(hexColor).Comment("#RRGGBB"),
		field.Float("opacity").Default(1).Min(0).Max(1),
		field.Float("specular").Default(0).Min(0),
		field.Float("reflection").Default(0).Min(0),
		field.String("created_by").Default("").MaxLen(valid.MaxName).Comment("At most 255 bytes"),
	}
}

// Edges of the Material.
func (Material) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("category", MaterialCategory.Type).Ref("materials").Field("category_id").Unique(),
		edge.From("texture", Texture.Type).Ref("materials").Field("texture_id").Unique(),
	}
}

// Indexes of the Material: one per sort order of the list, and the list
// filters of the spec.
func (Material) Indexes() []ent.Index {
	return append(sortIndexes("id", "updated_at", "name"), filterIndex("category_id"), filterIndex("texture_id"))
}

// Annotations of the Material: dashboard tokens create and update materials
// through the generated inputs.
func (Material) Annotations() []schema.Annotation {
	return append(readable(), entgql.Mutations(entgql.MutationCreate(), entgql.MutationUpdate()))
}

// Texture is an image applied by materials, with server-made thumbnails.
type Texture struct{ owned }

// Fields of the Texture.
func (Texture) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxLen(valid.MaxName).Annotations(entgql.OrderField("NAME")).
			Comment("Not empty; at most 255 bytes of UTF-8"),
		field.String("texture_file").Optional().Nillable(),
		field.String("texture_thumbnail_50").Optional().Nillable(),
		field.String("texture_thumbnail_100").Optional().Nillable(),
		field.String("bump_file").Optional().Nillable(),
		field.Int("category_id").Optional().Nillable(),
	}
}

// Edges of the Texture.
func (Texture) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("category", MaterialCategory.Type).Ref("textures").Field("category_id").Unique(),
		edge.To("materials", Material.Type),
	}
}

// Indexes of the Texture: one per sort order of the list, and its
// category filter.
func (Texture) Indexes() []ent.Index {
	return append(sortIndexes("id", "updated_at", "name"), filterIndex("category_id"))
}

// absoluteURL accepts what the spec's URI fields hold: an absolute http(s)
// URL, or a path on this service (starting with a single /).
func absoluteURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
	case u.Scheme == "http" || u.Scheme == "https":
		if u.Host != "" {
			return nil
		}
	case u.Scheme == "" && u.Host == "" && strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//"):
		return nil
	}
	return errors.New("must be an absolute http(s) URL or a path starting with /")
}

// hexColor accepts the #RRGGBB colours of the spec.
func hexColor(s string) error {
	if !colorRE.MatchString(s) {
		return errors.New("must be a colour of the form #RRGGBB")
	}
	return nil
}
