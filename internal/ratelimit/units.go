package ratelimit

// What requests cost, in units of the budget, the same on both transports.
// A unit is about one page of data: a REST read of up to 100 rows, or a
// GraphQL operation of up to 1,000 complexity points (values in its
// answer, see graph/cost); a page of 50 materials with 15 fields costs 1
// unit either way. Writes cost more: they hold a transaction, and orders
// and textures store and thumbnail images.
const (
	// ReadUnits is what every authenticated request costs at least, also
	// one that is refused as malformed.
	ReadUnits = 1
	// WriteUnits is what a write adds: a REST POST, PUT or DELETE, or each
	// mutation field of a GraphQL operation.
	WriteUnits = 10
	// RowsPerUnit is the rows of a REST per_page=-1 answer one unit pays for.
	RowsPerUnit = 100
	// PointsPerUnit is the complexity points of a GraphQL operation one
	// unit pays for.
	PointsPerUnit = 1000
)

// RowUnits is the cost of a REST list answer of rows rows.
func RowUnits(rows int) int {
	return max(ReadUnits, ceilDiv(rows, RowsPerUnit))
}

// OperationUnits is the cost of a GraphQL operation of complexity points
// with writes mutation fields.
func OperationUnits(points, writes int) int {
	return max(ReadUnits, ceilDiv(points, PointsPerUnit)) + writes*WriteUnits
}

func ceilDiv(a, b int) int {
	return (a + b - 1) / b
}
