package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Disk is a Store in a local directory, the default for a single instance.
// Each file is one regular file named as it is stored.
type Disk struct {
	dir string
}

var _ Store = (*Disk)(nil)

// NewDisk returns a Disk keeping its files in dir, creating dir (and its
// parents) with mode 0o750 if it does not exist, so a fresh installation
// needs no set-up.
func NewDisk(dir string) (*Disk, error) {
	if dir == "" {
		return nil, errors.New("create upload directory: no directory given")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create upload directory: %w", err)
	}
	return &Disk{dir: dir}, nil
}

// Put writes data to a temporary file in the directory and renames it into
// place, so a reader (or a crash) never sees a partial file. Files get mode
// 0o640.
func (d *Disk) Put(ctx context.Context, name string, data []byte) error {
	if err := check(ctx, "store", name); err != nil {
		return err
	}
	if err := d.write(filepath.Join(d.dir, name), data); err != nil {
		return fmt.Errorf("store %s: %w", name, err)
	}
	return nil
}

// write puts data at path through a temporary file in the same directory
// (so the rename is atomic), removing the temporary file on any failure.
func (d *Disk) write(path string, data []byte) (err error) {
	// The temporary name starts with a dot, which ValidName never admits,
	// so a half-written file can never be opened through the Store.
	tmp, err := os.CreateTemp(d.dir, ".upload-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	// Chmod is not subject to the umask, so the mode is exactly 0o640.
	if err := tmp.Chmod(0o640); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Open opens the file stored under name. The *os.File it returns also
// seeks, which lets the file handler answer range requests.
func (d *Disk) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := check(ctx, "open", name); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(d.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	return f, nil
}

// Delete removes the file stored under name; an absent file is no error.
func (d *Disk) Delete(ctx context.Context, name string) error {
	if err := check(ctx, "delete", name); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(d.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}
