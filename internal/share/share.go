// Package share makes and opens share links: an Open API token's override
// data, validated against its home configurator, is kept as an immutable
// snapshot named by a random key, and the key opens that configurator
// with the overrides applied, without a token. Both transports (and the
// share page) go through it.
package share

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/apitoken"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/ent/material"
	"github.com/configurator/catalogue/ent/materialcategory"
	"github.com/configurator/catalogue/ent/privacy"
	entshare "github.com/configurator/catalogue/ent/share"
	"github.com/configurator/catalogue/ent/texture"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/override"
	"github.com/configurator/catalogue/internal/rule"
	"github.com/configurator/catalogue/internal/valid"
	"github.com/configurator/catalogue/internal/viewer"
)

// Links makes and opens share links over one database.
type Links struct {
	// base starts every link; the key is appended.
	base string
}

// New returns the share links whose URLs start with base (the
// platform's configurator front-end, or the share page of this service).
func New(base string) *Links { return &Links{base: base} }

// Link is a share link as its maker gets it back.
type Link struct {
	// URL opens the configurator with the overrides applied.
	URL string
	// Key names the snapshot; it is the link's only credential.
	Key string
}

// keyRE is the form of a key (newKey); anything else is not looked up.
var keyRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// newKey returns 128 random bits: the key is the only credential of a
// link, so it must not be guessable.
func newKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Create validates override data (keyed by option id, see
// internal/override) against the options of the caller's home
// configurator, stores it on the caller's token record (the spec's
// storage) and as an immutable snapshot, and returns the snapshot's link.
// The same content sent again by the same token returns the same link. c
// is the client of the write's transaction. Its caller has made sure
// that ctx holds the Open API token of a configurator (auth.Overrides);
// bad data is Invalid about options.
func (l *Links) Create(ctx context.Context, c *ent.Client, raw json.RawMessage) (*Link, error) {
	if err := valid.JSON("options", raw); err != nil {
		return nil, err
	}
	v := viewer.FromContext(ctx)
	os, err := optionsOf(ctx, c, v.ConfiguratorID)
	if err != nil {
		return nil, err
	}
	opts := make([]override.Option, len(os))
	for i, o := range os {
		opts[i] = engineOption(o)
	}
	data, err := override.Parse(raw, opts)
	if err != nil {
		var oe *override.Error
		if errors.As(err, &oe) {
			// The engine's message names places inside the client's own
			// JSON, which both transports show as sent.
			return nil, apperr.Field(oe.Path, "%s", oe.Message)
		}
		return nil, err
	}
	if err := referencesExist(ctx, c, data); err != nil {
		return nil, err
	}
	canonical, err := data.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode overrides: %w", err)
	}
	var stored map[string]any
	if err := json.Unmarshal(canonical, &stored); err != nil {
		return nil, fmt.Errorf("decode canonical overrides: %w", err)
	}
	digest := data.Digest()
	if err := c.APIToken.UpdateOneID(v.TokenID).SetOptionsData(stored).Exec(ctx); err != nil {
		return nil, fmt.Errorf("store overrides on token %d: %w", v.TokenID, err)
	}
	// One snapshot per token and content: a concurrent request with the
	// same content meets the unique index and keeps the first.
	err = c.Share.Create().SetKey(newKey()).SetTokenID(v.TokenID).SetConfiguratorID(v.ConfiguratorID).
		SetData(stored).SetDigest(digest).
		OnConflictColumns(entshare.FieldTokenID, entshare.FieldDigest).Ignore().Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("store share: %w", err)
	}
	sh, err := c.Share.Query().Where(entshare.TokenID(v.TokenID), entshare.Digest(digest)).Only(ctx)
	if err != nil {
		return nil, fmt.Errorf("find share: %w", err)
	}
	return &Link{URL: l.base + sh.Key, Key: sh.Key}, nil
}

