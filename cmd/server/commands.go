package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/buildinfo"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/demo"
)

// parse parses a subcommand's flags, which may come before, between or
// after its positional arguments (server token revoke 3 --database-url
// URL works as the usage shows it); fs.Args() then holds the positional
// ones in their order. A bad flag is a usage error.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(flagsFirst(fs, args)); err != nil {
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}

// flagsFirst reorders args into the flags of fs (with their values), then
// "--" and the positional arguments, which is the order the flag package
// reads. A flag's value is the next argument unless it is a boolean flag
// or written as --name=value; "--" ends the flags as usual.
func flagsFirst(fs *flag.FlagSet, args []string) []string {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if f := fs.Lookup(name); f != nil && !hasValue && !isBool(f) {
				if i+1 == len(args) {
					return flags // the flag package reports the missing value
				}
				i++
				flags = append(flags, args[i])
			}
		default:
			positional = append(positional, a)
		}
	}
	return append(append(flags, "--"), positional...)
}

// isBool reports whether f is a boolean flag, which takes no value.
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// openDB opens and migrates the configured database; serve's connections
// carry PostgreSQL's statement_timeout (cfg.StatementTimeout).
func openDB(ctx context.Context, cfg *config.Config) (*ent.Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, usagef("%v", err)
	}
	c, err := database.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := database.Migrate(ctx, c, cfg.DatabaseURL); err != nil {
		c.Close()
		return nil, err
	}
	serving, err := database.WithStatementTimeout(cfg.DatabaseURL, cfg.StatementTimeout)
	if err != nil {
		c.Close()
		return nil, err
	}
	if serving == cfg.DatabaseURL {
		return c, nil
	}
	// The migration (an index built on a large table) ran without the
	// statement timeout; the service's connections have it.
	c.Close()
	return database.Open(ctx, serving)
}

// flags is the configuration and flag set of a command, with the flags
// register adds (Config.DatabaseFlags, or Config.ServeFlags for serve).
func flags(name string, env config.Env, register func(*config.Config, *flag.FlagSet, config.Env)) (*config.Config, *flag.FlagSet) {
	cfg := new(config.Config)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	register(cfg, fs, env)
	return cfg, fs
}

// noArgs refuses the positional arguments of a command that takes none.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// withDB runs do on the opened, migrated database, and closes it.
func withDB(ctx context.Context, cfg *config.Config, do func(*ent.Client) error) error {
	c, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	return do(c)
}

// withTokens runs do with the token service and its signing key.
func withTokens(ctx context.Context, cfg *config.Config, do func(*auth.Tokens) error) error {
	return withDB(ctx, cfg, func(c *ent.Client) error {
		signer, err := auth.OpenSigner(ctx, c, cfg.JWTSecret)
		if err != nil {
			return err
		}
		return do(auth.NewTokens(c, signer))
	})
}

func migrateCmd(ctx context.Context, args []string, env config.Env, stderr io.Writer) error {
	cfg, fs := flags("migrate", env, (*config.Config).DatabaseFlags)
	if err := parse(fs, args); err != nil {
		return err
	}
	return withDB(ctx, cfg, func(*ent.Client) error {
		_, err := fmt.Fprintf(stderr, "migrated %s\n", database.Redact(cfg.DatabaseURL))
		return err
	})
}

func seedCmd(ctx context.Context, args []string, env config.Env, stdout, _ io.Writer) error {
	cfg, fs := flags("seed", env, (*config.Config).DatabaseFlags)
	demoFlag := fs.Bool("demo", false, "load the demo dataset")
	if err := parse(fs, args); err != nil {
		return err
	}
	if !*demoFlag {
		return usagef("seed: only the demo dataset exists: run seed --demo")
	}
	return withDB(ctx, cfg, func(c *ent.Client) error {
		sum, err := demo.Seed(ctx, c)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(sum)
	})
}

func tokenCmd(ctx context.Context, args []string, env config.Env, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("token: want create, list or revoke")
	}
	cfg, fs := flags("token "+args[0], env, (*config.Config).DatabaseFlags)
	switch args[0] {
	case "create":
		return tokenCreate(ctx, cfg, fs, args[1:], stdout, stderr)
	case "list":
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if err := noArgs(fs); err != nil {
			return err
		}
		return withTokens(ctx, cfg, func(tokens *auth.Tokens) error {
			recs, err := tokens.List(ctx)
			if err != nil {
				return err
			}
			return writeTokens(stdout, recs)
		})
	case "revoke":
		return tokenRevoke(ctx, cfg, fs, args[1:], stdout)
	}
	return usagef("token: want create, list or revoke, not %q", args[0])
}

