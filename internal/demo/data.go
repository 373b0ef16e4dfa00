package demo

import "time"

// The dataset is plain data so that it reads like a fixture and so that the
// insert code has a single, fixed order to follow. Records refer to each
// other by slug or title; the ids are looked up as the rows are created.

// ownerSpec is a demo tenant with the names of its configurators.
type ownerSpec struct {
	name          string
	configurators []string
}

// demoOwners are created in this order, so on a fresh database owner 1 has
// configurators 1 and 2, and owner 2 has configurator 3. Owners are found
// again by these names when the dataset is already there.
var demoOwners = []ownerSpec{
	{name: "Nordhaus Design Co.", configurators: []string{"Oslo Lounge Chair", "Stride Runner Sneaker"}},
	{name: "Velocity Bike Works", configurators: []string{"Roadster Custom Bike"}},
}

// Who created the catalogue rows of owner 1 and the options of each owner.
const (
	catalogueAuthor = "studio@nordhaus.example"
	bikeAuthor      = "workshop@velocity.example"
)

// Fixed instants: the catalogue is set up in February 2026, orders come in
// during March 2026. Every row gets an explicit time derived from these, so
// two seeds write identical rows.
var (
	setupStart = time.Date(2026, time.February, 2, 9, 0, 0, 0, time.UTC)
	ordersDay1 = time.Date(2026, time.March, 1, 0, 0, 0, 0, time.UTC)
)

type categorySpec struct{ slug, title, description string }

// demoCategories belong to owner 1.
var demoCategories = []categorySpec{
	{"wood", "Woods", "Solid woods and veneers for frames and legs"},
	{"soft", "Fabrics & Leathers", "Upholstery, sneaker uppers and linings"},
	{"metal", "Metals & Finishes", "Frames, hardware, trims and engraving plates"},
}

type textureSpec struct {
	slug, name, category string
	bump                 bool
}

// demoTextures belong to owner 1; the ones without a bump map have a nil
// bump_file.
var demoTextures = []textureSpec{
	{"oak-grain", "Oak Grain", "wood", true},
	{"walnut-grain", "Walnut Grain", "wood", true},
	{"ash-grain", "Ash Grain", "wood", false},
	{"teak-grain", "Teak Grain", "wood", true},
	{"pebbled-leather", "Pebbled Leather", "soft", true},
	{"suede-nap", "Suede Nap", "soft", false},
	{"wool-felt-weave", "Wool Felt Weave", "soft", true},
	{"boucle-loop", "Bouclé Loop", "soft", false},
	{"brushed-metal", "Brushed Metal", "metal", true},
	{"hammered-copper", "Hammered Copper", "metal", true},
}

type materialSpec struct {
	slug, name, category, texture string
	materialType, surface, color  string
	active                        bool
	opacity, specular, reflection float64
}

