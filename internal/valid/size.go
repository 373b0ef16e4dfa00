package valid

import "github.com/configurator/catalogue/internal/apperr"

// Request body limits, the same on both transports: a JSON body holds an
// operation or a record and is small; a multipart body carries images,
// each limited by the file store, and is bounded as a whole.
const (
	MaxJSONBody      = 1 << 20
	MaxMultipartBody = 32 << 20
)

// TooLarge is the refusal of a request body over limit bytes.
func TooLarge(limit int64) *apperr.Error {
	return apperr.E(apperr.TooLarge, "the request body is larger than the limit of %d bytes", limit)
}
