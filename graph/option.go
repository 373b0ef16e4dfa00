package graph

import (
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/ent/schema"
)

// optionTypes are the option types in the order of the data model.
var optionTypes = func() []configuratoroption.Type {
	types := make([]configuratoroption.Type, len(schema.OptionTypes))
	for i, t := range schema.OptionTypes {
		types[i] = configuratoroption.Type(t)
	}
	return types
}()
