package legacyboot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
)

// part is one piece of userData with its content type.
type part struct {
	contentType string
	body        string
}

// parts splits MIME multipart userData into its parts; anything else is one part of type
// text/x-shellscript, as cloud-init treats a plain script.
func parts(userData []byte) ([]part, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(userData), []byte("MIME-Version")) && !bytes.HasPrefix(bytes.TrimSpace(userData), []byte("Content-Type")) {
		return []part{{contentType: "text/x-shellscript", body: string(userData)}}, nil
	}
	msg, err := mail.ReadMessage(bytes.NewReader(userData))
	if err != nil {
		return nil, fmt.Errorf("reading MIME userData, %w", err)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("reading the MIME content type, %w", err)
	}
	if !strings.HasPrefix(mediaType, "multipart/") {
		body, err := io.ReadAll(msg.Body)
		if err != nil {
			return nil, fmt.Errorf("reading the MIME body, %w", err)
		}
		return []part{{contentType: mediaType, body: string(body)}}, nil
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	var out []part
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading a MIME part, %w", err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("reading a MIME part, %w", err)
		}
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		out = append(out, part{contentType: ct, body: string(body)})
	}
}
