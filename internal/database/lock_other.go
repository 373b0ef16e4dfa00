//go:build !unix

package database

// lockFile does nothing where flock(2) does not exist: run one migration
// at a time there (server migrate before starting replicas).
func lockFile(string) (unlock func(), err error) { return func() {}, nil }
