package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt maps the file into memory and follows the page numbers it finds
// there. A page number past the end of a damaged (truncated) file is not
// a panic that can be recovered but a fault that ends the process, so the
// layout facts bbolt trusts blindly are read from the file and checked
// before bbolt opens it. The offsets are bbolt's on-disk format, version 2.
const (
	boltPageHeaderBytes = 16 // id uint64, flags uint16, count uint16, overflow uint32
	boltMetaBytes       = 64 // the meta struct that follows a meta page's header
	boltMetaSumBytes    = 56 // the meta bytes its checksum covers
	boltMagic           = 0xED0CDAED
	boltVersion         = 2
	boltFreelistFlag    = 0x10
	boltNoFreelist      = ^uint64(0)
	boltDefaultPage     = 4096
	boltMaxPageBytes    = 1 << 16 // the largest page size a healthy file can have
)

// boltMeta is the part of a bbolt meta page the layout check reads.
type boltMeta struct {
	pageBytes     uint64
	rootPage      uint64
	freelistPage  uint64
	highWaterMark uint64 // pages [0, highWaterMark) are in use
	txid          uint64
}

// checkLayout refuses, before bbolt maps it, a file whose pages bbolt
// would look for past its end: a file cut short (a full disk, a partial
// copy) or with a freelist page that does not hold what it says. A file
// without a valid meta page is left to bbolt, which refuses it cleanly.
func checkLayout(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return err
	}
	meta, ok := newestMeta(f)
	if !ok {
		return nil
	}
	return meta.checkAgainst(f, uint64(fi.Size()))
}

// newestMeta is the valid meta page with the larger transaction id, the
// one bbolt uses; ok is false when neither is valid.
func newestMeta(f io.ReaderAt) (boltMeta, bool) {
	first, ok0 := readMeta(f, 0)
	secondAt := uint64(boltDefaultPage)
	if ok0 {
		secondAt = first.pageBytes
	}
	second, ok1 := readMeta(f, secondAt)
	switch {
	case ok0 && ok1 && second.txid > first.txid:
		return second, true
	case ok0:
		return first, true
	default:
		return second, ok1
	}
}

// readMeta parses the meta page at byte offset at; ok is false unless its
// magic, version and checksum are bbolt's.
func readMeta(f io.ReaderAt, at uint64) (boltMeta, bool) {
	buf := make([]byte, boltPageHeaderBytes+boltMetaBytes)
	if _, err := f.ReadAt(buf, int64(at)); err != nil {
		return boltMeta{}, false
	}
	m := buf[boltPageHeaderBytes:]
	le := binary.NativeEndian
	sum := fnv.New64a()
	sum.Write(m[:boltMetaSumBytes])
	if le.Uint32(m[0:]) != boltMagic || le.Uint32(m[4:]) != boltVersion || le.Uint64(m[56:]) != sum.Sum64() {
		return boltMeta{}, false
	}
	meta := boltMeta{
		pageBytes:     uint64(le.Uint32(m[8:])),
		rootPage:      le.Uint64(m[16:]),
		freelistPage:  le.Uint64(m[32:]),
		highWaterMark: le.Uint64(m[40:]),
		txid:          le.Uint64(m[48:]),
	}
	if meta.pageBytes < 512 || meta.pageBytes > boltMaxPageBytes {
		return boltMeta{}, false
	}
	return meta, true
}

// checkAgainst says what is wrong when the file of fileBytes cannot hold
// the pages meta names.
func (m boltMeta) checkAgainst(f io.ReaderAt, fileBytes uint64) error {
	if m.highWaterMark > fileBytes/m.pageBytes {
		return fmt.Errorf("the file is cut short: it has %d bytes, its pages need %d", fileBytes, m.highWaterMark*m.pageBytes)
	}
	if m.rootPage >= m.highWaterMark {
		return fmt.Errorf("its root page %d is past its last page %d", m.rootPage, m.highWaterMark-1)
	}
	if m.freelistPage == boltNoFreelist {
		return nil
	}
	if m.freelistPage < 2 || m.freelistPage >= m.highWaterMark {
		return fmt.Errorf("its freelist page %d is outside pages 2 to %d", m.freelistPage, m.highWaterMark-1)
	}
	return m.checkFreelist(f)
}

// checkFreelist checks that the freelist page is one and that the ids it
// lists fit in the pages it spans.
func (m boltMeta) checkFreelist(f io.ReaderAt) error {
	head := make([]byte, boltPageHeaderBytes+8)
	if _, err := f.ReadAt(head, int64(m.freelistPage*m.pageBytes)); err != nil {
		return fmt.Errorf("its freelist page %d cannot be read: %w", m.freelistPage, err)
	}
	le := binary.NativeEndian
	flags, count, overflow := le.Uint16(head[8:]), uint64(le.Uint16(head[10:])), uint64(le.Uint32(head[12:]))
	if flags&boltFreelistFlag == 0 {
		return fmt.Errorf("page %d, named as its freelist, is not one", m.freelistPage)
	}
	if m.freelistPage+overflow >= m.highWaterMark {
		return fmt.Errorf("its freelist runs past its last page %d", m.highWaterMark-1)
	}
	slots := count
	if count == 0xFFFF { // the count does not fit the header: it is the first id slot
		slots = le.Uint64(head[boltPageHeaderBytes:]) + 1
	}
	if (count == 0xFFFF && slots == 0) || slots > ((overflow+1)*m.pageBytes-boltPageHeaderBytes)/8 {
		return fmt.Errorf("its freelist lists more pages than it holds")
	}
	return nil
}
