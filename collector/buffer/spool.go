package buffer

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prewarm/prewarm/store"
)

const (
	headerBytes  = 12 // length, CRC-32C, point count
	segmentExt   = ".seg"
	cursorFile   = "cursor"
	firstSegment = uint64(1) << 40 // older versions prepended segments below it
	// minPointBytes is the fewest payload bytes one spooled point takes
	// ({"m":"x","v":0,"n":0}); it bounds the point count a damaged header
	// can claim.
	minPointBytes = 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// record locates one spooled batch.
type record struct {
	segment uint64
	offset  int64
	size    int64 // payload bytes
	points  int
	// cached is the batch itself while it fits in the memory bound, so the
	// writer need not read it back; nil once evicted or after a restart.
	cached []store.Point
}

// spool is the on-disk part of a Buffer; its methods are called with the
// Buffer's lock held.
type spool struct {
	dir          string
	segmentBytes int64
	cacheLimit   int // points of cached batches at most
	cached       int
	segments     []uint64 // ascending
	index        []record // unacked records, oldest first
	points       int
	bytes        int64
	corrupt      int64 // points lost to damaged records
	syncs        int64 // segment fsyncs
	tail         segmentFile
	tailID       uint64
	tailSize     int64
	lock         *os.File // held while open; nil where locking is missing
	cursor       []byte   // the cursor file's content as last saved
	// create makes a new segment file; tests replace it to inject faults.
	create func(path string) (segmentFile, error)
}

// segmentFile is what the spool needs of the tail segment (an *os.File).
type segmentFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

func createSegment(path string) (segmentFile, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
}

// wirePoint is a Point as spooled: short keys, time in Unix nanoseconds.
type wirePoint struct {
	M string            `json:"m"`
	T map[string]string `json:"t,omitempty"`
	V float64           `json:"v"`
	N int64             `json:"n"`
}

func segmentPath(dir string, id uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", id, segmentExt))
}

func openSpool(dir string, segmentBytes int64, cacheLimit int) (*spool, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	s, err := loadSpool(dir, segmentBytes)
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		return nil, err
	}
	s.cacheLimit = cacheLimit
	s.lock = lock
	return s, nil
}

// loadSpool indexes the segments a previous run left in dir.
func loadSpool(dir string, segmentBytes int64) (*spool, error) {
	s := &spool{dir: dir, segmentBytes: segmentBytes, create: createSegment}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var ids []uint64
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, segmentExt) {
			continue
		}
		id, err := strconv.ParseUint(strings.TrimSuffix(name, segmentExt), 10, 64)
		if err != nil {
			continue
		}
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	raw, err := os.ReadFile(filepath.Join(dir, cursorFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("spool: %w", err)
	}
	s.cursor = raw
	starts := parseCursor(raw)
	removed := false
	for i, id := range ids {
		size, err := s.scan(id, starts[id], i == len(ids)-1)
		if err != nil {
			return nil, err
		}
		if size == 0 {
			// An empty segment (a crash between creating it and writing
			// to it) holds nothing: remove it rather than carry it.
			if err := os.Remove(segmentPath(dir, id)); err != nil {
				return nil, fmt.Errorf("spool: %w", err)
			}
			removed = true
			continue
		}
		s.segments = append(s.segments, id)
	}
	if removed {
		if err := syncDir(dir); err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
	}
	// Rewrite the cursor from what is left: an entry for a segment that no
	// longer exists (a crash between deleting it and saving the cursor)
	// must not apply to a new segment that reuses its number.
	if err := s.writeCursor(); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	return s, nil
}

// parseCursor reads the saved read positions: for each segment whose first
// records were acked, the offset of its first unacked record, one
// "segment offset" pair a line. Lines that do not parse are ignored: a
// segment without an entry is read from its start, so a damaged cursor
// makes records be written twice, never lost.
func parseCursor(raw []byte) map[uint64]int64 {
	starts := map[uint64]int64{}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		seg, err1 := strconv.ParseUint(f[0], 10, 64)
		off, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || off < 0 {
			continue
		}
		starts[seg] = off
	}
	return starts
}

// writeCursor saves, for each segment whose first record in the index is not
// at offset 0, where reading resumes. It writes a temporary file, fsyncs
// it, renames it over the cursor and fsyncs the directory, so a crash or a
// power cut leaves the old cursor or the new one, never a torn one whose
// shortened offset would point inside a record. It does nothing when the
// content is unchanged.
func (s *spool) writeCursor() error {
	path := filepath.Join(s.dir, cursorFile)
	var buf []byte
	var last uint64
	for i, rec := range s.index {
		if i > 0 && rec.segment == last {
			continue
		}
		last = rec.segment
		if rec.offset > 0 {
			buf = fmt.Appendf(buf, "%d %d\n", rec.segment, rec.offset)
		}
	}
	if bytes.Equal(buf, s.cursor) {
		return nil
	}
	if len(buf) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	} else {
		tmp := path + ".tmp"
		if err := writeSynced(tmp, buf); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	s.cursor = buf
	return nil
}

