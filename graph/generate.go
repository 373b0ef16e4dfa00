// Package graph holds the GraphQL resolvers; REST v1 calls the same ones.
package graph

// gqlgen reads gqlgen.yml from the repository root; `go generate ./...` runs
// ent's codegen (package ent) before this one.
//go:generate sh -c "cd .. && go run -mod=mod ./graph/gqlgen"