// referencesExist refuses overrides naming a material or material
// category the caller's owner does not have (another owner's are not
// found either), so a link never points a customer at a record the
// front-end cannot read. Model ids and text colour categories name no
// record of this service and are taken as given.
func referencesExist(ctx context.Context, c *ent.Client, data override.Data) error {
	for _, optionID := range slices.Sorted(maps.Keys(data)) {
		e := data[optionID]
		if e.MaterialID != nil {
			ok, err := c.Material.Query().Where(material.ID(*e.MaterialID)).Exist(ctx)
			if err != nil {
				return fmt.Errorf("find material %d: %w", *e.MaterialID, err)
			}
			if !ok {
				return apperr.Field(fmt.Sprintf("options.%d.material_id", optionID), "material_id of option %d: material %d not found", optionID, *e.MaterialID)
			}
		}
		if e.MaterialCategoryID != nil {
			ok, err := c.MaterialCategory.Query().Where(materialcategory.ID(*e.MaterialCategoryID)).Exist(ctx)
			if err != nil {
				return fmt.Errorf("find material category %d: %w", *e.MaterialCategoryID, err)
			}
			if !ok {
				return apperr.Field(fmt.Sprintf("options.%d.material_category_id", optionID), "material_category_id of option %d: material category %d not found", optionID, *e.MaterialCategoryID)
			}
		}
	}
	return nil
}

// optionsOf loads the options of a configurator with their variations, in
// display order (the data layer orders both).
func optionsOf(ctx context.Context, c *ent.Client, configuratorID int) ([]*ent.ConfiguratorOption, error) {
	os, err := c.ConfiguratorOption.Query().
		Where(configuratoroption.ConfiguratorID(configuratorID)).
		WithVariations().
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load options of configurator %d: %w", configuratorID, err)
	}
	return os, nil
}

// engineOption is an option with its loaded variations in the override
// engine's terms.
func engineOption(o *ent.ConfiguratorOption) override.Option {
	vs := make([]override.Variation, len(o.Edges.Variations))
	for i, v := range o.Edges.Variations {
		vs[i] = override.Variation{
			ID: v.ID, Selected: v.Selected,
			ModelID: v.ModelID, MaterialID: v.MaterialID, MaterialCategoryID: v.MaterialCategoryID,
			TextValue: v.TextValue, CustomColor: v.CustomColor,
			TextFontSize: v.TextFontSize, TextFontFamily: v.TextFontFamily,
			TextColorCategoryID: v.TextColorCategoryID, NumericalDefault: v.NumericalDefault,
		}
	}
	return override.Option{ID: o.ID, Type: string(o.Type), Variations: vs}
}

// Configurator is a configurator as a share link shows it: read-only, with
// the link's overrides applied to the variations of its options.
type Configurator struct {
	Key     string
	ID      int
	Name    string
	Options []*Option
	// ownerID is the owner of the link's configurator, whose materials
	// Materials reads.
	ownerID int
}

// Option is an option of a shared configurator.
type Option struct {
	ID             int
	ConfiguratorID int
	Title          string
	Type           configuratoroption.Type
	Settings       json.RawMessage
	Position       int
	CreatedAt      time.Time
	UpdatedAt      time.Time
	CreatedBy      string
	// ParameterList are the variations in position order, overrides
	// applied.
	ParameterList []*Variation
}

// Variation is a variation of a shared option, overrides applied: the
// fields the override engine returned, and those no override changes.
type Variation struct {
	override.Variation
	ConfiguratorOptionID int
	Name                 string
	Position             int
	CreatedAt            time.Time
	UpdatedAt            time.Time
}

// ErrNotFound answers every key that does not open a configurator, whatever
// the reason (unknown, malformed, revoked token), so keys cannot be probed.
var ErrNotFound = apperr.E(apperr.NotFound, "share link not found")

