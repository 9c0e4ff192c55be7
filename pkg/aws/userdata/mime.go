package userdata

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"slices"
	"strings"
)

// Content types of the MIME parts Joiner reads and writes.
const (
	contentTypeShell       = `text/x-shellscript; charset="us-ascii"`
	contentTypeCloudConfig = `text/cloud-config; charset="us-ascii"`
	contentTypeNodeConfig  = "application/node.eks.aws"
)

// part is one part of a MIME multi-part userData: its headers as written and its body.
type part struct {
	header textproto.MIMEHeader
	body   string
}

// mediaType is the part's media type, lower-case, without parameters.
func (p part) mediaType() string {
	mt, _, err := mime.ParseMediaType(p.header.Get("Content-Type"))
	if err != nil {
		return strings.ToLower(strings.TrimSpace(p.header.Get("Content-Type")))
	}
	return mt
}

func newPart(contentType, body string) part {
	return part{header: textproto.MIMEHeader{"Content-Type": {contentType}}, body: body}
}

// isMIME reports whether userData is a MIME document rather than a bare script or config: its
// first line is a MIME-Version or Content-Type header.
func isMIME(userData string) bool {
	first, _, _ := strings.Cut(strings.TrimLeft(userData, "\r\n"), "\n")
	first = strings.ToLower(first)
	return strings.HasPrefix(first, "mime-version:") || strings.HasPrefix(first, "content-type:")
}

// parseMIME reads a MIME document into its parts. A single-part document is one part.
func parseMIME(userData string) ([]part, error) {
	reader := textproto.NewReader(bufio.NewReader(strings.NewReader(strings.TrimLeft(userData, "\r\n"))))
	header, err := reader.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading MIME headers of userData, %w", err)
	}
	body, err := io.ReadAll(reader.R)
	if err != nil {
		return nil, err
	}
	mediaType, params, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("userData has MIME headers but its Content-Type %q does not parse, %w", header.Get("Content-Type"), err)
	}
	if !strings.HasPrefix(mediaType, "multipart/") {
		single := textproto.MIMEHeader{}
		for k, v := range header {
			if k != "Mime-Version" {
				single[k] = v
			}
		}
		return []part{{header: single, body: string(body)}}, nil
	}
	if params["boundary"] == "" {
		return nil, errors.New("userData is multipart but its Content-Type names no boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var parts []part
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			return parts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading MIME part %d of userData, %w", len(parts)+1, err)
		}
		content, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("reading MIME part %d of userData, %w", len(parts)+1, err)
		}
		parts = append(parts, part{header: p.Header, body: string(content)})
	}
}

// writeMIME writes parts as one multipart/mixed document with LF line ends, headers in a stable
// order (Content-Type first), and a boundary that occurs in no part.
func writeMIME(parts []part) string {
	boundary := "//"
	for i := 0; slices.ContainsFunc(parts, func(p part) bool { return strings.Contains(p.body, "--"+boundary) }); i++ {
		boundary = fmt.Sprintf("//joiner-%d", i)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=%q\n\n", boundary)
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\n", boundary)
		keys := make([]string, 0, len(p.header))
		for k := range p.header {
			if k != "Content-Type" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		if _, ok := p.header["Content-Type"]; ok {
			keys = append([]string{"Content-Type"}, keys...)
		}
		for _, k := range keys {
			for _, v := range p.header[k] {
				fmt.Fprintf(&b, "%s: %s\n", k, v)
			}
		}
		b.WriteString("\n")
		// The line end before a boundary belongs to the boundary: write one more, so that the
		// body reads back exactly as it is.
		b.WriteString(p.body)
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "--%s--\n", boundary)
	return b.String()
}