// writeSynced writes data to a new file at path and fsyncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// syncDir fsyncs a directory, making the creation, renaming and removal of
// its entries durable. File systems that cannot sync a directory (EINVAL)
// give no such promise, and are not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) {
		err = nil
	}
	return errors.Join(err, d.Close())
}

// scan indexes the records of one segment from offset start and returns
// the segment's size once repaired. Each record's length and CRC are
// checked. In the last segment (last) the first bad record and all after
// it are a torn tail, left by a crash mid-append, and are cut off. In an
// older segment, which was fsynced whole, a bad CRC is damage: the record
// is dropped and its points counted in corrupt. A start that is not the
// offset of a record (a damaged cursor) is ignored: the segment is read
// from its start.
func (s *spool) scan(id uint64, start int64, last bool) (int64, error) {
	path := segmentPath(s.dir, id)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	size := info.Size()
	off := int64(0)
	r := bufio.NewReaderSize(f, 64<<10)
	var hdr [headerBytes]byte
	var payload []byte
	var recs, damaged []record
	boundary := start == 0
	for off+headerBytes <= size {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			break
		}
		n := int64(binary.BigEndian.Uint32(hdr[0:4]))
		pts := int(binary.BigEndian.Uint32(hdr[8:12]))
		if n == 0 || off+headerBytes+n > size {
			break // a length no append writes, or past the end: torn
		}
		if int64(cap(payload)) < n {
			payload = make([]byte, n)
		}
		if _, err := io.ReadFull(r, payload[:n]); err != nil {
			break
		}
		good := crc32.Checksum(payload[:n], crcTable) == binary.BigEndian.Uint32(hdr[4:8])
		if !good && last {
			break
		}
		if off == start {
			boundary = true
		}
		rec := record{segment: id, offset: off, size: n, points: pts}
		if good {
			recs = append(recs, rec)
		} else {
			rec.points = min(pts, int(n/minPointBytes)) // the header may be damaged too
			damaged = append(damaged, rec)
		}
		off += headerBytes + n
	}
	if off == start {
		boundary = true
	}
	if !boundary {
		start = 0
	}
	for _, rec := range recs {
		if rec.offset >= start {
			s.index = append(s.index, rec)
			s.points += rec.points
		}
	}
	for _, rec := range damaged {
		if rec.offset >= start {
			s.corrupt += int64(rec.points)
		}
	}
	if off < size {
		if !last {
			// Unreadable from here on in a synced segment: keep the bytes
			// (the segment is deleted once its records are acked).
			s.bytes += size
			return size, nil
		}
		if err := f.Truncate(off); err != nil {
			return 0, fmt.Errorf("spool: cutting the torn end of %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("spool: %w", err)
		}
	}
	s.bytes += off
	return off, nil
}

