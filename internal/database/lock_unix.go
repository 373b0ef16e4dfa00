//go:build unix

package database

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) of the SQLite database file at
// path, waiting while another process (or another client of this one)
// holds it; unlock releases it. flock locks are apart from the POSIX
// record locks SQLite takes on the same file, so they do not disturb it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s for the migration lock: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s for migrating: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
