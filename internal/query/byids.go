package query

import (
	"context"
	"fmt"

	"github.com/configurator/catalogue/internal/apperr"
)

// MaxByIDs bounds the ids of one ByIDs read: the representations of one
// type that a federation gateway may ask for in one _entities request,
// the row ceiling of perPage -1 (valid.AllPagesCeiling), so that no
// request reads more rows by id than a page may.
const MaxByIDs = 1000

// ByIDs reads the records of ids (the same id may come more than once)
// with one statement: read gets the distinct ids and runs one query that
// the privacy rules filter, as every read is. The records come back in the
// order of ids; a record the viewer may not see (another owner's) or that
// does not exist is nil, with a NotFound error naming it at the same index
// of errs, so that one caller's miss is never another's data. err is the
// failure of the whole read: more than MaxByIDs ids (a BAD_REQUEST naming
// field), or the statement's own failure.
func ByIDs[T any](ctx context.Context, ids []int, field, what string,
	read func(ctx context.Context, distinct []int) ([]*T, error), idOf func(*T) int) (recs []*T, errs []error, err error) {
	if len(ids) > MaxByIDs {
		return nil, nil, apperr.Field(field, "{} holds %d %ss; the limit is %d a request", len(ids), what, MaxByIDs)
	}
	distinct := make([]int, 0, len(ids))
	seen := make(map[int]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			distinct = append(distinct, id)
		}
	}
	found, err := read(ctx, distinct)
	if err != nil {
		return nil, nil, fmt.Errorf("load %ss by id: %w", what, err)
	}
	byID := make(map[int]*T, len(found))
	for _, r := range found {
		byID[idOf(r)] = r
	}
	recs, errs = make([]*T, len(ids)), make([]error, len(ids))
	for i, id := range ids {
		if recs[i] = byID[id]; recs[i] == nil {
			errs[i] = apperr.E(apperr.NotFound, "%s %d not found", what, id)
		}
	}
	return recs, errs, nil
}
