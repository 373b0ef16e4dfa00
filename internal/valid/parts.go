package valid

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/configurator/catalogue/internal/apperr"
)

// Bounds of a multipart body's framing, checked on the bytes as they
// stream in, before Go's mime/multipart reads a part's headers (it would
// hold up to 10 MiB of them a part, and 1,000 parts' worth in a form):
// a form part names its field, file and type in a few hundred bytes.
const (
	// MaxPartHeaderBytes bounds one part's headers (and the rest of the
	// boundary line before them).
	MaxPartHeaderBytes = 8 << 10
	// MaxPartHeadersTotal bounds the headers of all parts together.
	MaxPartHeadersTotal = 256 << 10
	// MaxParts bounds a form's parts, as Go's ReadForm does.
	MaxParts = 1000
)

// Parts watches a multipart body for parts over the bounds above: the
// read that crosses one fails, so the parser stops there, and Err names
// the part. The transports install it after the body's size limit and
// ask Err first when their parser fails.
type Parts struct {
	io.ReadCloser
	delim         []byte // "\n--" + boundary
	matched       int    // bytes of delim matched so far, in the body state
	state         partState
	lineStart     bool // in headers: nothing but a CR since the last LF
	part          int  // parts begun
	header, total int  // header bytes of this part, of all parts
	err           *apperr.Error
}

type partState uint8

const (
	inBody     partState = iota // a part's body, or the preamble
	afterDelim                  // just after "\n--boundary": padding, CRLF or "--"
	afterDash                   // one '-' after the delimiter
	inHeaders
)

// BoundParts installs Parts over r.Body when r is a multipart body with
// a usable boundary (Content-Type is already bounded by MediaHeaders),
// and returns it; nil otherwise (Go's parser refuses a missing or empty
// boundary itself). A nil Parts' Err is nil.
func BoundParts(r *http.Request) *Parts {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	b := params["boundary"]
	if err != nil || !strings.HasPrefix(mt, "multipart/") || b == "" || strings.ContainsAny(b, "\r\n") {
		return nil
	}
	// The body starts as if after a line feed: its first line may be the
	// first delimiter.
	p := &Parts{ReadCloser: r.Body, delim: []byte("\n--" + b), matched: 1}
	r.Body = p
	return p
}

// Err is the bound the body crossed, as a client error naming the part:
// 400 for one part's headers, 413 for the form's parts or their headers
// together; nil when the body kept within them.
func (p *Parts) Err() error {
	if p == nil || p.err == nil {
		return nil
	}
	return p.err
}

// Read passes the body through, watching its framing.
func (p *Parts) Read(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.ReadCloser.Read(b)
	if p.scan(b[:n]) {
		return 0, p.err
	}
	return n, err
}

// scan runs the framing over b and reports whether a bound was crossed.
func (p *Parts) scan(b []byte) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch p.state {
		case inBody:
			if p.matched == 0 {
				// Skip to the next line feed: only it can begin a delimiter.
				j := bytes.IndexByte(b[i:], '\n')
				if j < 0 {
					return false
				}
				i += j
				c = '\n'
			}
			p.match(c)
		case afterDelim:
			p.afterDelimiter(c)
		case afterDash:
			// "--boundary--" is the final delimiter only where Go's
			// reader takes it as one: not in the preamble when more than
			// blanks follow it, not after a lone LF when the form's lines
			// end in CRLF. Rather than follow that, the watch goes on
			// looking for delimiters: an epilogue the parser never reads
			// costs nothing, and a "final" delimiter the parser reads past
			// cannot hide the parts after it.
			p.bodyAgain(c)
		case inHeaders:
			if p.headerByte(c) {
				return true
			}
		}
	}
	return false
}

// match takes c in a part's body, moving along the delimiter.
func (p *Parts) match(c byte) {
	switch {
	case c == p.delim[p.matched]:
		p.matched++
		if p.matched == len(p.delim) {
			p.state, p.matched = afterDelim, 0
		}
	case c == '\n':
		// Only the delimiter's first byte is a line feed (a boundary
		// holds none), so a mismatch restarts there or at nothing.
		p.matched = 1
	default:
		p.matched = 0
	}
}

// afterDelimiter takes the byte after "\n--boundary": "--" ends the form,
// padding or a line end begins a part's headers, anything else was data
// (as Go's reader decides).
func (p *Parts) afterDelimiter(c byte) {
	switch c {
	case '-':
		p.state = afterDash
	case ' ', '\t', '\r', '\n':
		p.part++
		p.header, p.lineStart = 0, false
		p.state = inHeaders
		if p.part > MaxParts {
			p.err = apperr.E(apperr.TooLarge, "the multipart body has more than %d parts", MaxParts)
		}
		if c == '\n' {
			p.lineStart = true
		}
		p.header++
		p.total++
	default:
		p.bodyAgain(c)
	}
}

// bodyAgain goes back to a part's body with c, after something that
// looked like a delimiter and was data.
func (p *Parts) bodyAgain(c byte) {
	p.state, p.matched = inBody, 0
	p.match(c)
}

// headerByte counts c among the part's headers and reports whether a
// bound was crossed; an empty line ends them.
func (p *Parts) headerByte(c byte) bool {
	if p.err != nil {
		return true
	}
	p.header++
	p.total++
	switch {
	case p.header > MaxPartHeaderBytes:
		p.err = apperr.E(apperr.Invalid, "the headers of multipart part %d are longer than %d bytes", p.part, MaxPartHeaderBytes)
		return true
	case p.total > MaxPartHeadersTotal:
		p.err = apperr.E(apperr.TooLarge, "the headers of the multipart body's parts are longer than %d bytes together", MaxPartHeadersTotal)
		return true
	case c == '\n' && p.lineStart:
		p.state, p.matched = inBody, 1
	case c == '\n':
		p.lineStart = true
	case c == '\r' && p.lineStart:
	default:
		p.lineStart = false
	}
	return false
}
