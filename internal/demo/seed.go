package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/internal/valid"
)

// seeder writes the dataset through one transaction, one row at a time in
// a fixed order (so ids are assigned in that order), and remembers the ids
// it created so that later rows can refer to them.
type seeder struct {
	tx *ent.Tx
	// now is the fixed clock of the catalogue rows: each row is one
	// minute after the previous one.
	now time.Time

	owners        []int // in demoOwners order
	configurators []int // in demoOwners' configurator order
	confOwner     map[int]int
	categories    map[string]int // by slug
	textures      map[string]int // by slug
	materials     map[string]int // by slug
	matCategory   map[string]int // material slug -> its category id
}

func newSeeder(tx *ent.Tx) *seeder {
	return &seeder{
		tx:          tx,
		now:         setupStart,
		confOwner:   map[int]int{},
		categories:  map[string]int{},
		textures:    map[string]int{},
		materials:   map[string]int{},
		matCategory: map[string]int{},
	}
}

// tick returns the creation time of the next catalogue row.
func (s *seeder) tick() time.Time {
	t := s.now
	s.now = s.now.Add(time.Minute)
	return t
}

func (s *seeder) run(ctx context.Context) error {
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"owners and configurators", s.ownersAndConfigurators},
		{"catalogue", s.catalogue},
		{"configurator content", s.configuratorContent},
		{"orders", s.orders},
	}
	for _, st := range steps {
		if err := st.fn(ctx); err != nil {
			return fmt.Errorf("seed %s: %w", st.name, err)
		}
	}
	return nil
}

func (s *seeder) ownersAndConfigurators(ctx context.Context) error {
	for _, spec := range demoOwners {
		at := s.tick()
		o, err := s.tx.Owner.Create().SetName(spec.name).SetCreatedAt(at).SetUpdatedAt(at).Save(ctx)
		if err != nil {
			return fmt.Errorf("owner %q: %w", spec.name, err)
		}
		s.owners = append(s.owners, o.ID)
		for _, name := range spec.configurators {
			at := s.tick()
			conf, err := s.tx.Configurator.Create().SetOwnerID(o.ID).SetName(name).
				SetCreatedAt(at).SetUpdatedAt(at).Save(ctx)
			if err != nil {
				return fmt.Errorf("configurator %q: %w", name, err)
			}
			s.configurators = append(s.configurators, conf.ID)
			s.confOwner[conf.ID] = o.ID
		}
	}
	return nil
}

// catalogue writes the categories, textures and materials, all of owner 1.
func (s *seeder) catalogue(ctx context.Context) error {
	ownerID := s.owners[0]
	for _, spec := range demoCategories {
		at := s.tick()
		cat, err := s.tx.MaterialCategory.Create().SetOwnerID(ownerID).
			SetTitle(spec.title).SetDescription(spec.description).SetCreatedBy(catalogueAuthor).
			SetCreatedAt(at).SetUpdatedAt(at).Save(ctx)
		if err != nil {
			return fmt.Errorf("category %q: %w", spec.title, err)
		}
		s.categories[spec.slug] = cat.ID
	}
	bumps := map[string]bool{}
	for _, spec := range demoTextures {
		at := s.tick()
		base := assetBase + "textures/" + spec.slug
		create := s.tx.Texture.Create().SetOwnerID(ownerID).SetName(spec.name).
			SetCategoryID(s.categories[spec.category]).
			SetTextureFile(base + ".jpg").
			SetTextureThumbnail50(base + "_50.jpg").
			SetTextureThumbnail100(base + "_100.jpg").
			SetCreatedAt(at).SetUpdatedAt(at)
		if spec.bump {
			create.SetBumpFile(base + "_bump.jpg")
		}
		tex, err := create.Save(ctx)
		if err != nil {
			return fmt.Errorf("texture %q: %w", spec.name, err)
		}
		s.textures[spec.slug] = tex.ID
		bumps[spec.slug] = spec.bump
	}
	for _, spec := range demoMaterials {
		at := s.tick()
		catID := s.categories[spec.category]
		create := s.tx.Material.Create().SetOwnerID(ownerID).SetName(spec.name).
			SetMaterialFile(assetBase + "materials/" + spec.slug + ".glb").
			SetCategoryID(catID).
			SetStatus(spec.active).
			SetMaterialType(spec.materialType).
			SetSurface(spec.surface).
			SetBump(bumps[spec.texture]).
			SetColor(spec.color).
			SetOpacity(spec.opacity).
			SetSpecular(spec.specular).
			SetReflection(spec.reflection).
			SetCreatedBy(catalogueAuthor).
			SetCreatedAt(at).SetUpdatedAt(at)
		if spec.texture != "" {
			create.SetTextureID(s.textures[spec.texture])
		}
		m, err := create.Save(ctx)
		if err != nil {
			return fmt.Errorf("material %q: %w", spec.name, err)
		}
		s.materials[spec.slug] = m.ID
		s.matCategory[spec.slug] = catID
	}
	return nil
}

