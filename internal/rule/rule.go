// Package rule holds the ent privacy rules and hooks that enforce tenancy
// below both transports, so that no resolver or handler can forget it;
// what a token's scope allows is decided by internal/auth's Allow. A
// context made with privacy.DecisionContext(ctx, privacy.Allow) (system
// work: migrations, seeding, token checks) bypasses them.
package rule

import (
	"context"

	"entgo.io/ent/entql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/ent/configuratorform"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/ent/materialcategory"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/texture"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// Owner is the tenancy rule, decided here and nowhere else: it answers
// which owner's records the caller in ctx is confined to, so that the
// privacy rules below, SQL that ent does not build (order totals) and what
// else is kept per owner (subscriptions, locks, idempotency keys) all
// follow one answer. System work (a context made with
// privacy.DecisionContext(ctx, privacy.Allow), which ent's policies let
// through) is confined to no owner: all is true. A request without a
// viewer is refused with apperr.ErrNoToken.
func Owner(ctx context.Context) (owner int, all bool, err error) {
	if system(ctx) {
		return 0, true, nil
	}
	v := viewer.FromContext(ctx)
	if v == nil {
		return 0, false, apperr.ErrNoToken
	}
	return v.OwnerID, false, nil
}

// FilterOwner restricts every query and every update or delete to the
// owner Owner confines the caller to, so another owner's rows are simply
// not found. Requests without a viewer are refused as unauthenticated.
func FilterOwner() privacy.QueryMutationRule {
	return confine("owner", func(f interface{ WhereOwnerID(entql.IntP) }, p entql.IntP) { f.WhereOwnerID(p) })
}

// FilterOwnerID restricts queries of owners to the one Owner confines the
// caller to.
func FilterOwnerID() privacy.QueryRule {
	return confine("id", func(f interface{ WhereID(entql.IntP) }, p entql.IntP) { f.WhereID(p) })
}

// confine is the filter of the owner Owner confines the caller to, set
// by where on the column it names; a filter without that column is
// denied, and system work is not filtered.
func confine[F any](column string, where func(F, entql.IntP)) privacy.FilterFunc {
	return privacy.FilterFunc(func(ctx context.Context, f privacy.Filter) error {
		owner, all, err := Owner(ctx)
		if err != nil {
			return err
		}
		if all {
			return privacy.Skip
		}
		cf, ok := f.(F)
		if !ok {
			return privacy.Denyf("no %s filter on %T", column, f)
		}
		where(cf, entql.IntEQ(owner))
		return privacy.Skip
	})
}

// reference is a foreign key a mutation may set, with the query that tells
// whether the viewer can see its target.
type reference struct {
	// name names the target in messages; field is the ent field (and the
	// domain input) that sets it, read with the mutation's Field.
	name, field string
	exists      func(ctx context.Context, c *ent.Client, id int) (bool, error)
}

type clienter interface{ Client() *ent.Client }

var references = []reference{
	{"configurator", "configurator_id", func(ctx context.Context, c *ent.Client, id int) (bool, error) {
		return c.Configurator.Query().Where(configurator.ID(id)).Exist(ctx)
	}},
	{"category", "category_id", func(ctx context.Context, c *ent.Client, id int) (bool, error) {
		return c.MaterialCategory.Query().Where(materialcategory.ID(id)).Exist(ctx)
	}},
	{"texture", "texture_id", func(ctx context.Context, c *ent.Client, id int) (bool, error) {
		return c.Texture.Query().Where(texture.ID(id)).Exist(ctx)
	}},
	{"configurator option", "configurator_option_id", func(ctx context.Context, c *ent.Client, id int) (bool, error) {
		return c.ConfiguratorOption.Query().Where(configuratoroption.ID(id)).Exist(ctx)
	}},
	{"form", "form_id", func(ctx context.Context, c *ent.Client, id int) (bool, error) {
		return c.ConfiguratorForm.Query().Where(configuratorform.ID(id)).Exist(ctx)
	}},
}

// ReferencesVisible refuses a write that points a record at another
// owner's configurator, category, texture, option or form: the target is
// answered as not found, exactly as a read of it would be.
func ReferencesVisible() privacy.MutationRule {
	return privacy.MutationRuleFunc(func(ctx context.Context, m ent.Mutation) error {
		c, ok := m.(clienter)
		if !ok {
			return privacy.Skip
		}
		for _, ref := range references {
			v, set := m.Field(ref.field)
			id, isID := v.(int)
			if !set || !isID {
				continue
			}
			ok, err := ref.exists(ctx, c.Client(), id)
			if err != nil {
				return err
			}
			if !ok {
				return apperr.E(apperr.NotFound, "%s %d not found", ref.name, id).At(ref.field)
			}
		}
		// The options of an option set are a many-to-many edge.
		if s, ok := m.(interface{ OptionsIDs() []int }); ok {
			if ids := s.OptionsIDs(); len(ids) > 0 {
				n, err := c.Client().ConfiguratorOption.Query().Where(configuratoroption.IDIn(ids...)).Count(ctx)
				if err != nil {
					return err
				}
				if n != len(ids) {
					return apperr.E(apperr.NotFound, "configurator option not found")
				}
			}
		}
		return privacy.Skip
	})
}

// system reports whether ctx carries the Allow decision of system work
// (seeding, the CLI), which sets owners explicitly. DecisionFromContext
// answers an Allow as a nil decision that is present.
func system(ctx context.Context) bool {
	d, ok := privacy.DecisionFromContext(ctx)
	return ok && d == nil
}

// SetOwner is a hook that assigns new records to the owner Owner confines
// the caller to; the owner is never taken from client input. System work
// keeps the owner it set.
func SetOwner() ent.Hook {
	type ownerSetter interface{ SetOwnerID(int) }
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if s, ok := m.(ownerSetter); ok && m.Op().Is(ent.OpCreate) {
				if owner, all, err := Owner(ctx); err == nil && !all {
					s.SetOwnerID(owner)
				}
			}
			return next.Mutate(ctx, m)
		})
	}
}

