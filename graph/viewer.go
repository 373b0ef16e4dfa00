package graph

import (
	"context"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

func viewerOf(ctx context.Context) (*viewer.Viewer, error) {
	v := viewer.FromContext(ctx)
	if v == nil {
		return nil, apperr.ErrNoToken
	}
	return v, nil
}

// homeConfigurator is the configurator an Open API token was minted for.
func (r *Resolver) homeConfigurator(ctx context.Context, v *viewer.Viewer) (*ent.Configurator, error) {
	if v.ConfiguratorID == 0 {
		return nil, nil
	}
	return one[ent.Configurator](ctx, r.client.Configurator.Query().Where(configurator.ID(v.ConfiguratorID)), "configurator", v.ConfiguratorID)
}