// demoMaterials belong to owner 1: 25 materials over the 3 categories. A
// material without texture has a nil texture_id; bump is set when its
// texture has a bump map.
var demoMaterials = []materialSpec{
	{"natural-oak", "Natural Oak", "wood", "oak-grain", "matte", "wood", "#C8A165", true, 1, 0.2, 0.05},
	{"smoked-oak", "Smoked Oak", "wood", "oak-grain", "matte", "wood", "#6B4A2E", true, 1, 0.2, 0.05},
	{"american-walnut", "American Walnut", "wood", "walnut-grain", "glossy", "wood", "#5C3A21", true, 1, 0.5, 0.2},
	{"black-ash", "Black Ash", "wood", "ash-grain", "matte", "wood", "#2B2623", true, 1, 0.15, 0.05},
	{"birch-plywood", "Birch Plywood", "wood", "", "flat", "wood", "#E3CDA4", true, 1, 0.1, 0},
	{"teak", "Teak", "wood", "teak-grain", "glossy", "wood", "#A0703F", false, 1, 0.4, 0.15},
	{"cherry", "Cherry", "wood", "", "glossy", "wood", "#8B3A2B", false, 1, 0.45, 0.2},
	{"whitewashed-pine", "Whitewashed Pine", "wood", "", "flat", "wood", "#EDE4D3", true, 1, 0.1, 0},
	{"cognac-leather", "Cognac Leather", "soft", "pebbled-leather", "glossy", "leather", "#9A5B2F", true, 1, 0.6, 0.1},
	{"black-leather", "Black Leather", "soft", "pebbled-leather", "glossy", "leather", "#1C1C1C", true, 1, 0.6, 0.1},
	{"sand-suede", "Sand Suede", "soft", "suede-nap", "matte", "suede", "#C9B28F", true, 1, 0.05, 0},
	{"navy-suede", "Navy Suede", "soft", "suede-nap", "matte", "suede", "#1F2A44", true, 1, 0.05, 0},
	{"grey-wool-felt", "Grey Wool Felt", "soft", "wool-felt-weave", "matte", "fabric", "#8A8D8F", true, 1, 0, 0},
	{"cream-boucle", "Cream Bouclé", "soft", "boucle-loop", "matte", "fabric", "#EFE8DA", true, 1, 0, 0},
	{"olive-velvet", "Olive Velvet", "soft", "", "glossy", "fabric", "#5B6236", false, 1, 0.3, 0.05},
	{"white-mesh", "Breathable Mesh White", "soft", "", "flat", "mesh", "#F5F5F5", true, 0.85, 0.1, 0},
	{"natural-canvas", "Natural Canvas", "soft", "", "flat", "fabric", "#D8CBB0", true, 1, 0, 0},
	{"brushed-steel", "Brushed Steel", "metal", "brushed-metal", "metallic", "metal", "#B4B8BC", true, 1, 0.8, 0.5},
	{"polished-chrome", "Polished Chrome", "metal", "", "metallic", "metal", "#DADDE1", true, 1, 1, 0.9},
	{"matte-black-steel", "Matte Black Steel", "metal", "", "matte", "metal", "#222222", true, 1, 0.3, 0.1},
	{"brushed-brass", "Brushed Brass", "metal", "brushed-metal", "metallic", "metal", "#B5A642", true, 1, 0.8, 0.5},
	{"hammered-copper", "Hammered Copper", "metal", "hammered-copper", "metallic", "metal", "#B87333", true, 1, 0.8, 0.45},
	{"powder-coated-white", "Powder-coated White", "metal", "", "matte", "metal", "#F2F2F0", false, 1, 0.2, 0.05},
	{"anodized-aluminium", "Anodized Aluminium", "metal", "brushed-metal", "metallic", "metal", "#A9ACB6", true, 1, 0.7, 0.4},
	{"smoked-glass-trim", "Smoked Glass Trim", "metal", "", "glossy", "glass", "#3C4043", true, 0.4, 0.9, 0.7},
}

// variationSpec is one entry of an option's parameter list. Only the fields
// that fit the option's type are filled in.
type variationSpec struct {
	name     string
	selected bool
	// material options: the model part the material is applied to, and
	// the slug of a demo material (its category is taken from it).
	modelID  int
	material string
	// text options.
	text *textSpec
	// numeral options.
	numeral *int
}

type textSpec struct {
	value, fontSize, fontFamily string
	customColor                 bool
	// colorCategory is the slug of the category whose materials colour
	// the text.
	colorCategory string
}

type optionSpec struct {
	title, kind string
	settings    map[string]any
	variations  []variationSpec
}

type optionSetSpec struct {
	name    string
	options []string // option titles of the same configurator
}

type fieldSpec struct {
	title, kind, mandatory, description, settings string
	showTitle                                     int
}

type formSpec struct {
	enabled bool
	fields  []fieldSpec
}

// configuratorSpec is the content of one configurator, in demoOwners order.
type configuratorSpec struct {
	options []optionSpec
	sets    []optionSetSpec
	form    formSpec
}