func encodeRecord(points []store.Point) ([]byte, error) {
	wire := make([]wirePoint, len(points))
	for i, p := range points {
		wire[i] = wirePoint{M: p.Measurement, T: p.Tags, V: p.Value, N: p.Time.UnixNano()}
	}
	payload, err := json.Marshal(wire)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, headerBytes+len(payload))
	binary.BigEndian.PutUint32(buf[0:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(buf[4:8], crc32.Checksum(payload, crcTable))
	binary.BigEndian.PutUint32(buf[8:12], uint32(len(points)))
	copy(buf[headerBytes:], payload)
	return buf, nil
}

// append writes one batch at the tail and fsyncs it. On failure nothing of
// the batch stays on disk: a partly written record is cut off, and a
// segment created for it and left empty is removed.
func (s *spool) append(points []store.Point) error {
	buf, err := encodeRecord(points)
	if err != nil {
		return err
	}
	if s.tail == nil || s.tailSize > 0 && s.tailSize+int64(len(buf)) > s.segmentBytes {
		if err := s.rotate(); err != nil {
			return err
		}
	}
	_, err = s.tail.Write(buf)
	if err == nil {
		s.syncs++
		err = s.tail.Sync()
	}
	if err != nil {
		return errors.Join(err, s.abandonTail())
	}
	rec := record{segment: s.tailID, offset: s.tailSize, size: int64(len(buf) - headerBytes), points: len(points)}
	if s.cached+len(points) <= s.cacheLimit {
		rec.cached = points
		s.cached += len(points)
	}
	s.index = append(s.index, rec)
	s.tailSize += int64(len(buf))
	s.points += len(points)
	s.bytes += int64(len(buf))
	return nil
}

// abandonTail undoes a failed append: the tail is cut back to its last
// whole record and closed, so the next append starts a new segment at
// offsets the index knows; a tail left empty is removed.
func (s *spool) abandonTail() error {
	f, id := s.tail, s.tailID
	s.tail = nil
	err := errors.Join(f.Truncate(s.tailSize), f.Close())
	if s.tailSize == 0 && len(s.segments) > 0 && s.segments[len(s.segments)-1] == id {
		s.segments = s.segments[:len(s.segments)-1]
		err = errors.Join(err, os.Remove(segmentPath(s.dir, id)), syncDir(s.dir))
	}
	s.tailSize = 0
	return err
}

// rotate closes the current tail segment and starts a new one after every
// existing segment; the directory is fsynced so the new file's name is
// durable before records are acknowledged in it.
func (s *spool) rotate() error {
	if s.tail != nil {
		if err := s.tail.Close(); err != nil { // already fsynced record by record
			return err
		}
		s.tail = nil
	}
	id := firstSegment
	if n := len(s.segments); n > 0 {
		id = s.segments[n-1] + 1
	}
	path := segmentPath(s.dir, id)
	f, err := s.create(path)
	if err != nil {
		return err
	}
	if err := syncDir(s.dir); err != nil {
		return errors.Join(err, f.Close(), os.Remove(path))
	}
	s.segments = append(s.segments, id)
	s.tail, s.tailID, s.tailSize = f, id, 0
	return nil
}

// peek reads the oldest records up to maxPoints (at least one), from
// memory where cached. Damaged records are dropped from the index and
// counted in corrupt.
func (s *spool) peek(maxPoints int) ([]store.Point, int, error) {
	var out []store.Point
	n := 0
	var f *os.File
	var fid uint64
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for n < len(s.index) {
		rec := s.index[n]
		if n > 0 && len(out)+rec.points > maxPoints {
			break
		}
		if rec.cached != nil {
			out = append(out, rec.cached...)
			n++
			continue
		}
		if f == nil || fid != rec.segment {
			if f != nil {
				f.Close()
			}
			var err error
			f, err = os.Open(segmentPath(s.dir, rec.segment))
			if err != nil {
				return nil, 0, fmt.Errorf("spool: %w", err)
			}
			fid = rec.segment
		}
		points, err := readRecord(f, rec)
		if err != nil {
			// Drop the damaged record so the queue does not stall on it.
			s.corrupt += int64(rec.points)
			s.points -= rec.points
			s.index = append(s.index[:n:n], s.index[n+1:]...)
			continue
		}
		out = append(out, points...)
		n++
	}
	return out, n, nil
}

func readRecord(f *os.File, rec record) ([]store.Point, error) {
	buf := make([]byte, headerBytes+rec.size)
	if _, err := f.ReadAt(buf, rec.offset); err != nil {
		return nil, err
	}
	payload := buf[headerBytes:]
	if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(buf[4:8]) {
		return nil, fmt.Errorf("segment %d offset %d: checksum mismatch", rec.segment, rec.offset)
	}
	var wire []wirePoint
	if err := json.Unmarshal(payload, &wire); err != nil {
		return nil, err
	}
	points := make([]store.Point, len(wire))
	for i, w := range wire {
		points[i] = store.Point{Measurement: w.M, Tags: w.T, Value: w.V, Time: time.Unix(0, w.N).UTC()}
	}
	return points, nil
}

// ack drops the n oldest records, deletes segments left empty and saves the
// read position.
func (s *spool) ack(n int) error {
	if n > len(s.index) {
		return fmt.Errorf("ack of %d batches but %d spooled", n, len(s.index))
	}
	for _, rec := range s.index[:n] {
		s.points -= rec.points
		if rec.cached != nil {
			s.cached -= rec.points
		}
	}
	clear(s.index[:n])
	s.index = s.index[n:]
	// Delete every segment before the one holding the next record.
	var next uint64 = ^uint64(0)
	if len(s.index) > 0 {
		next = s.index[0].segment
	}
	var errs []error
	for len(s.segments) > 0 && s.segments[0] < next {
		id := s.segments[0]
		if id == s.tailID && s.tail != nil {
			if len(s.index) > 0 {
				break
			}
			// Spool drained: drop the tail too and start afresh next time.
			errs = append(errs, s.tail.Close())
			s.tail = nil
			s.tailSize = 0
		}
		path := segmentPath(s.dir, id)
		if info, err := os.Stat(path); err == nil {
			s.bytes -= info.Size()
		}
		errs = append(errs, os.Remove(path))
		s.segments = s.segments[1:]
	}
	if len(s.index) == 0 {
		s.bytes = 0
	}
	errs = append(errs, s.writeCursor())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

func (s *spool) close() error {
	var err error
	if s.tail != nil {
		err = s.tail.Close() // every record was fsynced by append
		s.tail = nil
	}
	if s.lock != nil {
		err = errors.Join(err, s.lock.Close()) // closing releases the flock
		s.lock = nil
	}
	return err
}
