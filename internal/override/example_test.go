package override_test

import (
	"fmt"

	"github.com/configurator/catalogue/internal/override"
)

func ptr[T any](v T) *T { return &v }

// A material override: the integrator picks variation 61 of option 6 and
// gives it material 3 on the seat and back of the model.
func Example() {
	seat := override.Option{
		ID:   6,
		Type: "material",
		Variations: []override.Variation{
			{ID: 60, Selected: true, ModelID: ptr(1), MaterialID: ptr(1), MaterialCategoryID: ptr(2)},
			{ID: 61, ModelID: ptr(1), MaterialID: ptr(2), MaterialCategoryID: ptr(2)},
		},
	}
	posted := []byte(`{"6": {"id": 61, "material_id": 3, "selected_parts": ["seat", "back"]}}`)

	data, err := override.Parse(posted, []override.Option{seat})
	if err != nil {
		fmt.Println(err)
		return
	}
	stored, _ := data.MarshalJSON()
	fmt.Println(string(stored))

	for _, v := range override.Apply(seat, data, true) {
		fmt.Printf("variation %d: model %d, material %d, category %d, parts %q\n",
			v.ID, *v.ModelID, *v.MaterialID, *v.MaterialCategoryID, v.SelectedParts)
	}

	_, err = override.Parse([]byte(`{"6": {"id": 999}}`), []override.Option{seat})
	fmt.Println(err)
	// Output:
	// {"6":{"id":61,"material_id":3,"selected_parts":["seat","back"]}}
	// variation 60: model 1, material 1, category 2, parts []
	// variation 61: model 1, material 3, category 2, parts ["seat" "back"]
	// option 6 has no variation 999
}