// demoConfigurators holds, in the order of demoOwners' configurators, what
// each configurator contains. The chair has an option of every type.
var demoConfigurators = []configuratorSpec{
	{ // Oslo Lounge Chair (owner 1).
		options: []optionSpec{
			{"Frame Size", "select", map[string]any{"display": "dropdown", "required": true}, []variationSpec{
				{name: "Compact"}, {name: "Standard", selected: true}, {name: "Grand"},
			}},
			{"Leg Style", "radio", map[string]any{"layout": "horizontal", "required": true}, []variationSpec{
				{name: "Tapered", selected: true}, {name: "Hairpin"}, {name: "Sled"},
			}},
			{"Extras", "checkbox", map[string]any{"max_selected": 3, "required": false}, []variationSpec{
				{name: "Headrest", selected: true}, {name: "Matching Footstool"}, {name: "Seat Cushion Cover", selected: true},
			}},
			{"Cushion Style", "select_thumb", map[string]any{"thumbnail_size": 64, "columns": 3}, []variationSpec{
				{name: "Tufted"}, {name: "Channel Quilted"}, {name: "Plain", selected: true},
			}},
			{"Seat Height", "arrows", map[string]any{"loop": false, "unit": "cm"}, []variationSpec{
				{name: "Low (40 cm)"}, {name: "Standard (44 cm)", selected: true}, {name: "High (48 cm)"},
			}},
			{"Frame Wood", "material", map[string]any{"model": "oslo-chair-frame", "apply_to": []any{"frame", "legs"}}, []variationSpec{
				{name: "Natural Oak", selected: true, modelID: 101, material: "natural-oak"},
				{name: "Smoked Oak", modelID: 101, material: "smoked-oak"},
				{name: "American Walnut", modelID: 101, material: "american-walnut"},
				{name: "Black Ash", modelID: 101, material: "black-ash"},
			}},
			{"Engraving", "text", map[string]any{"max_length": 24, "placement": "backrest"}, []variationSpec{
				{name: "Backrest Plaque", text: &textSpec{value: "Made for you", fontSize: "14px", fontFamily: "Inter", customColor: true, colorCategory: "metal"}},
				{name: "Seat Label", text: &textSpec{value: "Nordhaus", fontSize: "12px", fontFamily: "Playfair Display", colorCategory: "soft"}},
			}},
			{"Quantity", "numeral", map[string]any{"min": 0, "max": 12, "step": 1}, []variationSpec{
				{name: "Chairs", numeral: new(1)}, {name: "Footstools", numeral: new(0)},
			}},
			{"Upholstery Pattern", "patterns", map[string]any{"scale": 1.5, "repeat": true}, []variationSpec{
				{name: "Herringbone", selected: true}, {name: "Houndstooth"}, {name: "Pinstripe"}, {name: "Solid"},
			}},
		},
		sets: []optionSetSpec{
			{"Living Room Classic", []string{"Frame Size", "Leg Style", "Frame Wood", "Upholstery Pattern"}},
			{"Personalised Gift", []string{"Engraving", "Extras", "Quantity"}},
		},
		form: formSpec{enabled: true, fields: []fieldSpec{
			{"Full name", "form-text", "required", "", `{"placeholder":"Your name"}`, 1},
			{"Email", "form-email", "required", "We send the order confirmation here.", `{"placeholder":"you@example.com"}`, 1},
			{"Phone", "form-text", "optional", "", `{"placeholder":"+47 000 00 000"}`, 1},
			{"Delivery notes", "form-textarea", "optional", "Door code, floor, preferred day.", `{"placeholder":"Anything the courier should know","rows":4}`, 0},
		}},
	},
	{ // Stride Runner Sneaker (owner 1).
		options: []optionSpec{
			{"Size", "select", map[string]any{"display": "dropdown", "unit": "EU"}, []variationSpec{
				{name: "40"}, {name: "41"}, {name: "42", selected: true}, {name: "43"},
			}},
			{"Upper", "material", map[string]any{"model": "stride-runner-upper", "apply_to": []any{"upper"}}, []variationSpec{
				{name: "Breathable Mesh White", selected: true, modelID: 201, material: "white-mesh"},
				{name: "Sand Suede", modelID: 201, material: "sand-suede"},
				{name: "Navy Suede", modelID: 201, material: "navy-suede"},
				{name: "Black Leather", modelID: 201, material: "black-leather"},
			}},
			{"Lace Colour", "radio", map[string]any{"layout": "swatches"}, []variationSpec{
				{name: "White", selected: true}, {name: "Black"}, {name: "Neon Orange"},
			}},
		},
		sets: []optionSetSpec{
			{"Running Essentials", []string{"Size", "Upper"}},
		},
		form: formSpec{enabled: false, fields: []fieldSpec{
			{"Name", "form-text", "required", "", `{"placeholder":"Your name"}`, 1},
			{"Email", "form-email", "required", "", `{"placeholder":"you@example.com"}`, 1},
			{"Running notes", "form-textarea", "optional", "Tell us about your gait or usual distance.", `{"placeholder":"e.g. 30 km a week, slight overpronation","rows":3}`, 1},
		}},
	},
	{ // Roadster Custom Bike (owner 2): small data of its own, for tenancy tests.
		options: []optionSpec{
			{"Frame Size", "select", map[string]any{"display": "dropdown", "required": true}, []variationSpec{
				{name: "S (50 cm)"}, {name: "M (54 cm)", selected: true}, {name: "L (58 cm)"},
			}},
			{"Paint Finish", "radio", map[string]any{"layout": "swatches"}, []variationSpec{
				{name: "Matte Black", selected: true}, {name: "Racing Red"}, {name: "Pearl White"},
			}},
		},
		sets: []optionSetSpec{
			{"Road Setup", []string{"Frame Size", "Paint Finish"}},
		},
		form: formSpec{enabled: true, fields: []fieldSpec{
			{"Name", "form-text", "required", "", `{"placeholder":"Your name"}`, 1},
			{"Email", "form-email", "required", "", `{"placeholder":"you@example.com"}`, 1},
			{"Inseam (cm)", "form-text", "optional", "Helps us check the frame size.", `{"placeholder":"e.g. 82"}`, 1},
		}},
	},
}