// configuratorContent writes, configurator by configurator, the options
// with their variations, the option sets and the form with its fields.
func (s *seeder) configuratorContent(ctx context.Context) error {
	for i, spec := range demoConfigurators {
		confID := s.configurators[i]
		ownerID := s.confOwner[confID]
		author := catalogueAuthor
		if ownerID != s.owners[0] {
			author = bikeAuthor
		}
		optionIDs := map[string]int{}
		for pos, opt := range spec.options {
			id, err := s.option(ctx, ownerID, confID, pos+1, author, opt)
			if err != nil {
				return err
			}
			optionIDs[opt.title] = id
		}
		for _, set := range spec.sets {
			at := s.tick()
			create := s.tx.OptionSet.Create().SetOwnerID(ownerID).SetConfiguratorID(confID).
				SetName(set.name).SetCreatedAt(at).SetUpdatedAt(at)
			for _, title := range set.options {
				id, ok := optionIDs[title]
				if !ok {
					return fmt.Errorf("option set %q names unknown option %q", set.name, title)
				}
				create.AddOptionIDs(id)
			}
			if err := create.Exec(ctx); err != nil {
				return fmt.Errorf("option set %q: %w", set.name, err)
			}
		}
		at := s.tick()
		form, err := s.tx.ConfiguratorForm.Create().SetOwnerID(ownerID).SetConfiguratorID(confID).
			SetEnableForm(spec.form.enabled).SetCreatedAt(at).SetUpdatedAt(at).Save(ctx)
		if err != nil {
			return fmt.Errorf("form of configurator %d: %w", confID, err)
		}
		for pos, f := range spec.form.fields {
			at := s.tick()
			err := s.tx.FormField.Create().SetOwnerID(ownerID).SetConfiguratorID(confID).
				SetFormID(form.ID).SetTitle(f.title).SetType(f.kind).
				SetMandatoryStatus(f.mandatory).SetDescription(f.description).
				SetSettings(f.settings).SetShowTitle(f.showTitle).SetPosition(pos + 1).
				SetCreatedAt(at).SetUpdatedAt(at).Exec(ctx)
			if err != nil {
				return fmt.Errorf("form field %q: %w", f.title, err)
			}
		}
	}
	return nil
}

// option writes one option and its variations and returns the option id.
func (s *seeder) option(ctx context.Context, ownerID, confID, position int, author string, spec optionSpec) (int, error) {
	at := s.tick()
	opt, err := s.tx.ConfiguratorOption.Create().SetOwnerID(ownerID).SetConfiguratorID(confID).
		SetTitle(spec.title).SetType(configuratoroption.Type(spec.kind)).
		SetSettings(object(spec.settings)).SetPosition(position).SetCreatedBy(author).
		SetCreatedAt(at).SetUpdatedAt(at).Save(ctx)
	if err != nil {
		return 0, fmt.Errorf("option %q: %w", spec.title, err)
	}
	for pos, v := range spec.variations {
		at := s.tick()
		create := s.tx.OptionVariation.Create().SetOwnerID(ownerID).
			SetConfiguratorOptionID(opt.ID).SetName(v.name).SetPosition(pos + 1).
			SetSelected(v.selected).SetCreatedAt(at).SetUpdatedAt(at)
		if v.material != "" {
			matID, ok := s.materials[v.material]
			if !ok {
				return 0, fmt.Errorf("variation %q names unknown material %q", v.name, v.material)
			}
			create.SetModelID(v.modelID).SetMaterialID(matID).
				SetMaterialCategoryID(s.matCategory[v.material])
		}
		if t := v.text; t != nil {
			create.SetTextValue(t.value).SetCustomColor(t.customColor).
				SetTextFontSize(t.fontSize).SetTextFontFamily(t.fontFamily).
				SetTextColorCategoryID(s.categories[t.colorCategory])
		}
		create.SetNillableNumericalDefault(v.numeral)
		if err := create.Exec(ctx); err != nil {
			return 0, fmt.Errorf("variation %q of option %q: %w", v.name, spec.title, err)
		}
	}
	return opt.ID, nil
}

// orderRow is an order before insertion; rows are sorted by creation time
// so that order ids follow the order in which they were placed.
type orderRow struct {
	ownerID, confID int
	at, updated     time.Time
	cents           int
	status          string
	customer        customer
	summary         map[string]any
	snapshot        *string // nil: none (so for invoice and storefront)
	printMap        []string
	invoice         *string
	storefront      *string
}

