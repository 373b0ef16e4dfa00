// Package httpcache lets clients revalidate what they read instead of
// downloading it again: the 200 answer to a GET carries a strong ETag
// computed from its bytes, and a request whose If-None-Match names it gets
// 304 with no body. Both transports (REST v1 and GraphQL over GET) hand it
// an answer they have already built whole, so the validator costs one hash
// of bytes in memory and no extra copy.
//
// The answer is computed for each request after authorization, so an ETag
// only ever describes what this caller would receive: a 304 is given when
// the caller's own answer hashes to the tag it sent, never because another
// token or owner was sent that tag. Answers depend on the token, hence
// Cache-Control: private (no shared cache may store them), no-cache (every
// use is revalidated, since any write may change them) and
// Vary: Authorization.
package httpcache

import (
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// CacheControl is the Cache-Control of a revalidatable answer.
const CacheControl = "private, no-cache"

// represented are the response headers that are part of the
// representation besides its body: they go into the ETag, so that two
// answers with the same body but another media type or another page
// arithmetic (the bare-array lists send their total in X-Total-Count) never
// share a strong validator, and a 304 leaves them out (RFC 9110, 15.4.5),
// since the cached answer already has them.
var represented = [...]string{"Content-Type", "Link", "X-Total-Count"}

// Cacheable reports whether an answer with status to r gets a validator:
// a 200 to a GET (or HEAD). Writes, errors and POST queries are not
// revalidated; they stay Cache-Control: no-store.
func Cacheable(r *http.Request, status int) bool {
	return status == http.StatusOK && (r.Method == http.MethodGet || r.Method == http.MethodHead)
}

// Write answers body, the whole 200 representation of a read (with its
// Content-Type and the other represented headers already set on w), with
// its ETag, Cache-Control and Vary; when r's If-None-Match matches the
// ETag, the answer is 304 with the same validator headers and no body.
// Authorization is added to the Vary the handler set, if any (GraphQL's
// media type follows Accept).
func Write(w http.ResponseWriter, r *http.Request, body []byte) {
	h := w.Header()
	tag := ETag(h, body)
	h.Set("ETag", tag)
	h.Set("Cache-Control", CacheControl)
	h.Add("Vary", "Authorization")
	if NoneMatch(r.Header.Values("If-None-Match"), tag) {
		for _, k := range represented {
			h.Del(k)
		}
		h.Del("Content-Length")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// ETag is the strong entity tag of body with the represented headers of h:
// 16 hex digits of their 64-bit xxHash, quoted. xxHash reads several bytes
// a cycle, so the tag of a megabyte list costs well under a millisecond;
// it is not a cryptographic hash and need not be: a tag only decides
// whether a caller's own copy is current.
func ETag(h http.Header, body []byte) string {
	var d xxhash.Digest
	d.Reset()
	for _, k := range represented {
		for _, v := range h[k] {
			d.WriteString(k)
			d.WriteString(": ")
			d.WriteString(v)
			d.WriteString("\n")
		}
	}
	d.WriteString("\n")
	d.Write(body)
	sum := binary.BigEndian.AppendUint64(make([]byte, 0, 8), d.Sum64())
	return `"` + hex.EncodeToString(sum) + `"`
}

// NoneMatch reports whether the If-None-Match field values match tag,
// an entity tag this server generated, so that the answer is 304: "*"
// matches any current representation, and a list matches when one of its
// tags equals tag by the weak comparison RFC 9110 (13.1.2) prescribes for
// If-None-Match (W/ is ignored on either side). A malformed value matches
// nothing and is otherwise ignored, as net/http's file server does: the
// client gets the full answer rather than an error.
func NoneMatch(values []string, tag string) bool {
	opaque := strings.TrimPrefix(tag, "W/")
	for _, v := range values {
		for {
			v = strings.TrimLeft(v, " \t,") // whitespace and empty list elements (RFC 9110, 5.6.1)
			if v == "" {
				break
			}
			if v[0] == '*' {
				rest := strings.TrimLeft(v[1:], " \t")
				return rest == "" || rest[0] == ','
			}
			t, rest, ok := scanETag(v)
			if !ok {
				return false
			}
			if t == opaque {
				return true
			}
			v = rest
		}
	}
	return false
}

// scanETag reads one entity-tag at the start of s: its opaque-tag (quotes
// included, W/ dropped) and what follows it. etagc is %x21 / %x23-7E /
// obs-text, so a tag may hold commas and ends only at its closing quote.
func scanETag(s string) (opaque, rest string, ok bool) {
	s = strings.TrimPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			rest = strings.TrimLeft(s[i+1:], " \t")
			if rest != "" && rest[0] != ',' {
				return "", "", false
			}
			return s[:i+1], rest, true
		case c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80:
		default:
			return "", "", false
		}
	}
	return "", "", false
}
