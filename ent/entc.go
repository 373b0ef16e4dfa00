//go:build ignore

// This program generates ent's code and the GraphQL schema of the entities
// (graph/ent.graphql). Run it through `go generate ./...`.
package main

import (
	"log"
	"slices"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
	"github.com/vektah/gqlparser/v2/ast"
)

func main() {
	ex, err := entgql.NewExtension(
		entgql.WithSchemaGenerator(),
		entgql.WithWhereInputs(true),
		entgql.WithConfigPath("../gqlgen.yml"),
		entgql.WithSchemaPath("../graph/ent.graphql"),
		entgql.WithSchemaHook(dropGlobalNodeLookup),
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
