// Package override is the option-override engine of the Open API: it checks
// the options object an integrator posts to the override endpoint, keeps it in
// a canonical form, and applies it to a configurator's options when a customer
// opens the share link. It is pure (standard library only, no database, no
// HTTP) so that both transports and the share-link reader use one set of rules.
//
// # Input
//
// The options form field holds a JSON object keyed by option id, for example
//
//	{"12": {"id": 45, "material_id": 3}, "14": {"id": 61}}
//
// Each key is the id of one of the configurator's options, written in
// decimal without sign or leading zeros ("12"). Other keys ("abc", "0", "-1",
// "012", "+12", an id that is not one of the options) are refused, and so is
// a key given twice.
//
// Each value is a JSON object with a positive integer "id", the id of a
// variation of that option (an entry of its parameter_list), plus optional
// fields of the option's type:
//
//   - select, radio, checkbox, select_thumb, arrows: selected (boolean).
//   - material: model_id, material_id, material_category_id (integers),
//     selected_parts (array of strings).
//   - text: text_value (string), custom_color (boolean), text_font_size
//     (string), text_font_family (string), text_color_category_id (integer).
//   - numeral: numerical_default (integer).
//   - patterns and any other type: id only.
//
// Further refusals:
//
//   - a field not allowed for the option's type, a field given twice, a
//     field of the wrong JSON type and a field set to null, naming the field
//     and the expected type;
//   - an id that is not the id of a variation of the option;
//   - a number that is not written as a JSON integer: 1.5, "3", 1e2, 1e400
//     and also 3.0 are refused, so a value is never silently truncated or
//     rounded; an integer outside the range of int is refused too. Only "id"
//     must be positive: the other integer fields are not checked against the
//     catalogue here (the engine has no database);
//   - malformed JSON, a JSON value that is not an object, and an empty
//     object.
//
// Parse reports the first problem only, in a fixed order so the same input
// always gives the same error: option keys in byte order; within an option,
// the key itself, whether it names an option, whether the value is an object,
// then the fields in byte order (allowed, given once, not null, of the right
// type), then a missing id, then whether the id is a variation of the option.
// Problems are *Error values whose Path points at the input at fault
// ("options", "options.12", "options.12.material_id") and whose Message is
// safe to show the integrator and names the place itself; Error() returns
// the Message.
//
// # Storage
//
// Data.MarshalJSON writes the canonical form: the shape of the input, only
// supplied fields, every object's keys in byte order (as encoding/json orders
// map keys, so "10" comes before "9"), no spaces. Decode reads it back with
// the type checks of Parse but without an option list, since options may have
// changed since the data was stored; Apply copes with that. Data.Digest is the
// hex SHA-256 of the canonical form, so equal content gives equal digests
// whatever the key order or whitespace of the posted text.
//
// # Applying
//
// Apply follows the rules of the Open API specification. An override changes
// an option only when all three hold:
//
//  1. the read is made for an API user (open_api_for_user is true);
//  2. the data holds an entry for the option's id;
//  3. the option has a variation whose id equals the entry's id.
//
// Otherwise the variations come back unchanged. In particular an id that
// matches no variation does not unselect every variation of a select-like
// option. When all three hold:
//
//   - select, radio, checkbox, select_thumb, arrows: every variation is
//     selected exactly when its id equals the entry's id. The rule is by id
//     alone: a supplied "selected" is accepted and kept but does not change
//     the result, so {"id": 45, "selected": false} still selects 45.
//   - material: on the matching variation, model_id, material_id and
//     material_category_id each take the entry's value when supplied and keep
//     their own otherwise. selected_parts names the parts of the 3D model the
//     chosen material is applied to; when supplied it is set on the matching
//     variation so a front end can apply the material to those parts. It
//     changes no other field.
//   - text: on the matching variation, text_value, custom_color,
//     text_font_size, text_font_family and text_color_category_id each take
//     the entry's value when supplied and keep their own otherwise.
//   - numeral: on the matching variation, numerical_default is replaced when
//     supplied.
//   - patterns and any other type: nothing changes.
//
// Nothing else changes: not the other variations (except the selected flag of
// select-like types), not the other fields. Only the fields of the option's
// current type are used, so stale fields in stored data are ignored. Should a
// parameter_list hold the same id twice, every variation with that id counts
// as matching. Apply never modifies the option it is given: it returns a new
// slice whose pointers and slices share nothing with the option or the data.
package override
