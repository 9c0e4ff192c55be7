package boot

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
)

// part is one piece of userData with its MIME content type.
type part struct {
	contentType string
	body        string
}

// splitMIME returns the parts of a MIME multi-part userData, or ok false when userData is not
// MIME multi-part (cloud-init then treats it as a single document).
func splitMIME(userData []byte) (parts []part, ok bool, err error) {
	if !bytes.HasPrefix(bytes.TrimLeft(userData, "\r\n\t "), []byte("MIME-Version:")) &&
		!bytes.HasPrefix(bytes.TrimLeft(userData, "\r\n\t "), []byte("Content-Type:")) {
		return nil, false, nil
	}
	r := textproto.NewReader(bufio.NewReader(bytes.NewReader(bytes.TrimLeft(userData, "\r\n\t "))))
	header, err := r.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, true, fmt.Errorf("reading MIME header, %w", err)
	}
	mediaType, params, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil {
		return nil, true, fmt.Errorf("parsing Content-Type %q, %w", header.Get("Content-Type"), err)
	}
	if !strings.HasPrefix(mediaType, "multipart/") {
		body, err := io.ReadAll(r.R)
		if err != nil {
			return nil, true, fmt.Errorf("reading MIME body, %w", err)
		}
		return []part{{contentType: mediaType, body: string(body)}}, true, nil
	}
	mr := multipart.NewReader(r.R, params["boundary"])
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return parts, true, nil
		}
		if err != nil {
			return nil, true, fmt.Errorf("reading MIME part %d, %w", len(parts)+1, err)
		}
		var r io.Reader = p
		if strings.EqualFold(strings.TrimSpace(p.Header.Get("Content-Transfer-Encoding")), "base64") {
			r = base64.NewDecoder(base64.StdEncoding, newlineStripper{p})
		}
		body, err := io.ReadAll(r)
		if err != nil {
			return nil, true, fmt.Errorf("reading MIME part %d, %w", len(parts)+1, err)
		}
		ct, _, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if err != nil {
			ct = "text/plain"
		}
		parts = append(parts, part{contentType: ct, body: string(body)})
	}
}

// newlineStripper drops CR and LF so that wrapped base64 decodes.
type newlineStripper struct{ r io.Reader }

func (n newlineStripper) Read(p []byte) (int, error) {
	for {
		c, err := n.r.Read(p)
		kept := 0
		for _, b := range p[:c] {
			if b != '\r' && b != '\n' {
				p[kept] = b
				kept++
			}
		}
		if kept > 0 || err != nil {
			return kept, err
		}
	}
}
