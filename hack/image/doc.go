// Command image builds Joiner's container image without a container daemon: one layer with the
// static joiner binary, the CA certificates of golang.org/x/crypto/x509roots/fallback (Mozilla's
// roots as the Go project publishes them, pinned in this module's go.mod, so every machine
// writes the same bytes), /etc/passwd and /etc/group naming the non-root user 65532, and its
// home and /tmp; no shell and nothing else. Entrypoint /joiner, user 65532:65532.
//
// Every timestamp is the fixed SOURCE_DATE_EPOCH (0 by default) and every entry is written in a
// fixed order with fixed owners, so the same binary gives the same image digest.
//
// It writes an OCI image (OCI media types) as an OCI image layout in a tar file, which `podman
// load`, `skopeo copy oci-archive:...`, `docker load` (25 and later) and go-containerregistry read.
package main