// Open reads the configurator behind a link with the link's overrides
// applied (the spec's open_api_for_user reads). The key is the
// credential: the key itself is looked up as system work, like a token,
// and the configurator is then read under the rule.SharedRead grant,
// which lets the read see that configurator and its options and
// variations and nothing else. No token is needed.
func (l *Links) Open(ctx context.Context, c *ent.Client, key string) (*Configurator, error) {
	if !keyRE.MatchString(key) {
		return nil, ErrNotFound
	}
	sh, err := c.Share.Query().Where(entshare.Key(key), entshare.HasTokenWith(apitoken.RevokedAtIsNil())).
		Only(privacy.DecisionContext(ctx, privacy.Allow))
	if ent.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find share: %w", err)
	}
	ctx = rule.WithSharedRead(ctx, rule.SharedRead{OwnerID: sh.OwnerID, ConfiguratorID: sh.ConfiguratorID})
	conf, err := c.Configurator.Query().Where(configurator.ID(sh.ConfiguratorID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load shared configurator: %w", err)
	}
	raw, err := json.Marshal(sh.Data)
	if err != nil {
		return nil, fmt.Errorf("encode share data: %w", err)
	}
	data, err := override.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("decode share %d: %w", sh.ID, err)
	}
	os, err := optionsOf(ctx, c, conf.ID)
	if err != nil {
		return nil, err
	}
	out := &Configurator{Key: key, ID: conf.ID, Name: conf.Name, Options: make([]*Option, len(os)), ownerID: sh.OwnerID}
	for i, o := range os {
		out.Options[i] = sharedOption(o, override.Apply(engineOption(o), data, true))
	}
	return out, nil
}

// sharedOption presents an option with the variations the engine returned
// (in the same order as o's loaded variations).
func sharedOption(o *ent.ConfiguratorOption, applied []override.Variation) *Option {
	so := &Option{
		ID: o.ID, ConfiguratorID: o.ConfiguratorID, Title: o.Title, Type: o.Type, Settings: o.Settings,
		Position: o.Position, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, CreatedBy: o.CreatedBy,
		ParameterList: make([]*Variation, len(applied)),
	}
	for i, a := range applied {
		v := o.Edges.Variations[i]
		so.ParameterList[i] = &Variation{
			Variation: a, ConfiguratorOptionID: v.ConfiguratorOptionID, Name: v.Name, Position: v.Position,
			CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		}
	}
	return so
}

// Material is what the share page shows of a material that a variation of
// a shared configurator names, so that a shopper sees a name, a colour and
// a texture rather than an id.
type Material struct {
	ID   int
	Name string
	// Color is #RRGGBB.
	Color string
	// Thumbnail is the URL of its texture's thumbnail, the 100 px one or
	// else the 50 px one; empty when it has neither.
	Thumbnail string
}

// Materials reads the materials that the variations of sc name (with the
// link's overrides applied), keyed by id; a material since deleted is left
// out. sc must come from Open. The share grant (rule.SharedRead) covers the
// configurator, its options and their variations only, so the materials
// are read as system work, restricted to the link's owner and to those ids.
// It is the share page's, not GraphQL's: sharedConfigurator shows the ids.
func Materials(ctx context.Context, c *ent.Client, sc *Configurator) (map[int]*Material, error) {
	var ids []int
	for _, o := range sc.Options {
		for _, v := range o.ParameterList {
			if v.MaterialID != nil && !slices.Contains(ids, *v.MaterialID) {
				ids = append(ids, *v.MaterialID)
			}
		}
	}
	out := make(map[int]*Material, len(ids))
	if len(ids) == 0 || sc.ownerID == 0 {
		return out, nil
	}
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	ms, err := c.Material.Query().Where(material.OwnerID(sc.ownerID), material.IDIn(ids...)).
		WithTexture(func(q *ent.TextureQuery) { q.Where(texture.OwnerID(sc.ownerID)) }).
		All(sys)
	if err != nil {
		return nil, fmt.Errorf("load materials of share %s: %w", sc.Key, err)
	}
	for _, m := range ms {
		sm := &Material{ID: m.ID, Name: m.Name, Color: m.Color}
		if t := m.Edges.Texture; t != nil {
			for _, u := range []*string{t.TextureThumbnail100, t.TextureThumbnail50} {
				if u != nil && *u != "" {
					sm.Thumbnail = *u
					break
				}
			}
		}
		out[m.ID] = sm
	}
	return out, nil
}
