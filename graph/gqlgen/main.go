// Command gqlgen runs gqlgen for this module (go generate ./graph) with
// the plugin that writes the fast path's writers (graph/fast/gen), so that
// both are generated from the same bindings in one run.
package main

import (
	"fmt"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"

	"github.com/configurator/catalogue/graph/fast/gen"
)

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen: load config:", err)
		os.Exit(2)
	}
	if err := api.Generate(cfg, api.AddPlugin(&gen.Plugin{Filename: "graph/fast/writers_gen.go", Package: "fast"})); err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen:", err)
		os.Exit(3)
	}
}
