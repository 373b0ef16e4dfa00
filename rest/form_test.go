package rest

import "testing"

func TestFormsGolden(t *testing.T) {
	runGolden(t, []goldenCase{
		{"forms", "/configurator-forms"},
		{"form_1", "/configurator-forms/1"},
		{"form_fields", "/configurator-form-fields"},
		{"form_fields_by_position", "/configurator-form-fields?order_by=position&order=asc&per_page=3&page=2"},
		{"form_field_2", "/configurator-form-fields/2"},
	})
}

func TestFormsBadParams(t *testing.T) {
	runBadParams(t, []badParamCase{
		{"/configurator-forms/abc", "id"},
		{"/configurator-forms/0", "id"},
		{"/configurator-form-fields?page=1.0", "page"},
		{"/configurator-form-fields?page=0", "page"},
		{"/configurator-form-fields?per_page=101", "per_page"},
		{"/configurator-form-fields?per_page=x", "per_page"},
		{"/configurator-form-fields?order=sideways", "order"},
		{"/configurator-form-fields?order_by=name", "order_by"},
		{"/configurator-form-fields?order_by=type", "order_by"},
		{"/configurator-form-fields?order_by=id&order_by=id", "order_by"},
		{"/configurator-form-fields/x", "id"},
		{"/configurator-form-fields/-2", "id"},
	})
}