// tokenCreate creates an Open API token of a configurator or a dashboard
// token of an owner. stdout carries only the token, for scripts; the id
// goes to stderr.
func tokenCreate(ctx context.Context, cfg *config.Config, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	conf := fs.Int("configurator", 0, "home configurator of an Open API token")
	dashboard := fs.Bool("dashboard", false, "create a dashboard token")
	ownerID := fs.Int("owner", 0, "owner of a dashboard token")
	ttl := fs.Duration("ttl", 0, "lifetime of the token, e.g. 24h; 0: until revoked")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *ttl < 0:
		return usagef("token create: --ttl %v is negative; give a lifetime such as 24h (0: until revoked)", *ttl)
	case fs.NArg() > 0:
		return noArgs(fs)
	case *dashboard && *conf != 0:
		return usagef("token create: --configurator and --dashboard exclude each other")
	case *dashboard && *ownerID <= 0:
		return usagef("token create --dashboard needs --owner ID (a positive integer)")
	case !*dashboard && *ownerID != 0:
		return usagef("token create: --owner is for --dashboard tokens")
	case !*dashboard && *conf <= 0:
		return usagef("token create needs --configurator ID (a positive integer) or --dashboard --owner ID")
	}
	return withTokens(ctx, cfg, func(tokens *auth.Tokens) error {
		create := func() (string, *ent.APIToken, error) { return tokens.CreateOpenAPI(ctx, *conf, auth.TTL(*ttl)) }
		if *dashboard {
			create = func() (string, *ent.APIToken, error) { return tokens.CreateDashboard(ctx, *ownerID, auth.TTL(*ttl)) }
		}
		jwt, rec, err := create()
		if err != nil {
			return err
		}
		expires := "never expires"
		if rec.ExpiresAt != nil {
			expires = "expires " + rec.ExpiresAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(stderr, "created %s token %d of owner %d, %s (revoke: server token revoke %d)\n", rec.Kind, rec.ID, rec.OwnerID, expires, rec.ID)
		_, err = fmt.Fprintln(stdout, jwt)
		return err
	})
}

// tokenRevoke revokes the token of the one ID given.
func tokenRevoke(ctx context.Context, cfg *config.Config, fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("token revoke needs exactly one token ID")
	}
	id, err := strconv.Atoi(fs.Arg(0))
	if err != nil || id <= 0 {
		return usagef("token revoke: %q is not a token ID (a positive integer)", fs.Arg(0))
	}
	return withTokens(ctx, cfg, func(tokens *auth.Tokens) error {
		if err := tokens.Revoke(ctx, id); err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "revoked token %d\n", id)
		return err
	})
}

// writeTokens prints token records as a table, one a line: a person reads
// it, a script splits it on runs of spaces. Times are UTC, RFC 3339; "-"
// is none.
func writeTokens(w io.Writer, recs []*ent.APIToken) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tOWNER\tCONFIGURATOR\tCREATED\tEXPIRES\tREVOKED\tLAST USED\tISSUED BY")
	at := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	for _, r := range recs {
		conf := "-"
		if r.ConfiguratorID != nil {
			conf = strconv.Itoa(*r.ConfiguratorID)
		}
		expires := at(r.ExpiresAt)
		if r.ExpiresAt == nil {
			expires = "never"
		}
		by := "service"
		if r.Subject != nil {
			// A provider caller's record: its tokens carry their own exp.
			by, expires = "provider", "per token"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Kind, r.OwnerID, conf,
			at(&r.CreatedAt), expires, at(r.RevokedAt), at(r.LastUsedAt), by)
	}
	return tw.Flush()
}

// keysCmd manages the key set of the service's own tokens: list, rotate
// (add a key that signs from now on) and retire KID (drop an old one).
func keysCmd(ctx context.Context, args []string, env config.Env, stdout, _ io.Writer) error {
	if len(args) == 0 {
		return usagef("keys: want list, rotate or retire")
	}
	cfg, fs := flags("keys "+args[0], env, (*config.Config).DatabaseFlags)
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	switch args[0] {
	case "list", "rotate":
		if err := noArgs(fs); err != nil {
			return err
		}
	case "retire":
		if fs.NArg() != 1 {
			return usagef("keys retire needs exactly one key id (KID, as keys list shows it)")
		}
	default:
		return usagef("keys: want list, rotate or retire, not %q", args[0])
	}
	if cfg.JWTSecret != "" {
		return auth.ErrStaticKey
	}
	return withDB(ctx, cfg, func(c *ent.Client) error {
		switch args[0] {
		case "rotate":
			k, err := auth.RotateKey(ctx, c)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(stdout, "added signing key %s; it signs the tokens created from now on\n", k.ID)
			return err
		case "retire":
			if err := auth.RetireKey(ctx, c, fs.Arg(0)); err != nil {
				return err
			}
			_, err := fmt.Fprintf(stdout, "retired signing key %s; the tokens it signed are refused\n", fs.Arg(0))
			return err
		}
		return writeKeys(ctx, c, stdout)
	})
}

// writeKeys prints the key set as a table, the signing key last.
func writeKeys(ctx context.Context, c *ent.Client, stdout io.Writer) error {
	keys, err := auth.Keys(ctx, c)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KID\tCREATED\tUSE")
	for i, k := range keys {
		use := "verifies"
		if i == len(keys)-1 {
			use = "signs, verifies"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.ID, k.CreatedAt.UTC().Format(time.RFC3339), use)
	}
	return tw.Flush()
}

// versionCmd prints the build of this binary, one "key value" line each,
// so a person reads it and a script can grep it: module version, VCS
// revision, commit time, whether the tree was modified, Go version.
func versionCmd(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return usagef("version takes no arguments")
	}
	info := buildinfo.Read()
	rev, at := info.Revision, info.Time
	if rev == "" {
		rev, at = "unknown (built without version control information)", "unknown"
	}
	fmt.Fprintf(stdout, "version  %s\nrevision %s\ntime     %s\nmodified %t\ngo       %s\n",
		info.Version, rev, at, info.Modified, info.GoVersion)
	return nil
}
