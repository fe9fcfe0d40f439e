package nats

import (
	"strings"
)

// The first line of a header block, and the headers nats.go files a
// status line under.
const (
	headerVersion     = "NATS/1.0"
	statusHeader      = "Status"
	descriptionHeader = "Description"
	statusCodeLen     = 3
)

// DecodeHeadersMsg parses a header block as the NATS protocol carries it
// ("NATS/1.0[ status[ description]]\r\n", "Name: value\r\n" lines, a blank
// line), as nats.go parses it: names keep their case, values lose their
// leading blanks, a name-less line is skipped, and an inline status is
// filed under "Status" (its 3 digits) and "Description" (the rest).
// ErrBadHeaderMsg when the block is malformed or unterminated.
func DecodeHeadersMsg(data []byte) (Header, error) {
	block := string(data)
	first, rest, ok := cutHeaderLine(block)
	if !ok || !strings.HasPrefix(first, headerVersion) {
		return nil, ErrBadHeaderMsg
	}
	h := Header{}
	for {
		var line string
		if line, rest, ok = cutHeaderLine(rest); !ok {
			return nil, ErrBadHeaderMsg // no blank line ends the block
		}
		if line == "" {
			break
		}
		name, value, found := strings.Cut(line, ":")
		if !found {
			return nil, ErrBadHeaderMsg
		}
		if name != "" {
			h[name] = append(h[name], strings.TrimLeft(value, " \t"))
		}
	}
	if status := strings.TrimSpace(first[len(headerVersion):]); status != "" {
		if len(status) < statusCodeLen {
			return nil, ErrBadHeaderMsg
		}
		h.Add(statusHeader, status[:statusCodeLen])
		if description := strings.TrimSpace(status[statusCodeLen:]); description != "" {
			h.Add(descriptionHeader, description)
		}
	}
	return h, nil
}

// cutHeaderLine splits off s's first line (its "\r\n" or "\n" dropped);
// false when s has no line end.
func cutHeaderLine(s string) (line, rest string, ok bool) {
	line, rest, ok = strings.Cut(s, "\n")
	return strings.TrimSuffix(line, "\r"), rest, ok
}
