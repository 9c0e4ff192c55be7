package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		o    Options
		out  string
		repo string
	)
	flag.StringVar(&o.Binary, "binary", "", "The static joiner binary (CGO_ENABLED=0 GOOS=linux)")
	flag.StringVar(&o.Arch, "arch", runtime.GOARCH, "GOARCH of the binary and the image")
	flag.StringVar(&o.Version, "version", "dev", "Image version: the tag and the org.opencontainers.image.version label")
	flag.StringVar(&repo, "repository", "ghcr.io/joinerhq/joiner", "Repository the archive names the image by (with -version)")
	flag.StringVar(&out, "out", "", "The OCI image archive (an OCI image layout in a tar file) to write")
	flag.Parse()
	if o.Binary == "" || out == "" {
		return fmt.Errorf("-binary and -out are required")
	}
	epoch := int64(0)
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH %q is not seconds since 1970, %w", s, err)
		}
		epoch = v
	}
	o.Created = time.Unix(epoch, 0).UTC()
	img, err := Build(o)
	if err != nil {
		return err
	}
	tag, err := name.NewTag(repo + ":" + o.Version)
	if err != nil {
		return fmt.Errorf("-repository and -version make no tag, %w", err)
	}
	if err := WriteArchive(out, img, tag.String(), o.Created); err != nil {
		return fmt.Errorf("writing %s, %w", out, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s@%s\n", out, tag, digest)
	return nil
}
