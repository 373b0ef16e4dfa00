package endpoint

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/persisted"
)

// persistedDocuments lets a request name its document by SHA-256 instead
// of sending its text, as a gqlgen extension that runs before every other
// that reads the text (the anonymous rule, the limits):
//
//   - a document of the trusted manifest (PERSISTED_DOCUMENTS) is served
//     by its hash alone, always;
//   - automatic persisted queries (APQ, Apollo's protocol, which replaces
//     gqlgen's AutomaticPersistedQuery): a request with the text and its
//     hash registers it in the cache once the hash is checked, a request
//     with the hash alone runs the registered text, and an unknown hash
//     is PERSISTED_QUERY_NOT_FOUND, on which APQ clients send the text;
//   - with only set (PERSISTED_ONLY), a request with a token other than a
//     dashboard token (or none) may run nothing but trusted documents:
//     any other text, APQ registrations included, is PERSISTED_QUERY_ONLY
//     (HTTP 400), and a hash outside the manifest is not looked up in the
//     cache, whoever registered it. Dashboard tokens keep free-form
//     documents, so the playground works for the owner.
//
// The hash is extensions.persistedQuery.sha256Hash (version 1, or none),
// or a top-level documentId that the transport turns into it
// (useDocumentID). The extension runs inside auth.Middleware, so the
// caller is known when it decides.
type persistedDocuments struct {
	cache   graphql.Cache[string]
	trusted *persisted.Manifest
	only    bool
}

var (
	_ graphql.HandlerExtension          = persistedDocuments{}
	_ graphql.OperationParameterMutator = persistedDocuments{}
)

func (persistedDocuments) ExtensionName() string { return "PersistedDocuments" }

// Validate checks that there is a cache.
func (p persistedDocuments) Validate(graphql.ExecutableSchema) error {
	if p.cache == nil {
		return errors.New("persisted documents need an APQ cache")
	}
	return nil
}

// MutateOperationParameters fills in the text of a document named by its
// hash, registers an APQ document, and refuses what the rules above do
// not allow.
func (p persistedDocuments) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	hash, named, err := persistedHash(params.Extensions)
	if err != nil {
		return gqlError(err)
	}
	trustedOnly := p.only && auth.Allow(ctx, auth.FreeForm) != nil
	switch {
	case !named:
		if trustedOnly {
			if _, ok := p.trusted.Lookup(persisted.Hash(params.Query)); !ok {
				return gqlError(errTrustedOnly)
			}
		}
		return nil
	case params.Query == "":
		if doc, ok := p.trusted.Lookup(hash); ok {
			params.Query = doc
			return nil
		}
		if trustedOnly {
			return notFound("no trusted document has the hash %s; only trusted documents are accepted", hash)
		}
		doc, ok := p.cache.Get(ctx, hash)
		if !ok {
			// The message APQ clients look for, beside the code.
			return notFound("PersistedQueryNotFound")
		}
		params.Query = doc
		return nil
	}
	if persisted.Hash(params.Query) != hash {
		return gqlError(apperr.E(apperr.Invalid, "extensions.persistedQuery.sha256Hash %s is not the SHA-256 of query", hash))
	}
	if _, ok := p.trusted.Lookup(hash); ok {
		return nil
	}
	if trustedOnly {
		return gqlError(errTrustedOnly)
	}
	if len(params.Query) > MaxDocumentBytes {
		// Not kept: the limits refuse it anyway.
		return tooComplex("the document is %d bytes; the limit is %d", len(params.Query), MaxDocumentBytes)
	}
	p.cache.Add(ctx, hash, params.Query)
	return nil
}

// errTrustedOnly refuses a document sent as text under PERSISTED_ONLY.
var errTrustedOnly = apperr.E(apperr.TrustedOnly,
	"only trusted documents are accepted: name a document of the server's manifest by its SHA-256 "+
		"(extensions.persistedQuery.sha256Hash or documentId) instead of sending its text; a dashboard token may send any document")

// notFound is APQ's answer to a hash the server does not know.
func notFound(format string, args ...any) *gqlerror.Error {
	return &gqlerror.Error{Message: fmt.Sprintf(format, args...), Extensions: map[string]any{"code": "PERSISTED_QUERY_NOT_FOUND"}}
}

// persistedHash reads extensions.persistedQuery: the hash it names, and
// whether there is one. Anything but an object with a sha256Hash of 64
// lower-case hex digits and a version of 1 (or none) is an Invalid error.
func persistedHash(ext map[string]any) (hash string, named bool, err error) {
	raw, ok := ext["persistedQuery"]
	if !ok || raw == nil {
		return "", false, nil
	}
	pq, _ := raw.(map[string]any)
	h, _ := pq["sha256Hash"].(string)
	if pq == nil || !persisted.ValidHash(h) {
		return "", false, apperr.E(apperr.Invalid, "extensions.persistedQuery must be an object with sha256Hash, the SHA-256 of the document in 64 lower-case hex digits")
	}
	if v, ok := pq["version"]; ok && fmt.Sprint(v) != "1" {
		return "", false, apperr.E(apperr.Invalid, "extensions.persistedQuery.version must be 1, got %v", v)
	}
	return h, true, nil
}

// useDocumentID names the document of p by id, a documentId: the GraphQL
// over HTTP proposal's "sha256:<hex>", or the bare hex that
// graphql-codegen's client preset keeps in a document's __meta__. It
// becomes extensions.persistedQuery, which persistedDocuments reads; a
// request that also sends the text or that extension is refused, since
// it would name its document twice.
func useDocumentID(p *graphql.RawParams, id string) error {
	h := strings.TrimPrefix(id, "sha256:")
	if !persisted.ValidHash(h) {
		return apperr.E(apperr.Invalid, "documentId must be sha256: and the document's SHA-256 in 64 lower-case hex digits, or those digits alone, got %q", id)
	}
	if p.Query != "" || p.Extensions["persistedQuery"] != nil {
		return apperr.E(apperr.Invalid, "documentId names the document: send it without query or extensions.persistedQuery")
	}
	if p.Extensions == nil {
		p.Extensions = map[string]any{}
	}
	p.Extensions["persistedQuery"] = map[string]any{"version": 1, "sha256Hash": h}
	return nil
}
