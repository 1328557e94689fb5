package embedded

import (
	"encoding/binary"
	"math"
	"time"
)

// Bucket names. The file's whole format is these names plus the key
// encoding below.
var (
	bucketMeta         = []byte("meta")
	bucketMeasurements = []byte("measurements")
	bucketSeries       = []byte("series")
	bucketPoints       = []byte("points")
	keyFormat          = []byte("format")
)

// formatVersion is stored under meta/format; Open refuses files written in
// another layout instead of misreading them.
const formatVersion = "prewarm-embedded/1"

const (
	idLen  = 8
	keyLen = idLen + 8
)

// encodeTime maps a time to 8 bytes whose byte order is time order: Unix
// nanoseconds with the sign bit flipped, big-endian.
func encodeTime(dst []byte, t time.Time) {
	binary.BigEndian.PutUint64(dst, uint64(t.UnixNano())^(1<<63))
}

func decodeTime(src []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(src)^(1<<63))).UTC()
}

// pointKey is series id + encoded time.
func pointKey(id uint64, t time.Time) []byte {
	k := make([]byte, keyLen)
	putID(k, id)
	encodeTime(k[idLen:], t)
	return k
}

func encodeID(id uint64) []byte {
	b := make([]byte, idLen)
	putID(b, id)
	return b
}

func putID(dst []byte, id uint64) { binary.BigEndian.PutUint64(dst, id) }

func decodeID(src []byte) uint64 { return binary.BigEndian.Uint64(src) }

func putValue(dst []byte, v float64) { binary.BigEndian.PutUint64(dst, math.Float64bits(v)) }

func decodeValue(b []byte) float64 {
	return math.Float64frombits(binary.BigEndian.Uint64(b))
}