// SharedRead is the grant of a share-link key: it may read one
// configurator of one owner, with its options and their variations, and
// nothing else. It is not a viewer: it has no token, no scope and no
// access to any other record.
type SharedRead struct {
	OwnerID        int
	ConfiguratorID int
}

type sharedReadKey struct{}

// WithSharedRead returns a copy of ctx that carries the grant g; the share
// links package adds it once the key is found.
func WithSharedRead(ctx context.Context, g SharedRead) context.Context {
	return context.WithValue(ctx, sharedReadKey{}, g)
}

// AllowSharedRead lets a request without a viewer that holds a share grant
// read the granted configurator, its options and their variations: the
// query is filtered to them and allowed. Requests with a viewer, or without
// a grant, go on to the tenancy rule.
func AllowSharedRead() privacy.QueryRule {
	type ownerFilter interface{ WhereOwnerID(entql.IntP) }
	return privacy.FilterFunc(func(ctx context.Context, f privacy.Filter) error {
		g, ok := ctx.Value(sharedReadKey{}).(SharedRead)
		if !ok || viewer.FromContext(ctx) != nil {
			return privacy.Skip
		}
		of, ok := f.(ownerFilter)
		if !ok {
			return privacy.Denyf("no owner filter on %T", f)
		}
		of.WhereOwnerID(entql.IntEQ(g.OwnerID))
		switch f := f.(type) {
		case *ent.ConfiguratorFilter:
			f.WhereID(entql.IntEQ(g.ConfiguratorID))
		case *ent.ConfiguratorOptionFilter:
			f.WhereConfiguratorID(entql.IntEQ(g.ConfiguratorID))
		case *ent.OptionVariationFilter:
			f.WhereHasOptionWith(configuratoroption.ConfiguratorID(g.ConfiguratorID))
		default:
			return privacy.Denyf("a share link does not read %T", f)
		}
		return privacy.Allow
	})
}
