package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// staticBinary builds a small static program for the test's images, standing in for joiner
// (the builder treats every binary alike).
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { println(\"joiner\") }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "joiner")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-o", bin, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOFLAGS=-mod=mod")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the test binary: %v\n%s", err, out)
	}
	return bin
}

// write builds the image of bin into a tarball and returns its path and digest.
func write(t *testing.T, bin string) (string, string) {
	t.Helper()
	img, err := Build(Options{Binary: bin, Arch: runtime.GOARCH, Created: time.Unix(0, 0).UTC(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "image.tar")
	if err := WriteArchive(out, img, "ghcr.io/joinerhq/joiner:test", time.Unix(0, 0).UTC()); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return out, d.String()
}

// TestImage builds the image twice, reads one back from its tarball and checks its manifest,
// config and files.
func TestImage(t *testing.T) {
	bin := staticBinary(t)
	path, digest := write(t, bin)
	again, againDigest := write(t, bin)
	if digest != againDigest {
		t.Errorf("two builds of one binary gave digests %s and %s: the build is not reproducible", digest, againDigest)
	}
	a, errA := os.ReadFile(path)
	b, errB := os.ReadFile(again)
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Errorf("two builds of one binary wrote different archives (%v, %v)", errA, errB)
	}

	img := readBack(t, path)
	if got, err := img.Digest(); err != nil || got.String() != digest {
		t.Errorf("digest read back = %v (%v), want %s", got, err, digest)
	}
	checkConfig(t, img)
	files, certs := layerFiles(t, img)
	want := map[string]int64{"joiner": 0o755, "etc/passwd": 0o644, "etc/group": 0o644, "etc/ssl/certs/ca-certificates.crt": 0o644, "tmp/": 0o1777, "home/nonroot/": 0o700}
	for f, mode := range want {
		if h := files[f]; h == nil || h.Mode != mode {
			t.Errorf("%s: %v, want mode %o", f, h, mode)
		}
	}
	if h := files["home/nonroot/"]; h != nil && h.Uid != 65532 {
		t.Errorf("home/nonroot/ owned by %d, want 65532", h.Uid)
	}
	for _, shell := range []string{"bin/sh", "bin/bash", "bin/busybox", "usr/bin/env"} {
		if files[shell] != nil {
			t.Errorf("the image has %s: it must have no shell", shell)
		}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certs) || len(certs) < 100_000 {
		t.Errorf("the CA bundle (%d bytes) holds no certificates", len(certs))
	}
}

func TestBuildRefusesWhatCannotRun(t *testing.T) {
	script := filepath.Join(t.TempDir(), "joiner")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho joiner\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(Options{Binary: script, Arch: runtime.GOARCH}); err == nil {
		t.Error("Build accepted a shell script")
	}
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	if _, err := Build(Options{Binary: staticBinary(t), Arch: other}); err == nil {
		t.Errorf("Build accepted a %s binary for %s", runtime.GOARCH, other)
	}
}

// readBack extracts the archive and returns the image its index names ghcr.io/joinerhq/joiner:test.
func readBack(t *testing.T, archive string) v1.Image {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatalf("the archive is not an OCI image layout: %v", err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "ghcr.io/joinerhq/joiner:test" {
		t.Fatalf("index %+v (%v), want one manifest named ghcr.io/joinerhq/joiner:test", m, err)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatalf("reading the image back: %v", err)
	}
	return img
}

// layerFiles returns the headers of the image's one layer by name, and the CA bundle's content;
// every entry must carry the epoch as its time.
func layerFiles(t *testing.T, img v1.Image) (map[string]*tar.Header, []byte) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]*tar.Header{}
	var certs []byte
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h
		if !h.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s has time %v, want the epoch", h.Name, h.ModTime)
		}
		if h.Name == "etc/ssl/certs/ca-certificates.crt" {
			if certs, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	return files, certs
}

// checkConfig checks the manifest's media type and the config: entrypoint, command, user,
// platform and the fixed creation time.
func checkConfig(t *testing.T, img v1.Image) {
	t.Helper()
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type = %s, want OCI", mt)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Config
	if !slices.Equal(c.Entrypoint, []string{"/joiner"}) || !slices.Equal(c.Cmd, []string{"controller"}) || c.User != "65532:65532" {
		t.Errorf("config entrypoint %v cmd %v user %q, want [/joiner] [controller] 65532:65532", c.Entrypoint, c.Cmd, c.User)
	}
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH || !cfg.Created.Equal(time.Unix(0, 0)) {
		t.Errorf("config os %s arch %s created %v", cfg.OS, cfg.Architecture, cfg.Created)
	}

}
