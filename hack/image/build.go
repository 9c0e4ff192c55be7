package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The image's fixed facts.
const (
	// BinaryPath is where the joiner binary lives, and the entrypoint.
	BinaryPath = "/joiner"
	// CABundlePath is the CA certificates file, where Go's crypto/x509 looks first on Linux.
	CABundlePath = "/etc/ssl/certs/ca-certificates.crt"
	// User is the image's user and group: "nonroot", as distroless images number it.
	User    = "65532:65532"
	userID  = 65532
	homeDir = "/home/nonroot"
)

// Options say what to build.
type Options struct {
	// Binary is the joiner binary: a static Linux ELF executable of Arch.
	Binary string
	// Arch is the GOARCH of the binary and the image platform.
	Arch string
	// Created is every timestamp of the image (SOURCE_DATE_EPOCH).
	Created time.Time
	// Version is the image's org.opencontainers.image.version label.
	Version string
}

// Build returns the image of o.
func Build(o Options) (v1.Image, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("reading the binary, %w", err)
	}
	if err := checkStatic(bin, o.Arch); err != nil {
		return nil, fmt.Errorf("binary %s: %w", o.Binary, err)
	}
	layerTar, err := rootfs(bin, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("building the layer, %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: o.Created}, CreatedBy: "hack/image: joiner, CA certificates, passwd", Comment: "daemonless build",
	}})
	if err != nil {
		return nil, fmt.Errorf("adding the layer, %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS, cfg.Created = o.Arch, "linux", v1.Time{Time: o.Created}
	cfg.Config = v1.Config{
		Entrypoint: []string{BinaryPath},
		Cmd:        []string{"controller"},
		User:       User,
		WorkingDir: homeDir,
		Env:        []string{"SSL_CERT_FILE=" + CABundlePath, "HOME=" + homeDir},
		Labels: map[string]string{
			"org.opencontainers.image.source":  "https://github.com/joinerhq/joiner",
			"org.opencontainers.image.title":   "joiner",
			"org.opencontainers.image.version": o.Version,
		},
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the config, %w", err)
	}
	return img, nil
}

// checkStatic refuses what would not run in an image without a libc: a file that is not an
// executable ELF of arch, or one that names a dynamic loader or shared libraries.
func checkStatic(bin []byte, arch string) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("not an ELF executable (build it with GOOS=linux), %w", err)
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if want == 0 || f.Machine != want {
		return fmt.Errorf("built for %s, want GOARCH=%s", f.Machine, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("dynamically linked (it names a program interpreter): build it with CGO_ENABLED=0")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return fmt.Errorf("needs shared libraries %v: build it with CGO_ENABLED=0", libs)
	}
	return nil
}

// caBundle is the PEM of the fallback bundle's roots. Roots that carry a constraint (distrust
// after a date) are left out: a PEM file cannot say it, and trusting them unconstrained would
// be wider than Mozilla's decision.
func caBundle() []byte {
	var out bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
	}
	return out.Bytes()
}

// rootfs is the layer's tar: directories first, then files, in this fixed order, every entry
// with the same timestamp and numeric owners.
func rootfs(bin []byte, created time.Time) ([]byte, error) {
	type entry struct {
		name string
		mode int64
		uid  int
		data []byte // nil for a directory
	}
	entries := []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700, uid: userID},
		{name: "tmp/", mode: 0o1777},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: caBundle()},
		{name: "joiner", mode: 0o755, data: bin},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: created, Format: tar.FormatPAX}
		if e.data == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("writing %s, %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("writing %s, %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing the layer, %w", err)
	}
	return buf.Bytes(), nil
}
