package datasets

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// sniffBytes is how much of a file is looked at to tell what it is.
const sniffBytes = 4096

// utf8BOM is the byte-order mark some tools (Excel's "CSV UTF-8") write
// first; it is skipped.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// sniff looks at the start of a file before it is read as CSV and returns
// a reader positioned after a UTF-8 byte-order mark, or an error saying
// what the file looks like instead of comma-separated UTF-8 text and what
// to do: UTF-16 (with or without a byte-order mark), a gzip or ZIP file
// (an .xlsx workbook), other binary data, another 8-bit encoding, or a
// header separated by semicolons, tabs or '|'. The errors never quote
// the file's bytes raw.
func sniff(r io.Reader, name string) (io.Reader, error) {
	br := bufio.NewReaderSize(r, sniffBytes)
	head, _ := br.Peek(sniffBytes) // a short file gives what it has
	if bytes.HasPrefix(head, utf8BOM) {
		br.Discard(len(utf8BOM))
		head = head[len(utf8BOM):]
	}
	if err := encodingProblem(head); err != "" {
		return nil, fmt.Errorf("%s: %s", name, err)
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if sep := separator(line); sep != "" {
		return nil, fmt.Errorf("%s:1: the header %s is %s-separated; prewarm reads comma-separated CSV: "+
			"convert the file (e.g. a spreadsheet's \"CSV UTF-8 (comma delimited)\", or replace each %s by a comma; "+
			"values written with a decimal comma, 1,5, need a decimal point first)", name, quoteLine(line), sep, sepName[sep])
	}
	return br, nil
}

// encodingProblem says why head is not UTF-8 text, or "".
func encodingProblem(head []byte) string {
	const save = "save it as UTF-8 CSV (a spreadsheet's \"CSV UTF-8\", or iconv -f %s -t UTF-8 FILE > FILE.csv)"
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		return "the file is UTF-16 (little-endian, with a byte-order mark), not UTF-8: " + fmt.Sprintf(save, "UTF-16")
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return "the file is UTF-16 (big-endian, with a byte-order mark), not UTF-8: " + fmt.Sprintf(save, "UTF-16")
	case bytes.HasPrefix(head, []byte{0x1F, 0x8B}):
		return "the file is gzip-compressed: decompress it first (gunzip -k FILE)"
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return "the file is a ZIP archive (an .xlsx workbook?), not CSV: export the sheet as \"CSV UTF-8 (comma delimited)\""
	}
	if zeros := bytes.Count(head, []byte{0}); zeros > 0 {
		even, odd := 0, 0
		for i, b := range head {
			if b == 0 {
				if i%2 == 0 {
					even++
				} else {
					odd++
				}
			}
		}
		switch {
		case 4*odd >= len(head) && even == 0:
			return "the file looks like UTF-16 little-endian without a byte-order mark (every other byte is zero), not UTF-8: " + fmt.Sprintf(save, "UTF-16LE")
		case 4*even >= len(head) && odd == 0:
			return "the file looks like UTF-16 big-endian without a byte-order mark (every other byte is zero), not UTF-8: " + fmt.Sprintf(save, "UTF-16BE")
		}
		return fmt.Sprintf("the file holds binary data (%d zero bytes in its first %d), not CSV text", zeros, len(head))
	}
	// The peek may end inside a character: only complete ones count.
	valid := head
	if len(head) == sniffBytes {
		for i := 0; i < utf8.UTFMax && len(valid) > 0 && !utf8.Valid(valid); i++ {
			valid = valid[:len(valid)-1]
		}
	}
	if !utf8.Valid(valid) {
		line, col := position(head)
		return fmt.Sprintf("the file is not UTF-8 (line %d, byte %d is not a UTF-8 character; Latin-1 or Windows-1252?): "+save, line, col, "WINDOWS-1252")
	}
	return ""
}

// position is the line and byte column of head's first invalid UTF-8 byte.
func position(head []byte) (line, col int) {
	line, col = 1, 1
	for len(head) > 0 {
		r, size := utf8.DecodeRune(head)
		if r == utf8.RuneError && size <= 1 {
			return line, col
		}
		if r == '\n' {
			line, col = line+1, 0
		}
		col += size
		head = head[size:]
	}
	return line, col
}

// sepName names a separator for people.
var sepName = map[string]string{"semicolon": "';'", "tab": "tab", "pipe": "'|'"}

// separator names the separator of a header line without a comma that
// splits it with ';', a tab or '|' ("" when there is a comma or none of
// them).
func separator(line []byte) string {
	if bytes.ContainsRune(line, ',') {
		return ""
	}
	switch {
	case bytes.ContainsRune(line, ';'):
		return "semicolon"
	case bytes.ContainsRune(line, '\t'):
		return "tab"
	case bytes.ContainsRune(line, '|'):
		return "pipe"
	}
	return ""
}

// quoteLine quotes a line for a message, escaped and at most 80 bytes.
func quoteLine(line []byte) string {
	if len(line) > 80 {
		cut := 80
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		return strconv.Quote(string(line[:cut])) + "..."
	}
	return strconv.Quote(string(line))
}
