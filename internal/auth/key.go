// Package auth issues and verifies the service's JWTs, resolves them to
// their token records, and puts the caller (the viewer) in the context.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/setting"
	"github.com/configurator/catalogue/ent/signingkey"
	"github.com/configurator/catalogue/internal/apperr"
)

// SigningKeySetting is the settings key of the key generated before key
// sets existed; the first key set is made of it, so tokens signed with it
// keep working.
const SigningKeySetting = "jwt_signing_key"

// MinSecretLen is the shortest JWT_SECRET accepted: HS256 keys shorter
// than the hash are guessable.
const MinSecretLen = 32

// KeysChannel is the PostgreSQL notification channel on which a rotation
// or a retirement announces itself, from inside its transaction; its
// payload is the schema of its tables (notifySQL). Serving processes
// reload their key set when they hear it.
const KeysChannel = "signing_keys_changed"

// Key is one HS256 key of the service's own tokens.
type Key struct {
	// ID is the kid header of the tokens the key signs.
	ID        string
	Secret    []byte
	CreatedAt time.Time
}

// KeyID derives the kid of secret: the first 8 bytes of its SHA-256, in
// hex, so that it names the key without revealing it and the same secret
// always gets the same kid (two replicas importing one key agree).
func KeyID(secret []byte) string {
	h := sha256.Sum256(secret)
	return hex.EncodeToString(h[:8])
}

// SigningKey returns the key generated once and kept in the settings, the
// key of the service before key sets. It makes one when there is none,
// so the CLI and every replica agree without any configuration.
func SigningKey(ctx context.Context, c *ent.Client) ([]byte, error) {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	buf := make([]byte, 32)
	rand.Read(buf)
	// Two replicas starting together race here: the first insert wins and
	// both read it back.
	err := c.Setting.Create().SetKey(SigningKeySetting).SetValue(base64.RawStdEncoding.EncodeToString(buf)).
		OnConflictColumns(setting.FieldKey).Ignore().Exec(ctx)
	if err != nil {
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

// ErrStaticKey refuses key management while JWT_SECRET is set: the key is
// then the environment's, not the database's.
var ErrStaticKey = apperr.E(apperr.Invalid, "JWT_SECRET is set: the signing key is that secret; unset it to manage keys in the database")

// Keys returns the key set kept in the database, oldest first (the last
// one signs). An empty set is first made of the settings key (generated
// when there is none), so that a database from before key sets keeps its
// tokens working and a new one gets its first key.
func Keys(ctx context.Context, c *ent.Client) ([]Key, error) {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	keys, err := listKeys(ctx, c)
	if err != nil || len(keys) > 0 {
		return keys, err
	}
	legacy, err := SigningKey(ctx, c)
	if err != nil {
		return nil, err
	}
	// Replicas starting together import the same key under the same kid:
	// the first insert wins.
	err = c.SigningKey.Create().SetKid(KeyID(legacy)).SetSecret(base64.RawStdEncoding.EncodeToString(legacy)).
		OnConflictColumns(signingkey.FieldKid).Ignore().Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("store signing key: %w", err)
	}
	return listKeys(ctx, c)
}

func listKeys(ctx context.Context, c *ent.Client) ([]Key, error) {
	rows, err := c.SigningKey.Query().Order(ent.Asc(signingkey.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load signing keys: %w", err)
	}
	keys := make([]Key, len(rows))
	for i, r := range rows {
		secret, err := base64.RawStdEncoding.DecodeString(r.Secret)
		if err != nil {
			return nil, fmt.Errorf("decode signing key %s: %w", r.Kid, err)
		}
		keys[i] = Key{ID: r.Kid, Secret: secret, CreatedAt: r.CreatedAt}
	}
	return keys, nil
}

// RotateKey adds a new key to the set kept in the database; it signs
// every token minted from then on, while the older keys still verify
// theirs. Serving processes on PostgreSQL hear of it at once (KeysChannel),
// others within KeysEvery or at the first token with its kid.
func RotateKey(ctx context.Context, c *ent.Client) (Key, error) {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	if _, err := Keys(ctx, c); err != nil {
		return Key{}, err
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	var k Key
	err := changeKeys(ctx, c, func(tx *ent.Tx) error {
		r, err := tx.SigningKey.Create().SetKid(KeyID(secret)).SetSecret(base64.RawStdEncoding.EncodeToString(secret)).Save(ctx)
		if err != nil {
			return fmt.Errorf("store signing key: %w", err)
		}
		k = Key{ID: r.Kid, Secret: secret, CreatedAt: r.CreatedAt}
		return nil
	})
	return k, err
}

// RetireKey removes key kid from the set: the tokens it signed stop
// verifying (on PostgreSQL at once, elsewhere within KeysEvery). The
// newest key, which signs, cannot be retired: rotate first. An unknown
// kid is NotFound.
func RetireKey(ctx context.Context, c *ent.Client, kid string) error {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	keys, err := Keys(ctx, c)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(keys, func(k Key) bool { return k.ID == kid }) {
		return apperr.E(apperr.NotFound, "signing key %q not found", kid)
	}
	if keys[len(keys)-1].ID == kid {
		return apperr.E(apperr.Conflict, "signing key %s is the newest, which signs new tokens: run `server keys rotate` first", kid)
	}
	return changeKeys(ctx, c, func(tx *ent.Tx) error {
		if _, err := tx.SigningKey.Delete().Where(signingkey.Kid(kid)).Exec(ctx); err != nil {
			return fmt.Errorf("retire signing key %s: %w", kid, err)
		}
		// The key from before key sets is also kept in the settings;
		// retired, it must not stay in the database.
		s, err := tx.Setting.Query().Where(setting.Key(SigningKeySetting)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("load signing key setting: %w", err)
		}
		if legacy, err := base64.RawStdEncoding.DecodeString(s.Value); err == nil && KeyID(legacy) == kid {
			if _, err := tx.Setting.Delete().Where(setting.Key(SigningKeySetting)).Exec(ctx); err != nil {
				return fmt.Errorf("retire signing key %s: %w", kid, err)
			}
		}
		return nil
	})
}

// changeKeys runs change in a transaction that, on PostgreSQL, also
// notifies KeysChannel, so every serving process reloads its key set as
// the change commits.
func changeKeys(ctx context.Context, c *ent.Client, change func(*ent.Tx) error) error {
	return inTx(ctx, c, "change signing keys", func(tx *ent.Tx) error {
		if err := change(tx); err != nil {
			return err
		}
		var d string
		if _, err := tx.APIToken.Query().Where(dialectOf(&d)).Exist(ctx); err != nil {
			return fmt.Errorf("change signing keys: %w", err)
		}
		return notify(ctx, tx, d, KeysChannel, "")
	})
}
