package boot

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"mvdan.cc/sh/v3/interp"
)

// memFS is the instance's file system as its userData sees it: in memory, seeded with the
// AMI's files, never the host's. Writing a file creates its missing parent directories (a real
// AMI has more directories than the seed lists, and refusing a write the AMI would take is
// worse than taking one it would refuse).
//
// It is safe for concurrent use: a process substitution's reader (tee, logger) runs beside the
// script.
type memFS struct {
	mu    sync.Mutex
	files map[string]*memFile
}

type memFile struct {
	data []byte
	mode fs.FileMode
}

func newMemFS() *memFS {
	m := &memFS{files: map[string]*memFile{"/": {mode: fs.ModeDir | 0o755}}}
	for _, d := range []string{"/tmp", "/root", "/var/log", "/etc/systemd/system", "/usr/bin", "/usr/local/bin", "/dev"} {
		m.mkdirAll(d)
	}
	return m
}

// clean makes p absolute (relative to dir) and clean.
func clean(dir, p string) string {
	if !path.IsAbs(p) {
		p = path.Join(dir, p)
	}
	return path.Clean(p)
}

func (m *memFS) mkdirAll(p string) {
	for d := p; ; d = path.Dir(d) {
		if _, ok := m.files[d]; !ok {
			m.files[d] = &memFile{mode: fs.ModeDir | 0o755}
		}
		if d == "/" {
			return
		}
	}
}

// writeFile replaces p's contents, creating it and its parents.
func (m *memFS) writeFile(p string, data []byte, perm fs.FileMode) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mkdirAll(path.Dir(p))
	m.files[p] = &memFile{data: slices.Clone(data), mode: perm}
}

// readFile returns p's contents.
func (m *memFS) readFile(p string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[p]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	if f.mode.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: p, Err: errors.New("is a directory")}
	}
	return slices.Clone(f.data), nil
}

func (m *memFS) remove(p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name := range m.files {
		if name == p || strings.HasPrefix(name, p+"/") {
			delete(m.files, name)
		}
	}
}

func (m *memFS) chmod(p string, mode fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[p]
	if !ok {
		return &fs.PathError{Op: "chmod", Path: p, Err: fs.ErrNotExist}
	}
	f.mode = f.mode.Type() | mode.Perm()
	return nil
}

// list returns the names of the entries of directory p, sorted.
func (m *memFS) list(p string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for name := range m.files {
		if name != "/" && path.Dir(name) == p {
			names = append(names, path.Base(name))
		}
	}
	slices.Sort(names)
	return names
}

// open is the shell's open handler for regular files.
func (m *memFS) open(p string, flag int, perm fs.FileMode) (io.ReadWriteCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[p]
	write := flag&(os.O_WRONLY|os.O_RDWR) != 0
	switch {
	case ok && f.mode.IsDir():
		return nil, &fs.PathError{Op: "open", Path: p, Err: errors.New("is a directory")}
	case !ok && (!write || flag&os.O_CREATE == 0):
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	case !ok:
		m.mkdirAll(path.Dir(p))
		f = &memFile{mode: perm.Perm()}
		m.files[p] = f
	}
	if !write {
		return readOnly{bytes.NewReader(slices.Clone(f.data))}, nil
	}
	if flag&os.O_TRUNC != 0 {
		f.data = nil
	}
	return &fileWriter{fs: m, f: f}, nil
}

// readOnly is a file opened for reading.
type readOnly struct{ io.Reader }

func (readOnly) Write([]byte) (int, error) { return 0, errors.New("bad file descriptor") }
func (readOnly) Close() error              { return nil }

// fileWriter appends to a file as it is written, so a reader opening it later sees the bytes.
type fileWriter struct {
	fs *memFS
	f  *memFile
}

func (w *fileWriter) Read([]byte) (int, error) { return 0, errors.New("bad file descriptor") }
func (w *fileWriter) Close() error             { return nil }
func (w *fileWriter) Write(p []byte) (int, error) {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	w.f.data = append(w.f.data, p...)
	return len(p), nil
}

// stat is the shell's stat handler.
func (m *memFS) stat(p string) (fs.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[p]
	if !ok {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
	return fileInfo{name: path.Base(p), size: int64(len(f.data)), mode: f.mode}, nil
}

// access is the shell's access handler: root may read and write anything that exists, and
// execute what has an execute bit.
func (m *memFS) access(p string, mode interp.AccessMode) error {
	info, err := m.stat(p)
	if err != nil {
		return err
	}
	if mode&interp.AccessExec != 0 && info.Mode()&0o111 == 0 {
		return &fs.PathError{Op: "access", Path: p, Err: fs.ErrPermission}
	}
	return nil
}

func (m *memFS) readDir(p string) ([]fs.DirEntry, error) {
	info, err := m.stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: errors.New("not a directory")}
	}
	var entries []fs.DirEntry
	for _, name := range m.list(p) {
		if child, err := m.stat(path.Join(p, name)); err == nil {
			entries = append(entries, fs.FileInfoToDirEntry(child))
		}
	}
	return entries, nil
}

type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) Mode() fs.FileMode  { return i.mode }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return i.mode.IsDir() }
func (i fileInfo) Sys() any           { return nil }
