//go:build ignore

// This program generates ent's code and the GraphQL schema of the entities
// (graph/ent.graphql). Run it through `go generate ./...`.
package main

import (
	"log"
	"os"
	"slices"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

func main() {
	ex, err := entgql.NewExtension(
		// Before WithWhereInputs, which adds its template to these. The
		// entity template is parsed here rather than read from ./template:
		// it needs entgql's template functions (which types are nodes).
		entgql.WithTemplates(append(slices.Clone(entgql.AllTemplates), gen.MustParse(gen.NewTemplate("gql_entity").
			Funcs(entgql.TemplateFuncs).ParseFiles("entity.tmpl")))...),
		entgql.WithSchemaGenerator(),
		entgql.WithWhereInputs(true),
		entgql.WithConfigPath("../gqlgen.yml"),
		entgql.WithSchemaPath("../graph/ent.graphql"),
		entgql.WithSchemaHook(dropGlobalNodeLookup, federate, dropHandWrittenScalars),
	)
	if err != nil {
		log.Fatalf("creating entgql extension: %v", err)
	}
	err = entc.Generate("./schema", &gen.Config{
		Features: []gen.Feature{gen.FeaturePrivacy, gen.FeatureEntQL, gen.FeatureUpsert, gen.FeatureExecQuery, gen.FeatureModifier},
	}, entc.Extensions(ex), entc.TemplateDir("./template"))
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}

// dropGlobalNodeLookup removes Query.node and Query.nodes. Ids are integers
// per resource, shared with REST v1, so an id alone does not name a type;
// objects are refetched through their typed root fields instead.
func dropGlobalNodeLookup(_ *gen.Graph, s *ast.Schema) error {
	q := s.Types["Query"]
	if q == nil {
		return nil
	}
	q.Fields = slices.DeleteFunc(q.Fields, func(f *ast.FieldDefinition) bool { return f.Name == "node" || f.Name == "nodes" })
	return nil
}

// federate marks the schema for Apollo Federation v2 (docs/federation.md):
// every type that implements Node is an entity keyed by its id, resolved
// in batches (gqlgen.yml: entity_resolver_multi, one statement per type), and
// the Relay value types another Relay subgraph also defines are
// @shareable, so that both compose. Deciding it here, from the Node
// interface, makes a new Node type an entity without a second edit.
func federate(_ *gen.Graph, s *ast.Schema) error {
	for _, def := range s.Types {
		switch {
		case def.Kind == ast.Object && slices.Contains(def.Interfaces, "Node"):
			def.Directives = append(def.Directives, &ast.Directive{Name: "key", Arguments: ast.ArgumentList{
				{Name: "fields", Value: &ast.Value{Kind: ast.StringValue, Raw: "id"}},
			}})
		case def.Name == "PageInfo":
			def.Directives = append(def.Directives, &ast.Directive{Name: "shareable"})
		}
	}
	return nil
}

// dropHandWrittenScalars removes the scalars the hand-written schema
// (../schema.graphql) declares. entgql leaves them out only when it can
// load gqlgen's whole schema, which it cannot since that schema links the
// federation spec (@link is declared by gqlgen's federation plugin, which
// entgql does not run), so it would declare Map and Time a second time.
func dropHandWrittenScalars(_ *gen.Graph, s *ast.Schema) error {
	src, err := os.ReadFile("../schema.graphql")
	if err != nil {
		return err
	}
	doc, err := parser.ParseSchema(&ast.Source{Name: "schema.graphql", Input: string(src)})
	if err != nil {
		return err
	}
	for _, def := range doc.Definitions {
		if def.Kind == ast.Scalar {
			delete(s.Types, def.Name)
		}
	}
	return nil
}