type customer struct{ name, email, phone string }

// demoCustomers place the orders, each twice.
var demoCustomers = []customer{
	{"Anna Larsen", "anna.larsen@example.com", "+47 412 30 101"},
	{"Jonas Berg", "jonas.berg@example.com", "+47 412 30 102"},
	{"Mia Schneider", "mia.schneider@example.com", "+49 151 2030 0103"},
	{"Lucas Moreau", "lucas.moreau@example.com", "+33 6 12 30 01 04"},
	{"Sofia Rossi", "sofia.rossi@example.com", "+39 331 230 0105"},
	{"Noah Jensen", "noah.jensen@example.com", "+45 21 30 01 06"},
	{"Emma Lindqvist", "emma.lindqvist@example.com", "+46 70 230 01 07"},
	{"Oliver Novak", "oliver.novak@example.com", "+420 603 300 108"},
	{"Ingrid Hansen", "ingrid.hansen@example.com", "+47 412 30 109"},
	{"Mateo García", "mateo.garcia@example.com", "+34 612 300 110"},
	{"Chloé Dubois", "chloe.dubois@example.com", "+33 6 12 30 01 11"},
	{"Henrik Nilsson", "henrik.nilsson@example.com", "+46 70 230 01 12"},
	{"Aisha Khan", "aisha.khan@example.com", "+44 7700 900113"},
	{"Lukas Weber", "lukas.weber@example.com", "+49 151 2030 0114"},
	{"Freya Andersen", "freya.andersen@example.com", "+45 21 30 01 15"},
}

// priced is a choice with its price in cents (a base price or a surcharge).
type priced struct {
	name  string
	cents int
}

// Chair choices, matching the variations of the Oslo Lounge Chair.
var (
	chairSizes    = []priced{{"Compact", 58900}, {"Standard", 64900}, {"Grand", 74900}}
	chairWoods    = []priced{{"Natural Oak", 0}, {"Smoked Oak", 4550}, {"American Walnut", 12000}, {"Black Ash", 3590}}
	chairLegs     = []string{"Tapered", "Hairpin", "Sled"}
	chairPatterns = []priced{{"Herringbone", 2995}, {"Houndstooth", 2995}, {"Pinstripe", 1990}, {"Solid", 0}}
)

// Sneaker choices, matching the variations of the Stride Runner Sneaker.
var (
	sneakerSizes  = []string{"40", "41", "42", "43"}
	sneakerUppers = []priced{{"Breathable Mesh White", 12990}, {"Sand Suede", 14995}, {"Navy Suede", 14995}, {"Black Leather", 16450}}
	sneakerLaces  = []priced{{"White", 0}, {"Black", 0}, {"Neon Orange", 499}}
)

// orderStatuses cycle over the orders so every status appears several times.
var orderStatuses = []string{"paid", "shipped", "new", "paid", "cancelled", "shipped", "paid", "new"}

// statusDelay is how long after its creation an order of each status was
// last updated (a new one, never); paid and shipped orders have an invoice.
var statusDelay = map[string]time.Duration{"paid": 15 * time.Minute, "shipped": 50 * time.Hour, "cancelled": 26 * time.Hour}

// Sizes of the order dataset of owner 1: three orders a day for ten days,
// 18 on the chair and 12 on the sneaker.
const (
	ordersPerDay = 3
	orderDays    = 10
)
