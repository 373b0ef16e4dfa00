// Package auth issues and verifies the service's JWTs, resolves them to
// their token records, and puts the caller (the viewer) in the context.
package auth

import (
	"context"
	"crypto/rand"
	stdsql "database/sql"
	"encoding/base64"
	"errors"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/setting"
)

// SigningKeySetting is the settings key of the generated signing key.
const SigningKeySetting = "jwt_signing_key"

// MinSecretLen is the shortest JWT_SECRET accepted: HS256 keys shorter
// than the hash are guessable.
const MinSecretLen = 32

// SigningKey returns the HS256 key: secret when it is set, otherwise a key
// generated once and kept in the database, so the CLI and every replica
// sign and verify with the same key without any configuration.
func SigningKey(ctx context.Context, c *ent.Client, secret string) ([]byte, error) {
	if secret != "" {
		if len(secret) < MinSecretLen {
			return nil, fmt.Errorf("JWT_SECRET is %d bytes; use at least %d", len(secret), MinSecretLen)
		}
		return []byte(secret), nil
	}
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return nil, fmt.Errorf("generate signing key: %w", err)
	}
	// Two replicas starting together race here: the first insert wins and
	// both read it back.
	err := c.Setting.Create().SetKey(SigningKeySetting).SetValue(base64.RawStdEncoding.EncodeToString(buf)).
		OnConflict(sql.ConflictColumns(setting.FieldKey)).DoNothing().Exec(ctx)
	if err != nil && !errors.Is(err, stdsql.ErrNoRows) {
		return nil, fmt.Errorf("store signing key: %w", err)
	}
	s, err := c.Setting.Query().Where(setting.Key(SigningKeySetting)).Only(ctx)
	if err != nil {
		return nil, fmt.Errorf("load signing key: %w", err)
	}
	key, err := base64.RawStdEncoding.DecodeString(s.Value)
	if err != nil {
		return nil, fmt.Errorf("decode signing key: %w", err)
	}
	return key, nil
}
