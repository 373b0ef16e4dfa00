package valid

import (
	"net/http"
	"strings"

	"github.com/configurator/catalogue/internal/apperr"
)

// Bounds of the request headers the service decodes itself, checked on
// their raw text before anything parses them: an Accept or a Content-Type
// this long or this divided was not sent by a client that means it, and
// each element costs the decoders an allocation.
const (
	// MaxAcceptBytes and MaxAcceptRanges bound Accept (all its lines
	// together): a browser sends about 100 bytes and 6 media ranges.
	MaxAcceptBytes  = 1024
	MaxAcceptRanges = 32
	// MaxContentTypeBytes and MaxContentTypeParams bound Content-Type: a
	// multipart boundary is at most 70 characters (RFC 2046), and a media
	// type of the service takes one or two parameters (charset,
	// boundary).
	MaxContentTypeBytes  = 256
	MaxContentTypeParams = 4
)

// MediaHeaders refuses an Accept over its bounds as a 400 naming it, and
// a Content-Type over its bounds as an unsupported media type (415)
// naming it, before either is parsed; both transports call it first
// thing.
func MediaHeaders(h http.Header) error {
	accept := h.Values("Accept")
	n, ranges := 0, 0
	for _, v := range accept {
		n += len(v)
		ranges += strings.Count(v, ",") + 1
	}
	switch {
	case n > MaxAcceptBytes:
		return apperr.E(apperr.Invalid, "the Accept header is %d bytes; at most %d are read", n, MaxAcceptBytes).At("Accept")
	case ranges > MaxAcceptRanges:
		return apperr.E(apperr.Invalid, "the Accept header names %d media ranges; at most %d are read", ranges, MaxAcceptRanges).At("Accept")
	}
	ct := h.Values("Content-Type")
	switch {
	case len(ct) > 1:
		return apperr.E(apperr.Unsupported, "the Content-Type header is sent %d times; send it once", len(ct)).At("Content-Type")
	case len(ct) == 0:
		return nil
	case len(ct[0]) > MaxContentTypeBytes:
		return apperr.E(apperr.Unsupported, "the Content-Type header is %d bytes; at most %d are read", len(ct[0]), MaxContentTypeBytes).At("Content-Type")
	case strings.Count(ct[0], ";") > MaxContentTypeParams:
		return apperr.E(apperr.Unsupported, "the Content-Type header has %d parameters; at most %d are read", strings.Count(ct[0], ";"), MaxContentTypeParams).At("Content-Type")
	}
	return nil
}
