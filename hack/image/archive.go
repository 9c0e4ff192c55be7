package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// WriteArchive writes img as an OCI image layout in a tar file (what `podman load`, `skopeo copy
// oci-archive:` and `docker load` read), its manifest annotated with ref (the tag). Entries are
// sorted, with the time created and owner 0, so the same image gives the same file.
func WriteArchive(path string, img v1.Image, ref string, created time.Time) error {
	dir, err := os.MkdirTemp("", "joiner-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("writing the image layout, %w", err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
		return fmt.Errorf("writing the image layout, %w", err)
	}
	var names []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		names = append(names, path)
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(names)
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	for _, n := range names {
		if err := addFile(tw, dir, n, created); err != nil {
			return errors.Join(err, out.Close())
		}
	}
	if err := tw.Close(); err != nil {
		return errors.Join(err, out.Close())
	}
	return out.Close()
}

func addFile(tw *tar.Writer, root, path string, created time.Time) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
	h := &tar.Header{Name: rel, Mode: 0o644, ModTime: created, Typeflag: tar.TypeReg, Size: info.Size(), Format: tar.FormatPAX}
	if info.IsDir() {
		h.Name, h.Mode, h.Typeflag, h.Size = rel+"/", 0o755, tar.TypeDir, 0
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("archiving %s, %w", rel, err)
	}
	if info.IsDir() {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("archiving %s, %w", rel, err)
	}
	return nil
}
