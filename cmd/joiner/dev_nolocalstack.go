//go:build nolocalstack

package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newDevCommand of a build without the local stack (the image's) says where dev is.
func newDevCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "dev",
		Short: "Run the local stack (not in this build: build joiner without -tags nolocalstack)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("this joiner was built with -tags nolocalstack, as the controller image is, and has no local stack: run `make build` and bin/joiner dev, or `go run ./cmd/joiner dev`")
		},
		DisableFlagParsing: true,
	}
}
