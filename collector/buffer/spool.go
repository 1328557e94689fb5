package buffer

import (
	"bufio"
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
	"time"

	"github.com/prewarm/prewarm/store"
)

const (
	headerBytes  = 12 // length, CRC-32C, point count
	segmentExt   = ".seg"
	cursorFile   = "cursor"
	firstSegment = uint64(1) << 40 // leaves room to prepend segments below it
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// record locates one spooled batch.
type record struct {
	segment uint64
	offset  int64
	size    int64 // payload bytes
	points  int
}

// spool is the on-disk part of a Buffer; its methods are called with the
// Buffer's lock held.
type spool struct {
	dir          string
	segmentBytes int64
	segments     []uint64 // ascending
	index        []record // unacked records, oldest first
	points       int
	bytes        int64
	corrupt      int64 // points lost to damaged records
	tail         *os.File
	tailID       uint64
	tailSize     int64
	lock         *os.File // held while open; nil where locking is missing
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

func openSpool(dir string, segmentBytes int64) (*spool, error) {
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
	s.lock = lock
	return s, nil
}

// loadSpool indexes the segments a previous run left in dir.
func loadSpool(dir string, segmentBytes int64) (*spool, error) {
	s := &spool{dir: dir, segmentBytes: segmentBytes}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, segmentExt) {
			continue
		}
		id, err := strconv.ParseUint(strings.TrimSuffix(name, segmentExt), 10, 64)
		if err != nil {
			continue
		}
		s.segments = append(s.segments, id)
	}
	sort.Slice(s.segments, func(i, j int) bool { return s.segments[i] < s.segments[j] })
	starts := s.readCursor()
	for _, id := range s.segments {
		if err := s.scan(id, starts[id]); err != nil {
			return nil, err
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

// readCursor returns the saved read positions: for each segment whose first
// records were acked, the offset of its first unacked record. A missing or
// damaged cursor file means "from the start": records may then be written
// twice, never lost.
func (s *spool) readCursor() map[uint64]int64 {
	starts := map[uint64]int64{}
	raw, err := os.ReadFile(filepath.Join(s.dir, cursorFile))
	if err != nil {
		return starts
	}
	for _, line := range strings.Split(string(raw), "\n") {
		var seg uint64
		var off int64
		if _, err := fmt.Sscanf(line, "%d %d", &seg, &off); err == nil {
			starts[seg] = off
		}
	}
	return starts
}

// writeCursor saves, for each segment whose first record in the index is not
// at offset 0, where reading resumes. It writes a temporary file and renames
// it over the cursor, so a crash leaves the old cursor or the new one, never
// a torn one whose shortened offset would point inside a record.
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
	if len(buf) == 0 {
		return removeIfExists(path)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf, 0o640); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// scan indexes the records of one segment from offset start, truncating a
// torn record at its end (left by a crash mid-append).
func (s *spool) scan(id uint64, start int64) error {
	path := segmentPath(s.dir, id)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	size := info.Size()
	off := int64(0)
	r := bufio.NewReader(f)
	var hdr [headerBytes]byte
	for off+headerBytes <= size {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			break
		}
		n := int64(binary.BigEndian.Uint32(hdr[0:4]))
		pts := int(binary.BigEndian.Uint32(hdr[8:12]))
		if off+headerBytes+n > size {
			break
		}
		if _, err := r.Discard(int(n)); err != nil {
			break
		}
		if off >= start {
			s.index = append(s.index, record{segment: id, offset: off, size: n, points: pts})
			s.points += pts
		}
		off += headerBytes + n
	}
	if off < size {
		if err := f.Truncate(off); err != nil {
			return fmt.Errorf("spool: truncating torn record in %s: %w", path, err)
		}
	}
	s.bytes += off
	return nil
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

func (s *spool) append(points []store.Point) error {
	buf, err := encodeRecord(points)
	if err != nil {
		return err
	}
	if s.tail == nil || s.tailSize+int64(len(buf)) > s.segmentBytes && s.tailSize > 0 {
		if err := s.rotate(); err != nil {
			return err
		}
	}
	if _, err := s.tail.Write(buf); err != nil {
		// A short write (a full disk) leaves a torn record that later
		// records would follow at offsets the index does not know: cut it
		// off and start the next append in a new segment.
		terr := s.tail.Truncate(s.tailSize)
		cerr := s.tail.Close()
		s.tail = nil
		return errors.Join(err, terr, cerr)
	}
	s.index = append(s.index, record{segment: s.tailID, offset: s.tailSize, size: int64(len(buf) - headerBytes), points: len(points)})
	s.tailSize += int64(len(buf))
	s.points += len(points)
	s.bytes += int64(len(buf))
	return nil
}

// rotate closes the current tail segment and starts a new one after every
// existing segment.
func (s *spool) rotate() error {
	if s.tail != nil {
		if err := errors.Join(s.tail.Sync(), s.tail.Close()); err != nil {
			return err
		}
		s.tail = nil
	}
	id := firstSegment
	if n := len(s.segments); n > 0 {
		id = s.segments[n-1] + 1
	}
	f, err := os.OpenFile(segmentPath(s.dir, id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	s.segments = append(s.segments, id)
	s.tail, s.tailID, s.tailSize = f, id, 0
	return nil
}

// peek reads the oldest records up to maxPoints (at least one). Damaged
// records are dropped from the index and counted in corrupt.
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
	}
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

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// prepend writes batches older than everything spooled into a new segment
// placed before the head, so they are read first.
func (s *spool) prepend(batches [][]store.Point) error {
	id := firstSegment
	if len(s.segments) > 0 {
		id = s.segments[0] - 1
	}
	f, err := os.OpenFile(segmentPath(s.dir, id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	var recs []record
	var off int64
	for _, batch := range batches {
		buf, err := encodeRecord(batch)
		if err == nil {
			_, err = f.Write(buf)
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("spool: %w", err)
		}
		recs = append(recs, record{segment: id, offset: off, size: int64(len(buf) - headerBytes), points: len(batch)})
		off += int64(len(buf))
		s.points += len(batch)
	}
	s.bytes += off
	s.segments = append([]uint64{id}, s.segments...)
	s.index = append(recs, s.index...)
	return errors.Join(f.Sync(), f.Close(), s.writeCursor())
}

func (s *spool) close() error {
	var err error
	if s.tail != nil {
		err = errors.Join(s.tail.Sync(), s.tail.Close())
		s.tail = nil
	}
	if s.lock != nil {
		err = errors.Join(err, s.lock.Close()) // closing releases the flock
		s.lock = nil
	}
	return err
}
