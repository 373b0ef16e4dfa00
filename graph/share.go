package graph

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

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/apitoken"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/ent/material"
	"github.com/configurator/catalogue/ent/materialcategory"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/share"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/override"
	"github.com/configurator/catalogue/internal/viewer"
)

// keyRE is the form of a share key (newShareKey); anything else is not
// looked up.
var keyRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// newShareKey returns 128 random bits: the key is the only credential of a
// share link, so it must not be guessable.
func newShareKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// setOptionOverrides validates override data against the options of the
// caller's home configurator, stores it on the caller's token record (the
// spec's storage) and as an immutable snapshot, and returns the share link
// of the snapshot. The same content sent again by the same token returns
// the same link.
func (r *Resolver) setOptionOverrides(ctx context.Context, options map[string]any) (*model.ShareLink, error) {
	v, err := viewerOf(ctx)
	if err != nil {
		return nil, err
	}
	if v.Kind != viewer.KindOpenAPI || v.ConfiguratorID == 0 {
		return nil, apperr.E(apperr.Forbidden, "overrides need the Open API token of a configurator")
	}
	raw, err := json.Marshal(options)
	if err != nil {
		return nil, apperr.Field("options", "options must be a JSON object")
	}
	os, err := r.configuratorOptions(ctx, v.ConfiguratorID)
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
			return nil, apperr.Field(oe.Path, "%s", oe.Message)
		}
		return nil, err
	}
	if err := r.catalogueRefsExist(ctx, data); err != nil {
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
	var key string
	err = r.withTx(ctx, func(c *ent.Client) error {
		if err := c.APIToken.UpdateOneID(v.TokenID).SetOptionsData(stored).Exec(ctx); err != nil {
			return fmt.Errorf("store overrides on token %d: %w", v.TokenID, err)
		}
		// One snapshot per token and content: a concurrent request with
		// the same content meets the unique index and keeps the first.
		err := c.Share.Create().SetKey(newShareKey()).SetTokenID(v.TokenID).SetConfiguratorID(v.ConfiguratorID).
			SetData(stored).SetDigest(digest).
			OnConflictColumns(share.FieldTokenID, share.FieldDigest).Ignore().Exec(ctx)
		if err != nil {
			return fmt.Errorf("store share: %w", err)
		}
		sh, err := c.Share.Query().Where(share.TokenID(v.TokenID), share.Digest(digest)).Only(ctx)
		if err != nil {
			return fmt.Errorf("find share: %w", err)
		}
		key = sh.Key
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &model.ShareLink{URL: r.shareBase + key, Key: key}, nil
}

// catalogueRefsExist refuses overrides naming a material or material
// category the caller's owner does not have (another owner's are not
// found either), so a link never points a customer at a record the
// front-end cannot read. Model ids and text colour categories name no
// record of this service and are taken as given.
func (r *Resolver) catalogueRefsExist(ctx context.Context, data override.Data) error {
	ids := slices.Sorted(maps.Keys(data))
	for _, optionID := range ids {
		e := data[optionID]
		if e.MaterialID != nil {
			ok, err := r.client.Material.Query().Where(material.ID(*e.MaterialID)).Exist(ctx)
			if err != nil {
				return fmt.Errorf("find material %d: %w", *e.MaterialID, err)
			}
			if !ok {
				return apperr.Field(fmt.Sprintf("options.%d.material_id", optionID), "material_id of option %d: material %d not found", optionID, *e.MaterialID)
			}
		}
		if e.MaterialCategoryID != nil {
			ok, err := r.client.MaterialCategory.Query().Where(materialcategory.ID(*e.MaterialCategoryID)).Exist(ctx)
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

// configuratorOptions loads the options of a configurator with their variations, in
// display order.
func (r *Resolver) configuratorOptions(ctx context.Context, configuratorID int) ([]*ent.ConfiguratorOption, error) {
	os, err := r.client.ConfiguratorOption.Query().
		Where(configuratoroption.ConfiguratorID(configuratorID)).
		WithVariations(withVariations).
		Order(configuratoroption.ByPosition(), configuratoroption.ByID()).
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

// errNoShare answers every key that does not open a configurator, whatever
// the reason (unknown, malformed, revoked token), so keys cannot be probed.
var errNoShare = apperr.E(apperr.NotFound, "share link not found")

// sharedConfigurator reads the configurator behind a share link with the
// link's overrides applied (the spec's open_api_for_user reads). The key
// is the credential: the read runs as the token that made the link, and
// returns only that configurator and its options.
func (r *Resolver) sharedConfigurator(ctx context.Context, key string) (*model.SharedConfigurator, error) {
	if !keyRE.MatchString(key) {
		return nil, errNoShare
	}
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	sh, err := r.client.Share.Query().Where(share.Key(key)).
		WithToken(func(q *ent.APITokenQuery) { q.Where(apitoken.RevokedAtIsNil()) }).
		Only(sys)
	if ent.IsNotFound(err) {
		return nil, errNoShare
	}
	if err != nil {
		return nil, fmt.Errorf("find share: %w", err)
	}
	if sh.Edges.Token == nil {
		return nil, errNoShare
	}
	ctx = viewer.NewContext(ctx, &viewer.Viewer{
		OwnerID: sh.OwnerID, Kind: viewer.KindOpenAPI, ConfiguratorID: sh.ConfiguratorID, TokenID: sh.TokenID,
	})
	conf, err := r.client.Configurator.Query().Where(configurator.ID(sh.ConfiguratorID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errNoShare
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
	os, err := r.configuratorOptions(ctx, conf.ID)
	if err != nil {
		return nil, err
	}
	out := &model.SharedConfigurator{Key: key, ID: conf.ID, Name: conf.Name, Options: make([]*model.SharedOption, len(os))}
	for i, o := range os {
		out.Options[i] = sharedOption(o, override.Apply(engineOption(o), data, true))
	}
	return out, nil
}

// sharedOption presents an option with the variations the engine returned
// (in the same order as o's loaded variations).
func sharedOption(o *ent.ConfiguratorOption, applied []override.Variation) *model.SharedOption {
	so := &model.SharedOption{
		ID: o.ID, ConfiguratorID: o.ConfiguratorID, Title: o.Title, Type: o.Type, Settings: o.Settings,
		Position: o.Position, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, CreatedBy: o.CreatedBy,
		ParameterList: make([]*model.SharedVariation, len(applied)),
	}
	for i, a := range applied {
		v := o.Edges.Variations[i]
		so.ParameterList[i] = &model.SharedVariation{
			ID: v.ID, ConfiguratorOptionID: v.ConfiguratorOptionID, Name: v.Name, Position: v.Position,
			Selected: a.Selected, ModelID: a.ModelID, MaterialID: a.MaterialID, MaterialCategoryID: a.MaterialCategoryID,
			TextValue: a.TextValue, CustomColor: a.CustomColor, TextFontSize: a.TextFontSize, TextFontFamily: a.TextFontFamily,
			TextColorCategoryID: a.TextColorCategoryID, NumericalDefault: a.NumericalDefault, SelectedParts: a.SelectedParts,
			CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		}
	}
	return so
}
