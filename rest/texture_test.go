package rest

import "testing"

func TestTexturesGolden(t *testing.T) {
	runGolden(t, []goldenCase{
		{"textures", "/textures"},
		{"textures_filtered", "/textures?category_id=1&order_by=name&order=desc&per_page=2&page=2"},
		// With a bump map, and without.
		{"texture_1", "/textures/1"},
		{"texture_3", "/textures/3"},
	})
}

func TestTexturesBadParams(t *testing.T) {
	runBadParams(t, []badParamCase{
		{"/textures?page=two", "page"},
		{"/textures?page=-3", "page"},
		{"/textures?per_page=0", "per_page"},
		{"/textures?per_page=1&per_page=2", "per_page"},
		{"/textures?order=ascending", "order"},
		{"/textures?order_by=texture_file", "order_by"},
		{"/textures?order_by=title", "order_by"},
		{"/textures?category_id=1.5", "category_id"},
		{"/textures?category_id=0", "category_id"},
		{"/textures/abc", "id"},
		{"/textures/-1", "id"},
	})
}