// orders writes 30 orders of owner 1 over its two configurators, three a
// day from 2026-03-01 to 2026-03-10, and 2 orders of owner 2.
func (s *seeder) orders(ctx context.Context) error {
	chairID, sneakerID, bikeID := s.configurators[0], s.configurators[1], s.configurators[2]
	var rows []orderRow
	var chairs, sneakers int
	for i := 0; i < ordersPerDay*orderDays; i++ {
		day, slot := i/ordersPerDay, i%ordersPerDay
		at := ordersDay1.AddDate(0, 0, day).
			Add(time.Duration(9+4*slot)*time.Hour + time.Duration((7*day+13*slot)%60)*time.Minute)
		number := i + 1
		r := orderRow{
			ownerID:  s.owners[0],
			at:       at,
			status:   orderStatuses[i%len(orderStatuses)],
			customer: demoCustomers[i%len(demoCustomers)],
		}
		if m := i % 5; m == 0 || m == 1 || m == 3 {
			k := chairs
			chairs++
			size, wood := chairSizes[k%3], chairWoods[(k/2)%4]
			leg, pattern := chairLegs[(k+1)%3], chairPatterns[(3*k+1)%4]
			r.confID = chairID
			r.cents = size.cents + wood.cents + pattern.cents
			r.summary = map[string]any{
				"Frame Size": size.name, "Frame Wood": wood.name,
				"Leg Style": leg, "Upholstery Pattern": pattern.name,
			}
			r.storefront = new("https://nordhaus.example/shop/oslo-lounge-chair")
		} else {
			j := sneakers
			sneakers++
			size, upper, lace := sneakerSizes[(3*j)%4], sneakerUppers[(j+1)%4], sneakerLaces[j%3]
			r.confID = sneakerID
			r.cents = upper.cents + lace.cents
			r.summary = map[string]any{"Size": size, "Upper": upper.name, "Lace Colour": lace.name}
			r.storefront = new("https://nordhaus.example/shop/stride-runner")
		}
		if i%4 == 3 {
			r.storefront = nil // placed through the embedded configurator only
		}
		dir := fmt.Sprintf(assetBase+"orders/nordhaus-%04d/", number)
		if i%3 != 1 {
			r.snapshot = new(dir + "snapshot.png")
			if i%2 == 0 {
				r.printMap = []string{dir + "print-front.png", dir + "print-back.png"}
			}
		}
		r.updated = at.Add(statusDelay[r.status])
		if r.status == "paid" || r.status == "shipped" {
			r.invoice = new(fmt.Sprintf(assetBase+"invoices/NH-2026-%04d.pdf", number))
		}
		rows = append(rows, r)
	}
	bike1 := time.Date(2026, time.March, 4, 11, 20, 0, 0, time.UTC)
	bike2 := time.Date(2026, time.March, 8, 16, 50, 0, 0, time.UTC)
	rows = append(rows,
		orderRow{
			ownerID: s.owners[1], confID: bikeID, at: bike1, updated: bike1.Add(20 * time.Minute),
			cents: 189900, status: "paid",
			customer: customer{"Erik Solberg", "erik.solberg@example.com", "+47 415 60 201"},
			summary:  map[string]any{"Frame Size": "M (54 cm)", "Paint Finish": "Racing Red"},
			invoice:  new(assetBase + "invoices/VB-2026-0001.pdf"), storefront: new("https://velocity.example/build"),
		},
		orderRow{
			ownerID: s.owners[1], confID: bikeID, at: bike2, updated: bike2,
			cents: 194950, status: "new",
			customer: customer{"Lea Fischer", "lea.fischer@example.com", "+49 160 4050 202"},
			summary:  map[string]any{"Frame Size": "S (50 cm)", "Paint Finish": "Pearl White"},
			snapshot: new(assetBase + "orders/velocity-0002/snapshot.png"),
			printMap: []string{assetBase + "orders/velocity-0002/print-frame.png"},
		},
	)
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].at.Before(rows[b].at) })
	for _, r := range rows {
		create := s.tx.Order.Create().SetOwnerID(r.ownerID).SetConfiguratorID(r.confID).
			SetPrice(float64(r.cents) / 100).SetStatus(r.status).
			SetCustomerDetails(object(map[string]any{
				"name": r.customer.name, "email": r.customer.email, "phone": r.customer.phone,
			})).
			SetConfiguratorSummary(object(r.summary)).
			SetNillableConfiguratorSnapshot(r.snapshot).SetNillableInvoiceURL(r.invoice).
			SetNillableOrderStorefront(r.storefront).SetCreatedAt(r.at).SetUpdatedAt(r.updated)
		if r.printMap != nil {
			create.SetConfiguratorPrintMap(r.printMap)
		}
		if err := create.Exec(ctx); err != nil {
			return fmt.Errorf("order of %s at %s: %w", r.customer.name, r.at.Format(time.RFC3339), err)
		}
	}
	return nil
}

// object encodes a JSON object of the demo data (a map of plain values,
// which always encodes) in its stored form, as the service writes every
// JSON object (valid.Stored), so the demo reads the same on both
// databases.
func object(m map[string]any) json.RawMessage {
	b, _ := json.Marshal(m)
	stored, err := valid.Stored(b)
	if err != nil {
		panic("demo: " + err.Error())
	}
	return stored
}
