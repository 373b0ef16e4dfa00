package endpoint

import (
	"context"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/configurator/catalogue/internal/requestid"
)

// RequestIDExtension names the extension that carries the request's id
// (the X-Request-Id the response echoes) in every GraphQL error, so that
// a client reporting an error can quote it and an operator find its log
// lines and trace.
const RequestIDExtension = "requestId"

// tagRequest sets extensions.requestId of e to the id of ctx's request.
func tagRequest(ctx context.Context, e *gqlerror.Error) {
	if id := requestid.FromContext(ctx); id != "" {
		setExt(e, RequestIDExtension, id)
	}
}
